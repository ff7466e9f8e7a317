#!/usr/bin/env python3
"""Evaluates the scalar-function cases of testdata/functions/*.toml on MariaDB and writes what
it answered next to each file (`<name>.expected`), for crates/exec/tests/functions.rs to check
the engine against.

    tools/mariadb.sh run -- tools/fn-oracle.py [testdata/functions/x.toml ...]

Each case becomes one SELECT (evaluating the expression once, so warnings count once): the function's `sql` template with every `?` replaced by the
case's argument, written as a typed SQL value (CAST(... AS DECIMAL(p,s)), a utf8mb4_bin string,
...). The answer is recorded as `null`, `hex <bytes>` (string results), `val <text>` (numbers,
times: MariaDB's own text form), or `err <code>`, with the statement's warning count.
The file format is in testdata/functions/README.md.
"""

import os
import re
import shlex
import subprocess
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_type(ty):
    m = re.fullmatch(r"(\w+)(?:\(([^)]*)\))?((?:\s+\w+(?:=\S+)?)*)", ty.strip())
    if not m:
        raise SystemExit(f"bad type {ty!r}")
    base, params, opts = m.group(1), m.group(2), m.group(3).split()
    params = [int(p) for p in params.split(",")] if params else []
    return base, params, opts


def sql_type(ty):
    """The CAST target (or string form) of a testdata column type."""
    base, p, opts = parse_type(ty)
    unsigned = "unsigned" in opts
    if base in ("bigint", "int"):
        return "UNSIGNED" if unsigned else "SIGNED"
    if base == "double":
        return "DOUBLE"
    if base == "float":
        return "FLOAT"
    if base == "decimal":
        return f"DECIMAL({p[0] if p else 10},{p[1] if len(p) > 1 else 0})"
    if base == "date":
        return "DATE"
    if base in ("datetime", "timestamp"):
        return f"DATETIME({p[0] if p else 0})"
    if base == "time":
        return f"TIME({p[0] if p else 0})"
    if base in ("varchar", "char"):
        coll = next((o.split("=", 1)[1] for o in opts if o.startswith("collate=")), None)
        return ("CHAR", COLLATIONS.get(coll, "utf8mb4_bin"))
    if base == "varbinary":
        return ("BINARY", None)
    if base == "json":
        # MariaDB's JSON is text; JSON_COMPACT marks it as JSON for the function reading it.
        return ("JSON", None)
    raise SystemExit(f"no SQL form for type {ty!r}")


# testdata collation ids (TiDB's, negated for new collations) -> MariaDB names.
COLLATIONS = {
    None: "utf8mb4_bin",
    "-46": "utf8mb4_bin",
    "-45": "utf8mb4_general_ci",
    "-224": "utf8mb4_unicode_ci",
    "-83": "utf8_bin",
    "-33": "utf8_general_ci",
    "-87": "gbk_bin",
    "-28": "gbk_chinese_ci",
}


def quote(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def sql_value(cell, ty):
    t = sql_type(ty)
    cell = cell.strip()
    if cell == "\\N":
        target = "CHAR" if isinstance(t, tuple) else t
        return f"CAST(NULL AS {target})"
    if cell.startswith("x'") and cell.endswith("'"):
        raw = f"X{cell[1:]}"
    elif cell.startswith("'") and cell.endswith("'") and len(cell) >= 2:
        raw = quote(cell[1:-1])
    else:
        raw = quote(cell)
    if isinstance(t, tuple):
        kind, coll = t
        if kind == "BINARY":
            return f"CAST({raw} AS BINARY)"
        if kind == "JSON":
            return f"JSON_COMPACT(CONVERT({raw} USING utf8mb4))"
        charset = coll.split("_")[0]
        return f"CONVERT({raw} USING {charset}) COLLATE {coll}"
    return f"CAST({raw} AS {t})"


def is_string(ty):
    return parse_type(ty)[0] in ("varchar", "char", "varbinary", "binary", "text", "blob")


def statements(fns):
    """(id, sql) per case."""
    out = []
    for fi, f in enumerate(fns):
        # `?` takes the next argument; `?N` argument N (1-based), for SQL that spells its
        # arguments in another order than the signature takes them (TRIM(r FROM s)).
        numbered = re.findall(r"\?(\d+)", f["sql"])
        used = {int(k) for k in numbered} if numbered else None
        parts = re.split(r"\?\d*", f["sql"])
        if (len(used) if used else len(parts) - 1) != len(f["args"]):
            raise SystemExit(f"{f['sig']}: {len(parts) - 1} placeholders, {len(f['args'])} args")
        order = [int(k) - 1 for k in numbered] if numbered else list(range(len(parts) - 1))
        for ci, case in enumerate(f["cases"]):
            if len(case) != len(f["args"]):
                raise SystemExit(f"{f['sig']} case {ci}: {len(case)} values")
            expr = parts[0]
            literal = f.get("literal", [])
            for k, rest in zip(order, parts[1:]):
                # A `literal` argument (an interval unit) is SQL text, a constant in the engine.
                v, ty = case[k], f["args"][k]
                expr += (v if k in literal else sql_value(v, ty)) + rest
            if is_string(f["ret"]):
                shown = f"HEX({expr})"
            elif parse_type(f["ret"])[0] == "json":
                # Compared with the engine's MySQL text less the blanks after `:` and `,`.
                shown = f"CAST(JSON_COMPACT({expr}) AS CHAR)"
            else:
                shown = f"CAST({expr} AS CHAR)"
            out.append((f"{fi}:{ci}", f"SELECT 'R', {shown} FROM one;"))
    return out


def run(stmts):
    """Runs every statement in one client session; returns id -> (kind, value, warnings)."""
    script = [
        "SET NAMES utf8mb4;",
        "SET time_zone = '+00:00';",
        # Statements that read a table clear the diagnostics area; table-less ones do not.
        "CREATE DATABASE IF NOT EXISTS oracle;",
        "USE oracle;",
        "CREATE OR REPLACE TABLE one (x INT);",
        "INSERT INTO one VALUES (1);",
        # MySQL 8's (and TiDB's) default sql_mode, less ONLY_FULL_GROUP_BY.
        "SET sql_mode = 'STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
        "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION';",
    ]
    first = len(script) + 1
    for sid, sql in stmts:
        script.append(f"SELECT 'M', '{sid}' FROM one; {sql} SHOW COUNT(*) WARNINGS;")
    # MARIADB_CLI (from tools/mariadb.sh) is the whole client command line.
    cli = shlex.split(os.environ["MARIADB_CLI"]) + ["--force", "--raw"]
    p = subprocess.run(cli, input="\n".join(script) + "\n", capture_output=True,
                       text=True, encoding="utf-8", errors="surrogateescape")
    errors = {}
    for line in p.stderr.splitlines():
        m = re.match(r"ERROR (\d+) \((\w+)\) at line (\d+)", line)
        if m:
            idx = int(m.group(3)) - first
            if 0 <= idx < len(stmts):
                errors[stmts[idx][0]] = m.group(1)
    res = {}
    cur = None
    for line in p.stdout.split("\n"):
        cols = line.split("\t")
        if cols[0] == "M" and len(cols) == 2:
            cur = cols[1]
            res[cur] = ["err", errors.get(cur, "?"), 0]
        elif cols[0] == "R" and len(cols) == 2 and cur is not None:
            # --batch prints NULL as NULL; a string result is hex, so never the text NULL.
            if cols[1] == "NULL":
                res[cur][:2] = ["null", ""]
            else:
                res[cur][:2] = ["val", cols[1]]
        elif re.fullmatch(r"\d+", line) and cur is not None:
            res[cur][2] = int(line)
    return res


def main():
    files = sys.argv[1:] or sorted(
        os.path.join(ROOT, "testdata/functions", f)
        for f in os.listdir(os.path.join(ROOT, "testdata/functions"))
        if f.endswith(".toml")
    )
    for path in files:
        with open(path, "rb") as fh:
            fns = tomllib.load(fh).get("fn", [])
        stmts = statements(fns)
        res = run(stmts)
        lines = [f"# Generated by tools/fn-oracle.py from {os.path.basename(path)} on MariaDB; do not edit."]
        for sid, _ in stmts:
            fi, ci = map(int, sid.split(":"))
            kind, val, warn = res.get(sid, ["err", "?", 0])
            if kind == "val" and is_string(fns[fi]["ret"]):
                kind = "hex"
            lines.append("\t".join([str(fi), fns[fi]["sig"], str(ci), kind, val, str(warn)]))
        out = path[: -len(".toml")] + ".expected"
        with open(out, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write("\n".join(lines) + "\n")
        print(f"{os.path.relpath(out, ROOT)}: {len(stmts)} cases")


if __name__ == "__main__":
    main()
