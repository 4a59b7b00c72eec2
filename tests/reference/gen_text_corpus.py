"""tests/reference/gen_text_corpus.py — what Python makes of ember's text corpora (issue 21).

Writes text_corpus.json, read by tests/data/test_text_corpus.cpp: for the UTF-8 fixture
tests/data/fixtures/words-utf8.txt and for the default corpus /usr/share/dict/words (Debian's
wamerican), the character vocabulary as Python's sorted(set(text)) gives it (code points),
every id of the fixture, and nanoGPT's split sizes int(n * 0.9) / n - int(n * 0.9).
Run: /work/venv/bin/python tests/reference/gen_text_corpus.py
"""
import os

from reflib import HERE, write


def corpus(path, keep_ids):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    ids = [index[c] for c in text]
    n = len(ids)
    out = {"code_points": [ord(c) for c in chars], "length": n, "train": int(n * 0.9), "val": n - int(n * 0.9),
           "first_ids": ids[:64], "sum_ids": sum(ids)}
    if keep_ids:
        out["ids"] = ids
    return out


if __name__ == "__main__":
    fixture = os.path.join(HERE, "..", "data", "fixtures", "words-utf8.txt")
    write("text_corpus.json", {"fixture": corpus(fixture, True), "dict_words": corpus("/usr/share/dict/words", False)})
