//! Prints what the engine runs, from the tables its builder uses: every supported
//! `ScalarFuncSig` name, one per line, then the executors, aggregate functions and modes,
//! field types, collations and response encodings, each section under a `# heading`.
//!
//! `cargo run -p rcop-exec --example capabilities`

use std::io::{self, Write};

use rcop_exec::Capabilities;

fn main() -> io::Result<()> {
    let c = Capabilities::of_engine();
    let mut out = io::stdout().lock();
    for name in &c.scalar_funcs {
        writeln!(out, "{name}")?;
    }
    let mut section = |title: &str, items: &mut dyn Iterator<Item = &str>| -> io::Result<()> {
        writeln!(out, "\n# {title}")?;
        for item in items {
            writeln!(out, "{item}")?;
        }
        Ok(())
    };
    section("executors", &mut c.executors.iter().copied())?;
    section("aggregate functions", &mut c.aggregate_functions.iter().copied())?;
    section("aggregate modes", &mut c.aggregate_modes.iter().copied())?;
    section("field types", &mut c.field_types.iter().map(String::as_str))?;
    section(
        "collations (and every id >= 0: the old framework, compared as bytes)",
        &mut c.collations.iter().map(String::as_str),
    )?;
    section("encode types", &mut c.encode_types.iter().copied())?;
    Ok(())
}
