"""Writes the auth fuzzer's starting corpus from fuzz/auth_seeds.txt.

Seeds are separated by lines of "----". A seed's first line is the SASL
PLAIN token, with \\0 for NUL (or "null" for a null token); it becomes an
AUTH_RESPONSE body ([bytes]: a 4-byte length, then the token). The other
lines are CQL statements, kept as they are.
Usage: seed_auth_corpus.py SEEDS_FILE CORPUS_DIR"""
import os
import struct
import sys


def main(seeds_path, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with open(seeds_path) as f:
        seeds = [s.strip("\n") for s in f.read().split("\n----\n")]
    for i, seed in enumerate(s for s in seeds if s):
        first, _, rest = seed.partition("\n")
        if first == "null":
            body = struct.pack(">i", -1)
        else:
            token = first.encode().replace(b"\\0", b"\0")
            body = struct.pack(">i", len(token)) + token
        with open(os.path.join(out_dir, "seed_%03d" % i), "wb") as out:
            out.write(body + b"\n" + rest.encode())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
