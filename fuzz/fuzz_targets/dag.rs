//! The coprocessor engine over arbitrary and generated DAGs (see `dag_harness.rs`).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

#[path = "dag_harness.rs"]
mod harness;

static HARNESS: OnceLock<harness::Harness> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    HARNESS.get_or_init(harness::Harness::new).run(data);
});
