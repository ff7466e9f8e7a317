//! `cargo run -p rcop-examples --example tpch-oracle-data -- DIR`: writes the TPC-H tables
//! of go-tpc's schema at the reference scale factor as CSV into `DIR`, with their DDL and
//! the pushed-down tasks' SQL, for `tools/tpch-oracle.py` to run in DuckDB.

use anyhow::Context;
use rcop_examples::tpch::pushdowns;

fn main() -> anyhow::Result<()> {
    let dir = std::env::args_os().nth(1).context("usage: tpch-oracle-data DIR")?;
    pushdowns::write_reference_input(std::path::Path::new(&dir), pushdowns::SCALE_FACTOR)
}
