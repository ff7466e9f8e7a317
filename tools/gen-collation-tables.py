#!/usr/bin/env python3
"""Generates the collation weight tables of rcop-exec (crates/exec/src/collation/data/).

Run through the MariaDB oracle (tools/check-collation-tables.sh does both):

    tools/mariadb.sh run -- python3 tools/gen-collation-tables.py [OUT_DIR]

Sources, one per table:

* general_ci  (utf8mb4_general_ci, utf8_general_ci): MariaDB 10.11's WEIGHT_STRING of every
  BMP code point under utf8mb4_general_ci (MySQL's table; TiKV's is the same).
* uca0400     (utf8mb4_unicode_ci, utf8_unicode_ci, UCA 4.0.0): MariaDB's WEIGHT_STRING of every
  BMP code point under utf8mb4_unicode_ci (primary weights), with TiKV's one deviation: a code
  point with more than 8 weights weighs 0xFFFD (only U+FDFA; MySQL gives it implicit weights).
* uca0900     (utf8mb4_0900_ai_ci, UCA 9.0.0): DUCET 9.0.0 (allkeys-9.0.0.txt as shipped by the
  PyPI package pyuca 1.2), primary weights of single code points, variable weights kept
  (non-ignorable), contractions ignored, expansions cut at 8 weights (all as TiKV), implicit
  weights of UCA 9.0.0 for code points DUCET does not list (core Han FB40, other Han FB80,
  Tangut FB00, the rest FBC0), for code points below 0x2CEA1 (TiKV's table; above it the engine
  computes FBC0 implicit weights at run time, as TiKV does).
* gbk_chinese_ci: MariaDB 10.11's WEIGHT_STRING under gbk_chinese_ci (MySQL's sort_order_gbk
  and gbksortorder; TiDB's table derives from MySQL's) of every GBK *code*: the bytes 00..7F
  and every two-byte code 81..FE x 40..7E/80..FE. It is keyed by code, not by character: the
  engine maps a character to its GBK code with the gbk_bin table (tools/gen-gb-tables, the
  WHATWG/Go encoder TiKV uses) and then weighs the code, so MariaDB's own Unicode-to-GBK
  mapping (which differs for U+20AC, the private-use area, U+4983 ...) is never used. The
  single byte 0x80 (U+20AC in TiKV's GBK) weighs 0x80 (sort_order_gbk is the identity above
  0x7F); every other code weighs '?' (0x3F; never looked up).

The gbk_bin and gb18030_bin tables come from tools/gen-gb-tables (Rust, encoding_rs).

Output format (little-endian), for a table NAME covering code points [0, 256 * pages):

* NAME.idx   u16 per page of 256 code points: the index of its entries in NAME.page
  (identical pages are stored once).
* NAME.page  256 entries per stored page. UCA tables: u32 per code point: 0 = no weight
  (ignorable); 0xF000_0000 | base = implicit weights from `base`; else (len << 24) | offset:
  `len` weights at `offset` in NAME.pool. general_ci: u16 weight per code point.
* NAME.pool  u16 weights (UCA tables only).

Deterministic: the same inputs give byte-identical files.
"""

import os
import struct
import subprocess
import sys

IMPLICIT = 0xF000_0000
MAX_WEIGHTS = 8
UCA0900_END = 0x2CEA1


def query(sql):
    cli = os.environ.get("MARIADB_CLI")
    if not cli:
        sys.exit("gen-collation-tables: run me through tools/mariadb.sh run -- ...")
    out = subprocess.run(cli.split() + ["-e", sql], check=True, capture_output=True, text=True)
    return [line.split("\t") for line in out.stdout.splitlines()]


def bmp_weights(collation):
    """{code point: [u16 weights]} for every BMP scalar value, from MariaDB."""
    rows = query(
        "SELECT seq, HEX(WEIGHT_STRING(CONVERT(CHAR(seq USING utf32) USING utf8mb4) "
        f"COLLATE {collation})) FROM seq_0_to_65535 WHERE seq < 55296 OR seq > 57343"
    )
    table = {}
    for cp, hexw in rows:
        raw = bytes.fromhex(hexw)
        table[int(cp)] = [int.from_bytes(raw[i : i + 2], "big") for i in range(0, len(raw), 2)]
    if len(table) != 0x10000 - 0x800:
        sys.exit(f"gen-collation-tables: {collation}: {len(table)} code points from MariaDB")
    return table


def implicit(cp, base):
    if base == 0xFB00:
        return [0xFB00, ((cp - 0x17000) & 0x7FFF) | 0x8000]
    return [base + (cp >> 15), (cp & 0x7FFF) | 0x8000]


def implicit_base(cp, weights):
    """The implicit base when `weights` are exactly the implicit weights of `cp`."""
    if len(weights) != 2:
        return None
    for base in (0xFB00, 0xFB40, 0xFB80, 0xFBC0):
        if implicit(cp, base) == weights:
            return base
    return None


def write_uca(out_dir, name, ncp, weights_of):
    pool = []
    pool_at = {}
    pages = []
    page_at = {}
    idx = []
    for page in range(ncp // 256):
        entries = []
        for cp in range(page * 256, page * 256 + 256):
            w = weights_of(cp)
            base = implicit_base(cp, w) if w else None
            if not w:
                entries.append(0)
            elif base is not None:
                entries.append(IMPLICIT | base)
            else:
                key = tuple(w)
                if key not in pool_at:
                    pool_at[key] = len(pool)
                    pool.extend(w)
                off = pool_at[key]
                assert 1 <= len(w) <= MAX_WEIGHTS and off < (1 << 24)
                entries.append((len(w) << 24) | off)
        key = tuple(entries)
        if key not in page_at:
            page_at[key] = len(pages)
            pages.append(entries)
        idx.append(page_at[key])
    with open(os.path.join(out_dir, f"{name}.idx"), "wb") as f:
        f.write(struct.pack(f"<{len(idx)}H", *idx))
    with open(os.path.join(out_dir, f"{name}.page"), "wb") as f:
        for p in pages:
            f.write(struct.pack("<256I", *p))
    with open(os.path.join(out_dir, f"{name}.pool"), "wb") as f:
        f.write(struct.pack(f"<{len(pool)}H", *pool))


def gen_general_ci(out_dir):
    table = bmp_weights("utf8mb4_general_ci")
    pages = []
    page_at = {}
    idx = []
    for page in range(256):
        entries = []
        for cp in range(page * 256, page * 256 + 256):
            w = table.get(cp, [cp])  # surrogates: never looked up
            assert len(w) == 1, (cp, w)
            entries.append(w[0])
        if entries == list(range(page * 256, page * 256 + 256)):
            idx.append(0xFFFF)
            continue
        key = tuple(entries)
        if key not in page_at:
            page_at[key] = len(pages)
            pages.append(entries)
        idx.append(page_at[key])
    with open(os.path.join(out_dir, "general_ci.idx"), "wb") as f:
        f.write(struct.pack("<256H", *idx))
    with open(os.path.join(out_dir, "general_ci.page"), "wb") as f:
        for p in pages:
            f.write(struct.pack("<256H", *p))


def gen_uca0400(out_dir):
    table = bmp_weights("utf8mb4_unicode_ci")
    # TiKV (TiDB's generator from allkeys-4.0.0.txt) weighs a code point of more than 8
    # weights 0xFFFD; U+FDFA (18 weights) is the only one, which MySQL/MariaDB give implicit
    # weights instead.
    table[0xFDFA] = [0xFFFD]

    def weights(cp):
        return table.get(cp, [])

    write_uca(out_dir, "uca0400", 0x10000, weights)


def allkeys_path():
    try:
        import pyuca  # noqa: F401
    except ImportError:
        sys.exit("gen-collation-tables: needs the PyPI package pyuca==1.2 (DUCET files)")
    import pyuca

    return os.path.join(os.path.dirname(pyuca.__file__), "allkeys-9.0.0.txt")


def in_ranges(cp, ranges):
    return any(lo <= cp <= hi for lo, hi in ranges)


# Unicode 9.0.0 Unified_Ideograph ranges, as UCA 9.0.0 section 10.1.3 splits them.
CORE_HAN = [(0x4E00, 0x9FD5), (0xFA0E, 0xFA0F), (0xFA11, 0xFA11), (0xFA13, 0xFA14),
            (0xFA1F, 0xFA1F), (0xFA21, 0xFA21), (0xFA23, 0xFA24), (0xFA27, 0xFA29)]
OTHER_HAN = [(0x3400, 0x4DB5), (0x20000, 0x2A6D6), (0x2A700, 0x2B734), (0x2B740, 0x2B81D),
             (0x2B820, 0x2CEA1)]
TANGUT = [(0x17000, 0x187EC), (0x18800, 0x18AF2)]


def gen_uca0900(out_dir):
    keys = {}
    with open(allkeys_path(), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line or line.startswith("@"):
                continue
            cps, _, elems = line.partition(";")
            cps = cps.split()
            if len(cps) != 1:
                continue  # contractions: TiKV weighs code points one by one
            prim = []
            for ce in elems.strip().strip("[]").split("]["):
                p = int(ce[1:].split(".")[0], 16)
                if p:
                    prim.append(p)
            keys[int(cps[0], 16)] = prim[:MAX_WEIGHTS]

    def weights(cp):
        if cp in keys:
            return keys[cp]
        if 0xD800 <= cp <= 0xDFFF:
            return []
        if in_ranges(cp, CORE_HAN):
            return implicit(cp, 0xFB40)
        if in_ranges(cp, OTHER_HAN):
            return implicit(cp, 0xFB80)
        if in_ranges(cp, TANGUT):
            return implicit(cp, 0xFB00)
        return implicit(cp, 0xFBC0)

    # Pages up to the one holding UCA0900_END - 1; the engine checks the exact bound.
    ncp = (UCA0900_END + 255) // 256 * 256
    write_uca(out_dir, "uca0900", ncp, weights)


def gen_gbk_chinese_ci(out_dir):
    rows = query(
        "SELECT seq, HEX(WEIGHT_STRING(CAST(UNHEX(LPAD(HEX(seq), IF(seq < 256, 2, 4), '0')) "
        "AS CHAR CHARACTER SET gbk) COLLATE gbk_chinese_ci)) FROM seq_0_to_65535 "
        "WHERE seq < 128 OR ((seq >> 8) BETWEEN 0x81 AND 0xFE "
        "AND (seq & 255) BETWEEN 0x40 AND 0xFE AND (seq & 255) <> 0x7F)"
    )
    codes = [0x3F] * 0x10000
    for code, hexw in rows:
        code, w = int(code), int(hexw, 16)
        want_len = 2 if code < 128 else 4
        if len(hexw) != want_len or (code >= 256 and w == 0x3F):
            sys.exit(f"gen-collation-tables: gbk code {code:04X}: weight {hexw!r}")
        codes[code] = w
    if len(rows) != 128 + 126 * 190:
        sys.exit(f"gen-collation-tables: gbk_chinese_ci: {len(rows)} codes from MariaDB")
    codes[0x80] = 0x80
    pages = []
    page_at = {}
    idx = []
    for page in range(256):
        key = tuple(codes[page * 256 : page * 256 + 256])
        if key not in page_at:
            page_at[key] = len(pages)
            pages.append(key)
        idx.append(page_at[key])
    with open(os.path.join(out_dir, "gbk_chinese_ci.idx"), "wb") as f:
        f.write(struct.pack("<256H", *idx))
    with open(os.path.join(out_dir, "gbk_chinese_ci.page"), "wb") as f:
        for p in pages:
            f.write(struct.pack("<256H", *p))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "crates", "exec", "src", "collation", "data")
    out_dir = sys.argv[1] if len(sys.argv) > 1 else default
    os.makedirs(out_dir, exist_ok=True)
    gen_general_ci(out_dir)
    gen_uca0400(out_dir)
    gen_uca0900(out_dir)
    gen_gbk_chinese_ci(out_dir)


if __name__ == "__main__":
    main()
