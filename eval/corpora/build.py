#!/usr/bin/env python3
"""Builds evaluation corpora in the BEIR layout from text that a Debian machine and Python carry.

    python3 eval/corpora/build.py OUT_DIR [--pydoc DIR] [--man DIR] [--stdlib DIR]

Writes OUT_DIR/<name>/{corpus.jsonl,queries.jsonl,qrels/test.tsv} for:

- python-faq (question-style): the Python FAQ's questions; the relevant document is the answer
  under each question (without the question), among every section of the Python documentation
  (library reference, tutorial, how-tos). Needs the reStructuredText sources of the Python docs,
  e.g. Debian's python3.11-doc (`apt-get download python3.11-doc && dpkg-deb -x python3.11-doc_*.deb X`,
  then --pydoc X/usr/share/doc/python3.11/html/_sources).
- manpages (prose): the one-line description of a manual page (its NAME line) as the query, the
  page's text without that line as the document (section 1 and 8 pages under --man).
- python-stdlib (code): the first sentence of a function's docstring as the query, the function's
  source without its docstring as the document (the Python standard library under --stdlib).

Each set is built whole and deterministically; `npm run eval` samples it.
"""
import argparse
import ast
import gzip
import json
import os
import re
import sys
import sysconfig


def write(out, name, docs, queries, qrels):
    folder = os.path.join(out, name)
    os.makedirs(os.path.join(folder, "qrels"), exist_ok=True)
    with open(os.path.join(folder, "corpus.jsonl"), "w") as f:
        for _id, title, text in docs:
            f.write(json.dumps({"_id": _id, "title": title, "text": text}) + "\n")
    with open(os.path.join(folder, "queries.jsonl"), "w") as f:
        for _id, text in queries:
            f.write(json.dumps({"_id": _id, "text": text}) + "\n")
    with open(os.path.join(folder, "qrels", "test.tsv"), "w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q, d in qrels:
            f.write(f"{q}\t{d}\t1\n")
    print(f"{name}: {len(docs)} documents, {len(queries)} queries", file=sys.stderr)


HEADING = re.compile(r"^([=\-~^*+#\"'`])\1{2,}\s*$")


def rst_sections(text):
    """(heading, body) pairs of a reStructuredText file, split at every underlined heading."""
    lines = text.split("\n")
    sections, heading, body = [], None, []
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and not HEADING.match(line) and HEADING.match(nxt) and len(nxt.strip()) >= len(line.strip()):
            sections.append((heading, "\n".join(body)))
            heading, body = line.strip(), []
            i += 2
            continue
        if not HEADING.match(line):
            body.append(line)
        i += 1
    sections.append((heading, "\n".join(body)))
    return sections


def clean_rst(body):
    body = re.sub(r":[a-z:]+:`~?([^`<]*?)(\s*<[^>]*>)?`", r"\1", body)
    body = re.sub(r"`([^`<]*?)\s*<[^>]*>`_+", r"\1", body)
    body = re.sub(r"^\s*\.\. .*$", "", body, flags=re.M)
    body = re.sub(r"^\s*:[a-z-]+:.*$", "", body, flags=re.M)
    return re.sub(r"\n{3,}", "\n\n", body).strip()


def python_faq(root):
    docs, queries, qrels = [], [], []
    for folder, _, files in sorted(os.walk(root)):
        for file in sorted(files):
            if not file.endswith(".rst.txt"):
                continue
            rel = os.path.relpath(os.path.join(folder, file), root)[: -len(".rst.txt")]
            if rel.startswith(("whatsnew", "c-api", "distutils", "includes")):
                continue
            with open(os.path.join(folder, file)) as f:
                sections = rst_sections(f.read())
            for n, (heading, body) in enumerate(sections):
                text = clean_rst(body)
                if len(text.split()) < 15:
                    continue
                doc_id = f"{rel}#{n}"
                docs.append((doc_id, "", text))
                if rel.startswith("faq/") and heading and heading.endswith("?"):
                    queries.append((doc_id, heading))
                    qrels.append((doc_id, doc_id))
    return docs, queries, qrels


# Requests whose arguments are text to show (man and mdoc font and list macros); others are dropped.
TEXT_MACROS = {"B", "I", "BI", "BR", "IB", "IR", "RB", "RI", "SB", "SM", "TP", "IP", "HP", "SS", "Sh", "Ss",
               "Nm", "Nd", "Op", "Fl", "Ar", "Cm", "Pa", "Xr", "It", "Em", "Dq", "Sq", "Ql", "Li", "Ev", "Va"}


def man_text(path):
    with gzip.open(path, "rt", errors="replace") as f:
        raw = f.read()
    name, lines, section = None, [], None
    for line in raw.split("\n"):
        if line.startswith(".so "):
            return None, None
        if line.startswith((".SH", ".Sh")):
            section = line[3:].strip().strip('"').upper()
            continue
        if line.startswith((".\\\"", "'\\\"", '.\\"')):
            continue
        if section is None:
            continue
        text = line
        if text.startswith((".", "'")):
            macro = re.match(r"^[.']\s*([A-Za-z]*)", text).group(1)
            if macro not in TEXT_MACROS:
                continue
            text = re.sub(r"^[.']\s*[A-Za-z]+\s*", "", text)
        text = re.sub(r"\\f[BIRP]|\\f\(..|\\s[+-]?\d|\\\(..|\\\*.|\\&|\\e", "", text).replace("\\-", "-").replace("\\", "")
        text = text.strip().strip('"')
        if not text:
            continue
        if section == "NAME" and name is None:
            name = text
            continue
        if section == "NAME":
            name += " " + text
            continue
        lines.append(text)
    if not name or " - " not in name:
        return None, None
    return name.split(" - ", 1)[1].strip(), " ".join(lines)


def manpages(root):
    docs, queries, qrels = [], [], []
    seen = set()
    for sub in ("man1", "man8"):
        folder = os.path.join(root, sub)
        for file in sorted(os.listdir(folder)):
            # The Google Cloud SDK ships thousands of near-identical pages: left out so that one tool does not make the set.
            if not file.endswith(".gz") or file.startswith("gcloud"):
                continue
            description, text = man_text(os.path.join(folder, file))
            if not description or len(text.split()) < 30:
                continue
            doc_id = f"{sub}/{file[:-3]}"
            docs.append((doc_id, "", text[:3000]))
            # A description that several pages share (one tool's many commands) names no one page.
            if len(description.split()) >= 3 and description.lower() not in seen:
                seen.add(description.lower())
                queries.append((doc_id, description))
                qrels.append((doc_id, doc_id))
    return docs, queries, qrels


def python_stdlib(root):
    docs, queries, qrels = [], [], []
    for folder, dirs, files in sorted(os.walk(root)):
        dirs[:] = sorted(d for d in dirs if d not in ("test", "tests", "site-packages", "idlelib", "lib2to3", "__pycache__"))
        for file in sorted(files):
            if not file.endswith(".py"):
                continue
            path = os.path.join(folder, file)
            try:
                with open(path) as f:
                    source = f.read()
                tree = ast.parse(source)
            except (SyntaxError, UnicodeDecodeError):
                continue
            lines = source.split("\n")
            for node in ast.walk(tree):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name.startswith("_"):
                    continue
                doc = ast.get_docstring(node)
                if not doc or not isinstance(node.body[0], ast.Expr):
                    continue
                first = re.split(r"(?<=\.)\s|\n\n", doc.strip(), maxsplit=1)[0].replace("\n", " ").strip()
                if len(first.split()) < 4:
                    continue
                ds = node.body[0]
                code = lines[node.lineno - 1 : ds.lineno - 1] + lines[ds.end_lineno : node.end_lineno]
                text = "\n".join(code)
                if len(node.body) < 2 or len(text) > 4000:
                    continue
                doc_id = f"{os.path.relpath(path, root)}:{node.lineno}"
                docs.append((doc_id, "", text))
                queries.append((doc_id, first))
                qrels.append((doc_id, doc_id))
    return docs, queries, qrels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--pydoc")
    parser.add_argument("--man", default="/usr/share/man")
    parser.add_argument("--stdlib", default=sysconfig.get_paths()["stdlib"])
    args = parser.parse_args()
    if args.pydoc:
        write(args.out, "python-faq", *python_faq(args.pydoc))
    write(args.out, "manpages", *manpages(args.man))
    write(args.out, "python-stdlib", *python_stdlib(args.stdlib))


main()
