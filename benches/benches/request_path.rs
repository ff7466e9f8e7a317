//! The remote coprocessor's request path in one process, part by part, against the engine
//! alone over the same rows (the baseline a worker's overhead is read against):
//!
//! - `engine/{q}`: the engine over the storage node's own snapshot;
//! - `node/plan/{q}`: the offload decision (capability check, block-size estimate);
//! - `node/prepare/{q}`: lock checks, the export of the memtable rows and the envelope;
//! - `worker/warm/{q}`: `Worker::handle_coprocessor` on that envelope, caches warm (decode,
//!   admission, rebuild plan, reservation, fetch from the block cache, execution, encoding);
//! - `worker/cold/{q}`: the same with empty caches, every block read from the (in-memory)
//!   object store and decompressed;
//! - `split/engine1/{q}` and `split/engine2/{q}`: the engine over the node's snapshot, whole
//!   on one thread and cut at the snapshot's split keys into two parts on two threads
//!   (`Engine::handle_split`);
//! - `split/worker1/{q}` and `split/worker2/{q}`: `Worker::handle_coprocessor` warm on two
//!   compute threads with `cop-parallelism = 1` (whole) and `2` (two parts);
//! - `split/pair/{q}` and `split/engine_pair/{q}`: two whole requests at once on those two
//!   threads (the worker) or two threads (the engine): what two cores give two independent
//!   requests, the ceiling a split of one request is read against;
//! - `split_size/{whole,two}/q6_{rows}`: the same two workers on Q6 over the first `rows`
//!   rows only, from 1,000 rows up to the whole table: where a two-part split starts to pay,
//!   the evidence for `cop-parallel-min-bytes` (each size's block bytes, the figure that knob
//!   is compared with, are printed first).
//!
//! Lineitem in the `rowid` schema at `RCOP_BENCH_SF` (default 0.01), the newest 1,000 rows
//! in the memtable; the workers' block cache is `RCOP_BENCH_BLOCK_CACHE` (default 512MiB:
//! give an SF 1 table a few GiB for the warm figures to be warm).
//!
//! ```text
//! cargo bench -p rcop-benches --bench request_path
//! RCOP_BENCH_SF=0.1 cargo bench -p rcop-benches --bench request_path -- worker/warm
//! ```

#![expect(clippy::expect_used, reason = "benchmark fixtures are known-valid")]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use rcop_benches::{KEYSPACE, block_cache_size, load, runtime, scale_factor};
use rcop_examples::dags;
use rcop_examples::tpch::{self, LoadOptions};
use rcop_exec::{Engine, EngineConfig};
use rcop_limiter::ManualMemoryProbe;
use rcop_offload::{Config, Offloader, ShardSource};
use rcop_worker::{SnapScan, Worker, WorkerConfig};

fn worker(store: &Arc<rcop_sst::SstStore>) -> Worker {
    let config =
        WorkerConfig::from_toml(&format!("cop-block-cache-size = \"{}\"", block_cache_size()))
            .expect("config");
    Worker::builder(config)
        .store(Arc::clone(store))
        .memory_probe(Arc::new(ManualMemoryProbe::new(1 << 30, 16 << 30)))
        .cores(1)
        .build()
        .expect("worker")
}

/// A worker on two compute threads running one request on up to `parallelism` of them.
fn split_worker(store: &Arc<rcop_sst::SstStore>, parallelism: usize) -> Worker {
    let config = WorkerConfig::from_toml(&format!(
        "cop-block-cache-size = \"{}\"\ncop-parallelism = {parallelism}\n\
         cop-parallel-min-bytes = \"64KiB\"",
        block_cache_size()
    ))
    .expect("config");
    Worker::builder(config)
        .store(Arc::clone(store))
        .memory_probe(Arc::new(ManualMemoryProbe::new(1 << 30, 16 << 30)))
        .cores(2)
        .compute_threads(2)
        .build()
        .expect("worker")
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let loaded = load(&["lineitem"], scale_factor(), 1_000, &LoadOptions::default());
    let prefix = tpch::keyspace_prefix(KEYSPACE).expect("prefix");
    let offloader = Offloader::builder(
        Config::from_toml_str(
            "remote-coprocessor-addr = \"http://127.0.0.1:1\"\n\
             remote-coprocessor-min-blocks-size = \"1KiB\"",
        )
        .expect("config"),
    )
    .build()
    .expect("offloader");
    let source = ShardSource::new(&loaded.shard);
    let engine = Engine::new(EngineConfig::default());
    let warm = worker(&loaded.store);
    let (whole1, split2) = (split_worker(&loaded.store, 1), split_worker(&loaded.store, 2));
    let mut group = c.benchmark_group("request_path");
    // Lineitem's rows (handles 1..=rows), as the last query's scan counted them.
    let mut rows = 0;
    for query in [dags::q1().expect("q1"), dags::q6().expect("q6")] {
        let req = dags::request(&query, KEYSPACE, &prefix, u64::from(KEYSPACE), loaded.read_ts);
        let name = query.name.to_lowercase();
        let snap = loaded.shard.snapshot();
        let local = || {
            let mut scan = SnapScan::new(snap.scanner(req.start_ts));
            let resp = engine.handle(&req, &mut scan);
            (resp, scan.stats())
        };
        let (expected, stats) = local();
        rows = stats.keys_seen;
        group.throughput(Throughput::Elements(stats.keys_seen.max(1)));
        group.bench_function(format!("engine/{name}"), |b| b.iter(local));
        group.bench_function(format!("node/plan/{name}"), |b| {
            b.iter(|| offloader.plan(&req, &source).expect("plan"))
        });
        let deadline = || Instant::now() + Duration::from_secs(60);
        group.bench_function(format!("node/prepare/{name}"), |b| {
            b.iter(|| offloader.prepare(&req, &source, deadline()).expect("prepare"))
        });
        let body = offloader.prepare(&req, &source, deadline()).expect("prepare").envelope;
        // The worker answers what the node would (checked once, outside the measurement).
        let reply = rt.block_on(warm.handle_coprocessor(body.clone(), true));
        assert_eq!(reply.status, 200, "{:?}", String::from_utf8_lossy(&reply.body));
        let answered: rcop_proto::coprocessor::Response =
            prost::Message::decode(reply.body.clone()).expect("response");
        assert_eq!(answered.data, expected.data, "{name}: worker differs from the engine");
        group.bench_function(format!("worker/warm/{name}"), |b| {
            b.iter(|| rt.block_on(warm.handle_coprocessor(body.clone(), true)))
        });
        group.bench_function(format!("worker/cold/{name}"), |b| {
            b.iter_batched(
                || worker(&loaded.store),
                |cold| rt.block_on(cold.handle_coprocessor(body.clone(), true)),
                BatchSize::PerIteration,
            )
        });
        // One request on two cores, against one core in the same run.
        let split = snap.split_keys(&req.ranges, 2).expect("split keys");
        let limits = rcop_exec::ExecLimits::default();
        let parted = || {
            engine
                .handle_split(
                    &req,
                    &split.keys,
                    || SnapScan::new(snap.scanner(req.start_ts)),
                    &limits,
                )
                .expect("split")
        };
        assert!(parted().other_error.is_empty());
        group.bench_function(format!("split/engine1/{name}"), |b| b.iter(local));
        group.bench_function(format!("split/engine2/{name}"), |b| b.iter(parted));
        for (label, w) in [("worker1", &whole1), ("worker2", &split2)] {
            let reply = rt.block_on(w.handle_coprocessor(body.clone(), true));
            assert_eq!(reply.status, 200, "{:?}", String::from_utf8_lossy(&reply.body));
            group.bench_function(format!("split/{label}/{name}"), |b| {
                b.iter(|| rt.block_on(w.handle_coprocessor(body.clone(), true)))
            });
        }
        // The ceiling of any split on this machine: two whole requests at once on the two
        // compute threads (each iteration answers both; its time against `worker1`'s twice).
        group.throughput(Throughput::Elements(2 * stats.keys_seen.max(1)));
        group.bench_function(format!("split/pair/{name}"), |b| {
            b.iter(|| {
                rt.block_on(async {
                    tokio::join!(
                        whole1.handle_coprocessor(body.clone(), true),
                        whole1.handle_coprocessor(body.clone(), true)
                    )
                })
            })
        });
        // The same for the engine: two whole runs on two threads.
        group.bench_function(format!("split/engine_pair/{name}"), |b| {
            b.iter(|| {
                std::thread::scope(|s| {
                    let other = s.spawn(local);
                    (local(), other.join().expect("engine run"))
                })
            })
        });
        group.throughput(Throughput::Elements(stats.keys_seen.max(1)));
    }
    // Where a split starts to pay: Q6 over the first `rows` rows, whole and in two parts.
    let q6 = dags::q6().expect("q6");
    let snap = loaded.shard.snapshot();
    let mut size = 1_000u64;
    loop {
        let n = size.min(rows);
        let query = dags::Query { handles: Some((1, n as i64)), ..q6.clone() };
        let req = dags::request(&query, KEYSPACE, &prefix, u64::from(KEYSPACE), loaded.read_ts);
        let bytes = snap.split_keys(&req.ranges, 2).expect("split keys").bytes;
        println!("split_size: q6 over {n} rows covers {} KiB of blocks", bytes >> 10);
        let deadline = Instant::now() + Duration::from_secs(60);
        let body = offloader.prepare(&req, &source, deadline).expect("prepare").envelope;
        group.throughput(Throughput::Elements(n));
        for (label, w) in [("whole", &whole1), ("two", &split2)] {
            let reply = rt.block_on(w.handle_coprocessor(body.clone(), true));
            assert_eq!(reply.status, 200, "{:?}", String::from_utf8_lossy(&reply.body));
            group.bench_function(format!("split_size/{label}/q6_{n}"), |b| {
                b.iter(|| rt.block_on(w.handle_coprocessor(body.clone(), true)))
            });
        }
        if n == rows {
            break;
        }
        size *= 4;
    }
    let text = String::from_utf8(split2.metrics().encode_text()).expect("metrics");
    // How many of the two-part worker's requests split, and why the others did not.
    for line in text
        .lines()
        .filter(|l| l.starts_with("rcop_worker_split_") || l.starts_with("rcop_worker_unsplit_"))
    {
        println!("split worker: {line}");
    }
    assert!(
        text.lines()
            .any(|l| l.starts_with("rcop_worker_split_requests_total ") && !l.ends_with(" 0")),
        "the two-part worker split its requests"
    );
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
