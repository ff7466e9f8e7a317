#!/usr/bin/env python3
"""Reference answers of the TPC-H pushdown tasks, computed by DuckDB.

Runs `cargo run -p rcop-examples --example tpch-oracle-data` to export, from our own
generator (tpchgen, the rows the storage node loads), every TPC-H table of go-tpc's schema at
the reference scale factor (`pushdowns::SCALE_FACTOR`, 0.01) as CSV, with its DDL and each
task's SQL (examples/src/tpch/pushdowns/queries.rs). Loads the tables into an in-memory
DuckDB, runs each task's SQL and writes `testdata/tpch/<task>.expected`: a `#` header (the
SQL), then one line per row, values tab-separated — integers, decimals at their type's scale,
dates as YYYY-MM-DD, strings as they are, NULL — sorted unless the task is ordered. Files of
tasks that no longer exist are removed. The Rust test `tpch_pushdowns` compares the engine's
answers with these files.

Usage: tools/tpch-oracle.py   (needs `duckdb` importable; CI pins the version)
"""

import datetime
import decimal
import os
import pathlib
import subprocess
import sys
import tempfile

import duckdb

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "testdata" / "tpch"


def fmt(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        raise TypeError(f"unexpected boolean {v!r}")
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, (int, str)):
        return str(v)
    if isinstance(v, datetime.date):
        return v.isoformat()
    raise TypeError(f"unexpected value {v!r} ({type(v).__name__})")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        cargo = os.environ.get("CARGO", "cargo")
        subprocess.run(
            [cargo, "run", "-q", "--locked", "-p", "rcop-examples", "--example",
             "tpch-oracle-data", "--", tmp],
            cwd=ROOT, check=True)
        tmp = pathlib.Path(tmp)
        con = duckdb.connect()
        for stmt in (tmp / "schema.sql").read_text().splitlines():
            con.execute(stmt)
            table = stmt.split()[2]
            # '|' never occurs in TPC-H text; no quoting, so every character is data.
            con.execute(
                f"INSERT INTO {table} SELECT * FROM read_csv('{tmp / (table + '.csv')}', "
                "delim='|', header=false, quote='', escape='', auto_detect=false, "
                f"columns={columns(con, table)})")
        OUT.mkdir(parents=True, exist_ok=True)
        written = set()
        for line in (tmp / "tasks.tsv").read_text().splitlines():
            name, ordered, sql = line.split("\t", 2)
            rows = [
                "\t".join(fmt(v) for v in row) for row in con.execute(sql).fetchall()
            ]
            if ordered != "1":
                rows.sort()
            path = OUT / f"{name}.expected"
            path.write_text(f"# {sql}\n" + "".join(r + "\n" for r in rows))
            written.add(path.name)
            print(f"{name}: {len(rows)} rows", file=sys.stderr)
        for stale in OUT.glob("*.expected"):
            if stale.name not in written:
                stale.unlink()


def columns(con, table):
    """The table's columns as read_csv's `columns` struct literal."""
    cols = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_name = ? ORDER BY ordinal_position", [table]).fetchall()
    return "{" + ", ".join(f"'{n}': '{t}'" for n, t in cols) + "}"


if __name__ == "__main__":
    main()
