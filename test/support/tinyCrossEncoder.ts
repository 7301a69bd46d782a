import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BGE_TOKENIZER_CONFIG } from '../../infra/embeddings/modelDownload.js';

/**
 * A real, tiny cross-encoder laid out as transformers.js reads one: a WordPiece tokenizer and an
 * ONNX graph whose logits are predictable. Each word has a weight per label (0 for any word not
 * given); a pair's logits are the sums of the weights of every token in the query and the passage:
 *
 *   logits[b, l] = Σ_s weights[input_ids[b, s], l] · attention_mask[b, s]
 *
 * The ONNX protobuf is written by hand: ModelProto, GraphProto, NodeProto and TensorProto need a
 * few fields each.
 */

// Protobuf wire format: varints, and length-delimited fields (strings, bytes, messages).
const varint = (value: number | bigint): Buffer => {
  let v = BigInt(value);
  const bytes: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v > 0n);
  return Buffer.from(bytes);
};
const intField = (field: number, value: number | bigint) => Buffer.concat([varint(field << 3), varint(value)]);
const bytesField = (field: number, value: Buffer | string) => {
  const data = typeof value === 'string' ? Buffer.from(value) : value;
  return Buffer.concat([varint((field << 3) | 2), varint(data.length), data]);
};
const message = (...fields: Buffer[]) => Buffer.concat(fields);

const FLOAT = 1;
const INT64 = 7;

/** TensorProto: dims (1), data_type (2), name (8), raw_data (9, little-endian). */
const tensor = (name: string, dims: number[], type: typeof FLOAT | typeof INT64, values: number[]) => {
  const raw = Buffer.alloc(values.length * (type === FLOAT ? 4 : 8));
  values.forEach((v, i) => (type === FLOAT ? raw.writeFloatLE(v, i * 4) : raw.writeBigInt64LE(BigInt(v), i * 8)));
  return message(...dims.map((d) => intField(1, d)), intField(2, type), bytesField(8, name), bytesField(9, raw));
};

/** ValueInfoProto with a tensor type: a dimension is a size or a symbolic name. */
const valueInfo = (name: string, type: number, dims: (number | string)[]) =>
  message(
    bytesField(1, name),
    bytesField(
      2,
      bytesField(
        1,
        message(
          intField(1, type),
          bytesField(
            2,
            message(...dims.map((d) => bytesField(1, typeof d === 'number' ? intField(1, d) : bytesField(2, d)))),
          ),
        ),
      ),
    ),
  );

/** NodeProto: inputs (1), outputs (2), name (3), op_type (4), attributes (5, INT ones only here). */
const node = (op: string, inputs: string[], outputs: string[], ints: Record<string, number> = {}) =>
  message(
    ...inputs.map((i) => bytesField(1, i)),
    ...outputs.map((o) => bytesField(2, o)),
    bytesField(3, `${op}_${outputs[0]}`),
    bytesField(4, op),
    ...Object.entries(ints).map(([name, i]) => bytesField(5, message(bytesField(1, name), intField(3, i), intField(20, 2)))),
  );

/** The ONNX model (opset 13) of the formula above, for a vocabulary of `vocabSize` and a table of `labels` weights a token. */
export const crossEncoderOnnx = (table: readonly (readonly number[])[]): Buffer => {
  const labels = table[0]!.length;
  const graph = message(
    bytesField(1, node('Gather', ['weights', 'input_ids'], ['token_logits'], { axis: 0 })),
    bytesField(1, node('Cast', ['attention_mask'], ['mask'], { to: FLOAT })),
    bytesField(1, node('Unsqueeze', ['mask', 'last_axis'], ['mask3'])),
    bytesField(1, node('Mul', ['token_logits', 'mask3'], ['counted'])),
    bytesField(1, node('ReduceSum', ['counted', 'sequence_axis'], ['logits'], { keepdims: 0 })),
    bytesField(2, 'tiny-cross-encoder'),
    bytesField(5, tensor('weights', [table.length, labels], FLOAT, table.flat())),
    bytesField(5, tensor('last_axis', [1], INT64, [2])),
    bytesField(5, tensor('sequence_axis', [1], INT64, [1])),
    ...['input_ids', 'attention_mask', 'token_type_ids'].map((name) =>
      bytesField(11, valueInfo(name, INT64, ['batch_size', 'sequence_length'])),
    ),
    bytesField(12, valueInfo('logits', FLOAT, ['batch_size', labels])),
  );
  return message(
    intField(1, 8), // ir_version
    bytesField(2, 'context-ledger tests'),
    bytesField(7, graph),
    bytesField(8, message(bytesField(1, ''), intField(2, 13))), // opset_import
  );
};

const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] as const;

/** A BERT WordPiece tokenizer.json for whole lowercase words; any other word is [UNK]. */
const tokenizerJson = (vocab: Readonly<Record<string, number>>) => {
  const special = (token: string) => ({ SpecialToken: { id: token, type_id: 0 } });
  const sequence = (id: 'A' | 'B', type_id: number) => ({ Sequence: { id, type_id } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content) => ({
      id: vocab[content],
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]'), sequence('A', 0), special('[SEP]')],
      pair: [
        special('[CLS]'),
        sequence('A', 0),
        special('[SEP]'),
        sequence('B', 1),
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: Object.fromEntries(
        ['[CLS]', '[SEP]'].map((token) => [token, { id: token, ids: [vocab[token]], tokens: [token] }]),
      ),
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab,
    },
  };
};

export interface TinyCrossEncoder {
  folder: string;
  /** The model's logits for a (query, passage) pair, as the graph computes them. */
  logits(query: string, passage: string): number[];
}

/**
 * Writes the model into `folder`: config.json, tokenizer.json, tokenizer_config.json and
 * `onnx/<weightsFile>`. `weights` gives a word's logit, or one per label (two labels: the second is
 * the positive class).
 */
export const writeTinyCrossEncoder = (
  folder: string,
  weights: Readonly<Record<string, number | readonly number[]>>,
  weightsFile: 'model.onnx' | 'model_quantized.onnx' = 'model.onnx',
): TinyCrossEncoder => {
  const words = Object.keys(weights);
  const vocab = Object.fromEntries([...SPECIAL, ...words].map((token, id) => [token, id]));
  const rows = Object.values(weights).map((w) => (typeof w === 'number' ? [w] : [...w]));
  const labels = rows[0]?.length ?? 1;
  const table = [...SPECIAL.map(() => new Array<number>(labels).fill(0)), ...rows];
  const id2label = Object.fromEntries(table[0]!.map((_, i) => [String(i), `LABEL_${i}`]));
  const files: Record<string, unknown> = {
    'config.json': {
      model_type: 'bert',
      architectures: ['BertForSequenceClassification'],
      vocab_size: table.length,
      hidden_size: 4,
      id2label,
      label2id: Object.fromEntries(Object.entries(id2label).map(([i, label]) => [label, Number(i)])),
    },
    'tokenizer.json': tokenizerJson(vocab),
    'tokenizer_config.json': BGE_TOKENIZER_CONFIG,
  };
  mkdirSync(path.join(folder, 'onnx'), { recursive: true });
  for (const [file, value] of Object.entries(files)) writeFileSync(path.join(folder, file), JSON.stringify(value, null, 2));
  writeFileSync(path.join(folder, 'onnx', weightsFile), crossEncoderOnnx(table));
  const wordsOf = (text: string) => text.toLowerCase().match(/[a-z0-9]+|[^\sa-z0-9]/g) ?? [];
  return {
    folder,
    logits: (query, passage) =>
      [...wordsOf(query), ...wordsOf(passage)].reduce(
        (sum, word) => sum.map((s, l) => s + (table[vocab[word] ?? 1]![l] ?? 0)),
        new Array<number>(labels).fill(0),
      ),
  };
};
