#!/usr/bin/env bash
# Re-runs the collation generators (weight tables and MariaDB oracle cases) into a temporary
# directory and fails on any difference from the committed files. Needs MariaDB (see
# tools/mariadb.sh; MARIADB_INSTALL=1 installs it), the PyPI package pyuca==1.2 and, for the
# GBK/GB18030 tables, cargo with crates.io (tools/gen-gb-tables: encoding_rs, pinned).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c 'import pyuca' 2>/dev/null || pip install -q 'pyuca==1.2'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/data"
cargo run -q --locked --manifest-path tools/gen-gb-tables/Cargo.toml -- "$tmp/data"
tools/mariadb.sh run -- bash -c "python3 tools/gen-collation-tables.py '$tmp/data' && python3 tools/gen-collation-cases.py '$tmp/cases.tsv'"
status=0
diff -r "$tmp/data" crates/exec/src/collation/data || status=1
diff "$tmp/cases.tsv" testdata/collation/cases.tsv >/dev/null || { echo "testdata/collation/cases.tsv differs from the generator's output" >&2; status=1; }
if [[ $status != 0 ]]; then
    echo "check-collation-tables: generated collation data differs; re-run the generators" >&2
fi
exit "$status"
