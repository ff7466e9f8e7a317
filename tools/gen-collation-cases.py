#!/usr/bin/env python3
"""Writes testdata/collation/cases.tsv: comparisons, sort keys and LIKE results of MariaDB 10.11
(the MySQL-compatible oracle) for the collations it shares with TiKV, read by
crates/exec/tests/collation.rs. Run through the oracle:

    tools/mariadb.sh run -- python3 tools/gen-collation-cases.py [OUT_FILE]

Columns (tab-separated, strings as hex):
  cmp   collation  a  b  mysql  tikv  WEIGHT_STRING(a without trailing spaces) or -

`mysql` is MariaDB's STRCMP(a, b). `tikv` is what TiKV answers, which the engine must match:
the order of the sort keys, i.e. STRCMP of MariaDB's weight strings (the bytes, for _bin) of a
and b with trailing spaces removed. The two differ where MySQL's PAD SPACE pads the shorter
string with spaces and TiKV does not: 'a' > 'a\t' in MySQL (the pad space outweighs the tab)
but 'a' < 'a\t' in TiKV (a prefix sorts first).
  like  collation  text  pattern  text LIKE pattern (escape '\\')

utf8mb4_0900_ai_ci is not in MariaDB; its expectations are unit tests from TiKV's data.

gbk_bin and gbk_chinese_ci: MariaDB converts each string to its own gbk first, whose Unicode
mapping is not TiKV's (Go's WHATWG GBK encoder: crates/exec/src/collation/data/gbk_bin.*, from
tools/gen-gb-tables). A string whose MariaDB gbk bytes differ from TiKV's is left out of the
gbk rows, and named in a comment row (e.g. U+20AC: TiKV 0x80, MariaDB has no euro).
gb18030_bin is not in MariaDB 10.11; its expectations are unit tests from TiKV's.
"""

import os
import struct
import subprocess
import sys

STRINGS = [
    "", "a", "A", "a ", "a  ", "a\t", "b", "B", "ab", "aB", "a b", "aa ", "abc", "abd",
    "café", "cafe", "CAFÉ", "cAfe ", "ß", "ss", "s", "À", "Å", "æ", "ae", "Æ", "ø", "o",
    "ı", "i", "İ", "ﬀ", "ff", "😃", "😜", "𝌆", "中", "文", "中文", "¼", "1/4", "ǅ", "dž",
    "Ω", "ω", "Ⅻ", "xii", "ｶ", "カ", "€", "-", "_", "%", "\u00a0", "\u200b",
    # GBK: TiKV's own test strings, Han characters in GBK order and not, full-width forms,
    # pinyin vowels, a character GBK lacks, private use and U+4983 (mapped by WHATWG only).
    "啊", "把", "汉字", "一", "丁", "齐", "ʩ", "F", "ａ", "Ａ", "ā", "á", "ǎ", "〇", "　", "～",
    "~", "[", "\\", "]", "\ue000", "\u4983", "\ufe10",
]
LIKE = [
    ("abc", "a_c"), ("ABC", "a_c"), ("abc", "A%"), ("café", "CAFE"), ("café", "caf_"),
    ("CAFÉ", "%é"), ("résumé", "%SUM%"), ("ß", "s"), ("ss", "ß"), ("ß", "_"), ("😃", "_"),
    ("😃x", "_X"), ("a", "a "), ("a ", "a"), ("a ", "a_"), ("中文", "中_"), ("中文", "%文"),
    ("ﬀ", "ff"), ("ﬀ", "_"), ("a%b", "a\\%b"), ("axb", "a\\%b"), ("a_b", "a\\_b"),
    ("aXb", "a\\_b"), ("Straße", "strasse"), ("Straße", "STRA_E"), ("", "%"), ("", "_"),
    ("汉字", "汉_"), ("汉字", "_"), ("ａ", "Ａ"), ("Abc", "a%"), ("一丁", "%丁"), ("~", "Y"),
    # A pattern space is one character, not trimmed away: U+3000 weighs as a space under
    # unicode_ci, an ignorable U+0001 weighs nothing (TiKV's like compares with force_no_pad).
    ("a　a", "a a"), ("a\x01", "a "), ("a ", "a\x01"), ("a\x01b", "a b"),
]
COLLATIONS = ["utf8mb4_general_ci", "utf8mb4_unicode_ci", "utf8mb4_bin", "gbk_bin",
              "gbk_chinese_ci"]
WEIGHTS = {"utf8mb4_general_ci", "utf8mb4_unicode_ci", "gbk_chinese_ci"}
GBK = {"gbk_bin", "gbk_chinese_ci"}


def lit(s, coll):
    u = f"CONVERT(X'{s.encode().hex()}' USING utf8mb4)"
    if coll in GBK:
        u = f"CONVERT({u} USING gbk)"
    return f"{u} COLLATE {coll}"


def tikv_gbk(s):
    """TiKV's GBK bytes of `s` (the committed gbk_bin table), '?' for what GBK lacks."""
    here = os.path.dirname(os.path.abspath(__file__))
    data = os.path.join(here, "..", "crates", "exec", "src", "collation", "data")
    with open(os.path.join(data, "gbk_bin.idx"), "rb") as f:
        idx = struct.unpack("<256H", f.read())
    with open(os.path.join(data, "gbk_bin.page"), "rb") as f:
        pages = f.read()
    out = b""
    for ch in s:
        cp = ord(ch)
        code = 0x3F
        if cp <= 0xFFFF:
            at = (idx[cp >> 8] * 256 + (cp & 0xFF)) * 2
            code = struct.unpack("<H", pages[at : at + 2])[0]
        out += bytes([code]) if code < 0x100 else code.to_bytes(2, "big")
    return out


def gbk_agrees():
    """The strings (of both lists) MariaDB's gbk encodes as TiKV does, and the others."""
    every = list(dict.fromkeys(STRINGS + [x for pair in LIKE for x in pair]))
    res = query(";\n".join(
        f"SELECT HEX(CONVERT(CONVERT(X'{s.encode().hex()}' USING utf8mb4) USING gbk))"
        for s in every) + ";\n")
    ok, differ = [], []
    for s, (h,) in zip(every, res):
        (ok if bytes.fromhex(h) == tikv_gbk(s) else differ).append((s, h))
    return [s for s, _ in ok], differ


def key(s, coll):
    """TiKV's sort key of `s` as a binary string."""
    trimmed = f"TRIM(TRAILING ' ' FROM {lit(s, coll)})"
    if coll in WEIGHTS:
        return f"WEIGHT_STRING({trimmed})"
    return f"CAST({trimmed} AS BINARY)"


def query(sql):
    cli = os.environ.get("MARIADB_CLI")
    if not cli:
        sys.exit("gen-collation-cases: run me through tools/mariadb.sh run -- ...")
    out = subprocess.run(cli.split(), input=sql, check=True, capture_output=True, text=True)
    return [line.split("\t") for line in out.stdout.splitlines()]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        here, "..", "testdata", "collation", "cases.tsv")
    rows = [
        "# Generated by tools/gen-collation-cases.py from MariaDB 10.11; do not edit.",
        "# cmp  collation  a  b  mysql_strcmp  tikv_order  weight_string(rtrim(a))|-",
        "# (mysql and tikv differ where MySQL pads with spaces and TiKV trims: see the script)",
        "# like collation  text  pattern  result",
    ]
    gbk_ok, gbk_differ = gbk_agrees()
    for s, h in gbk_differ:
        rows.append(f"# not in the gbk rows: U+{ord(s[0]):04X}... {s.encode().hex()}: MariaDB gbk "
                    f"{h.lower() or 'empty'}, TiKV {tikv_gbk(s).hex()}")
    for coll in COLLATIONS:
        strings = [x for x in STRINGS if x in gbk_ok] if coll in GBK else STRINGS
        likes = [(t, p) for t, p in LIKE if coll not in GBK or (t in gbk_ok and p in gbk_ok)]
        selects = []
        for a in strings:
            w = (f"HEX(WEIGHT_STRING(TRIM(TRAILING ' ' FROM {lit(a, coll)})))"
                 if coll in WEIGHTS else "'-'")
            for b in strings:
                selects.append(f"SELECT STRCMP({lit(a, coll)}, {lit(b, coll)}), "
                               f"STRCMP({key(a, coll)}, {key(b, coll)}), {w}")
        res = query(";\n".join(selects) + ";\n")
        i = 0
        for a in strings:
            for b in strings:
                mysql, tikv, w = res[i]
                i += 1
                rows.append("\t".join(["cmp", coll, a.encode().hex() or "''",
                                       b.encode().hex() or "''", mysql, tikv,
                                       w.lower() or "''"]))
        selects = [f"SELECT {lit(t, coll)} LIKE {lit(p, coll)}" for t, p in likes]
        res = query(";\n".join(selects) + ";\n")
        for (t, p), (r,) in zip(likes, res):
            rows.append("\t".join(["like", coll, t.encode().hex() or "''",
                                   p.encode().hex() or "''", r]))
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
