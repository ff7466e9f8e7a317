//! Every TPC-H pushdown TiDB sends for the 22 queries (go-tpc's schema, `utf8mb4_bin`),
//! executed by the engine over a local snapshot of a shard loaded through the storage
//! node's write path: memtable, L0 flushes and L1 compaction, blocks decoded on the way.
//! Before measuring, each task's answer is checked against the DuckDB reference at the
//! default scale factor, so a bench never measures a wrong answer.
//!
//! ```text
//! cargo bench -p rcop-benches --bench tpch_pushdowns                 # all 42 tasks
//! cargo bench -p rcop-benches --bench tpch_pushdowns -- q01_lineitem # one
//! RCOP_BENCH_SF=0.1 cargo bench -p rcop-benches --bench tpch_pushdowns
//! ```

#![expect(clippy::expect_used, reason = "benchmark fixtures are known-valid")]

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcop_benches::{DEFAULT_SF, KEYSPACE, go_tpc, scale_factor, tasks};
use rcop_examples::tpch::pushdowns;
use rcop_exec::{Engine, EngineConfig};
use rcop_worker::SnapScan;

fn bench(c: &mut Criterion) {
    let sf = scale_factor();
    let loaded = go_tpc(sf);
    let snap = loaded.shard.snapshot();
    let engine = Engine::new(EngineConfig::default());
    let testdata = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/tpch");
    let mut group = c.benchmark_group("tpch_pushdowns");
    for task in tasks() {
        let req = pushdowns::request(&task, KEYSPACE, u64::from(KEYSPACE), loaded.read_ts)
            .expect("request");
        let run = || {
            let mut scan = SnapScan::new(snap.scanner(req.start_ts));
            let resp = engine.handle(&req, &mut scan);
            (resp, scan.stats())
        };
        let (resp, stats) = run();
        if sf == DEFAULT_SF {
            let expected =
                std::fs::read_to_string(testdata.join(format!("{}.expected", task.name)))
                    .expect("reference answer");
            assert_eq!(
                pushdowns::format_rows(&task, &resp).expect("rows"),
                pushdowns::parse_expected(&expected, task.ordered),
                "{}",
                task.name
            );
        }
        group.throughput(Throughput::Elements(stats.keys_seen.max(1)));
        group.bench_function(&task.name, |b| b.iter(run));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
