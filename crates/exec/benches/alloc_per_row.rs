//! The allocation test's companion (`tests/alloc_per_row.rs`): the same hot-path scenarios
//! (TPC-H Q1 and Q6, TopN, Selection + Projection in both encodings, Limit, LIKE, the bare
//! scan in both encodings) under the same counting allocator. Before timing, each prints
//! its allocations at N and 2N rows and the extra ones per row and per 1024-row batch;
//! then criterion times the run at N rows (throughput: rows scanned).
//!
//! ```text
//! cargo bench -p rcop-exec --bench alloc_per_row
//! RCOP_ALLOC_ROWS=200000 cargo bench -p rcop-exec --bench alloc_per_row -- top_n
//! ```

#![expect(clippy::expect_used, reason = "benchmark fixtures are known-valid")]

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcop_exec::Engine;
use support::alloc::{CountingAlloc, growth, scenarios};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// N when `RCOP_ALLOC_ROWS` is not set.
const DEFAULT_ROWS: i64 = 50_000;

fn bench(c: &mut Criterion) {
    let n = std::env::var("RCOP_ALLOC_ROWS")
        .ok()
        .map_or(DEFAULT_ROWS, |v| v.trim().parse().expect("RCOP_ALLOC_ROWS must be a row count"));
    let engine = Engine::default();
    let mut g = c.benchmark_group("alloc_per_row");
    g.sample_size(10);
    for s in scenarios() {
        let gr = growth(&s, n);
        eprintln!("alloc_per_row/{}: {gr}", s.name);
        let fx = (s.fixture)(n);
        g.throughput(Throughput::Elements(fx.rows));
        g.bench_function(s.name, |b| {
            b.iter(|| {
                engine.execute_dag(&fx.dag, &fx.ranges, 0, &mut fx.store.scanner()).expect("run")
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
