//! `cargo run -p rcop-examples --example tpch-oracle-data -- DIR [SF]`: writes the TPC-H
//! tables of go-tpc's schema as CSV into `DIR`, with their DDL and the pushed-down tasks' SQL,
//! for `tools/tpch-oracle.py` (at the reference scale factor, the default) and
//! `benches/compare` (at any) to run in DuckDB.

use anyhow::Context;
use rcop_examples::tpch::pushdowns;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args_os().skip(1);
    let dir = args.next().context("usage: tpch-oracle-data DIR [SF]")?;
    let sf = match args.next() {
        Some(s) => s
            .to_str()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|sf| *sf > 0.0 && sf.is_finite())
            .context("SF must be a positive number")?,
        None => pushdowns::SCALE_FACTOR,
    };
    pushdowns::write_reference_input(std::path::Path::new(&dir), sf)
}
