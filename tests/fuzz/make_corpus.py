#!/usr/bin/env python3
"""tests/fuzz/make_corpus.py — writes the seed corpus of every harness (tests/fuzz/corpus/NAME/).

The seeds are committed; this script is how they were made (standard library only, so it
needs no PyTorch). Each is a small valid input — plus a few nearly valid ones — of the
format its harness reads, so the fuzzer starts deep inside the parser instead of
rediscovering the magic bytes. Run from anywhere:  python3 tests/fuzz/make_corpus.py
The files named finding-* and known-* are not made here: they are inputs the fuzzers found
(a fixed parser bug, or a known API crash the harness skips), kept so every run replays them.
"""
import gzip
import json
import random
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parent / "corpus"


def write(name, file, data):
    folder = ROOT / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / file).write_bytes(data.encode() if isinstance(data, str) else data)


def safetensors(tensors, metadata=None):
    """tensors: list of (name, dtype, shape, raw bytes)."""
    header, data = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def idx(type_code, shape, raw):
    return bytes([0, 0, type_code, len(shape)]) + b"".join(struct.pack(">I", s) for s in shape) + raw


def gz(data):
    return gzip.compress(data, mtime=0)


def main():
    f32 = lambda *v: struct.pack(f"<{len(v)}f", *v)
    write("safetensors", "weights.safetensors",
          safetensors([("weight", "F32", [2, 3], f32(1.5, -2, 3.25, 0, 4, -1)), ("bias", "F32", [2], f32(0.5, -0.5))]))
    write("safetensors", "dtypes.safetensors",
          safetensors([("i64", "I64", [3], struct.pack("<3q", 1, -2, 3)), ("b", "BOOL", [2], b"\x01\x00"),
                       ("f64", "F64", [], struct.pack("<d", 2.5)), ("u8", "U8", [4], b"\x00\x7f\x80\xff"),
                       ("i32", "I32", [1, 1], struct.pack("<i", -7)), ("empty", "F32", [0, 4], b"")]))
    write("safetensors", "metadata.safetensors",
          safetensors([("x", "F32", [1], f32(1))], {"format": "pt", "epoch": "3"}))
    write("safetensors", "empty.safetensors", safetensors([]))

    images = idx(0x08, [2, 3, 3], bytes(range(0, 180, 10)))
    labels = idx(0x08, [5], bytes([0, 1, 2, 9, 255]))
    write("idx", "images-u8", images)
    write("idx", "labels-u8", labels)
    write("idx", "i8", idx(0x09, [4], bytes([0, 1, 0x80, 0xFF])))
    write("idx", "i16", idx(0x0B, [2, 2], struct.pack(">4h", 1, -1, 32767, -32768)))
    write("idx", "i32", idx(0x0C, [3], struct.pack(">3i", 7, -7, 2**31 - 1)))
    write("idx", "f32", idx(0x0D, [2, 2], struct.pack(">4f", 0.5, -1, 3.25, 1e30)))
    write("idx", "f64", idx(0x0E, [1, 2], struct.pack(">2d", 0.1, -2.5)))
    write("idx", "empty-dim", idx(0x08, [0, 28, 28], b""))
    write("idx", "images-u8.gz", gz(images))
    write("idx", "labels-u8.gz", gz(labels))

    for mode in (0, 4, 18):  # whole stream, zlib levels 2 and 9
        write("idx_gzip", f"images-mode{mode}", bytes([mode]) + images)
    write("idx_gzip", "labels-mode0", bytes([0]) + labels)
    write("idx_gzip", "f32-mode0", bytes([0]) + idx(0x0D, [2], struct.pack(">2f", 1, 2)))
    for mode in (1, 7, 15):  # truncated by 1, 4 and 8 bytes
        write("idx_gzip", f"labels-mode{mode}", bytes([mode]) + labels)

    write("csv", "header.csv", "x1,x2,label\n0.5,1.5,0\n-2,3e2,1\n1.25,-0.0,2\n")
    write("csv", "no-header.csv", "1,2,3,0\n4,5,6,1\n")
    write("csv", "label-first.csv", "label,a,b,c\n1,0.1,0.2,0.3\n0,1e-3,-4,5\n\n")
    write("csv", "crlf.csv", "a,b\r\n1,0\r\n2,1\r\n")
    write("csv", "features.csv", "0.1, 0.2 ,0.3\n  1,2,3  \n")
    write("csv", "semicolons.csv", "a;b;c\n1;2;0\n3;4;1\n")
    write("csv", "trailing-comma.csv", "a,b,\n1,2,\n")
    write("csv", "bad-cell.csv", "a,b\n1,x\n")

    config = {"in_features": 2, "hidden": [3], "num_classes": 2, "dropout": 0.0, "data": "toy",
              "class_names": ["0", "1"],
              "train": {"epochs": 5, "batch_size": 2, "lr": 0.1, "momentum": 0.9, "weight_decay": 0.0,
                        "nesterov": False, "optimizer": "sgd", "seed": 123, "drop_last": False, "val_split": 0.0,
                        "workers": 0, "csv_label_column": 0, "csv_header": True}}
    write("checkpoint", "config", json.dumps(config))
    write("checkpoint", "config-fields", json.dumps(config) + "\0" + "4\0" + "20\0" + "0123456789abcdef")
    adam = json.loads(json.dumps(config))
    adam["hidden"], adam["dropout"], adam["class_names"] = [], 0.25, ["cat", "dog"]
    adam["train"].update(optimizer="adam", nesterov=True, drop_last=True, val_split=0.1, csv_header=False)
    del adam["train"]["workers"]
    write("checkpoint", "config-adam", json.dumps(adam, indent=1))
    write("checkpoint", "config-bad-epoch", json.dumps(config) + "\0" + "2abc\0" + "-5")
    float_width = json.loads(json.dumps(config))  # a float where a whole number goes (a finding)
    float_width["in_features"], float_width["train"]["epochs"] = 5.55556e48, 2.5
    write("checkpoint", "finding-float-width", json.dumps(float_width))
    write("checkpoint", "config-other-format", json.dumps(config) + "\0\0\0\0" + "ember-cli-checkpoint/2")

    rng = random.Random(16)  # programs for api_fuzzer: any bytes are a program
    for i in range(8):
        write("api", f"program-{i}", bytes(rng.randrange(256) for _ in range(48 + 16 * i)))


if __name__ == "__main__":
    main()
