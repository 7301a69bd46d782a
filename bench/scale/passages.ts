import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { loadBeir } from '../../eval/scifact.js';

/**
 * Real text at scale for the semantic index: cuts the documents of BEIR folders into passages of
 * whole sentences or lines packed up to MAX_CHARS characters (a longer one stays whole, alone) and
 * writes them as JSON lines for `ctx ingest --jsonl`, one passage a document, so that each is one
 * chunk. The five corpora of `npm run eval -- --all` give 115,705 passages of about 300 characters.
 *
 *   npx tsx bench/scale/passages.ts OUT.jsonl BEIR_DIR...
 */
const MAX_CHARS = Number(process.env.CTX_BENCH_PASSAGE_CHARS ?? 400);

const passagesOf = (text: string, maxChars = MAX_CHARS): string[] => {
  const passages: string[] = [];
  let current = '';
  for (const unit of text.split(/(?<=[.!?])\s+|\n+/)) {
    if (!unit.trim()) continue;
    if (current && current.length + unit.length > maxChars) {
      passages.push(current);
      current = '';
    }
    current += (current ? ' ' : '') + unit;
  }
  if (current.trim()) passages.push(current);
  return passages;
};

const main = async ([out, ...dirs]: string[]) => {
  if (!out || dirs.length === 0) throw new Error('usage: passages.ts OUT.jsonl BEIR_DIR...');
  const file = createWriteStream(out);
  let count = 0;
  for (const dir of dirs) {
    const corpus = path.basename(dir);
    for (const doc of loadBeir(dir).documents) {
      const passages = passagesOf([doc.title, doc.text].filter(Boolean).join('\n'));
      for (const [i, body] of passages.entries()) {
        const line = JSON.stringify({ source_id: `${corpus}/${doc._id}#${i}`, title: doc.title || doc._id, body });
        if (!file.write(`${line}\n`)) await once(file, 'drain');
        count++;
      }
    }
  }
  file.end();
  await once(file, 'finish');
  console.log(`${count} passages → ${out}`);
};

await main(process.argv.slice(2));
