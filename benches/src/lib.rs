//! Fixtures of the cross-crate benchmarks (`benches/benches/*.rs`): shards loaded with TPC-H
//! data as TiDB stores it, in an in-memory object store, and the requests the benches send.
//!
//! The scale factor comes from `RCOP_BENCH_SF` (default 0.01: every go-tpc table, ~60 k
//! lineitem rows, the scale the committed reference answers are computed at).

use std::sync::Arc;

use rcop_examples::tpch::{self, LoadOptions, pushdowns, schema};
use rcop_snap::{FileIds, Shard, ShardConfig};
use rcop_sst::{Backend, SstStore, StoreConfig};

/// The keyspace (and shard id) every fixture uses.
pub const KEYSPACE: u32 = 1;

/// Scale factor when `RCOP_BENCH_SF` is unset.
pub const DEFAULT_SF: f64 = 0.01;

/// The scale factor from `RCOP_BENCH_SF`, or [`DEFAULT_SF`].
///
/// # Panics
///
/// A value that is not a positive number (a benchmark's setup should fail loudly).
#[expect(clippy::panic, reason = "benchmark setup fails loudly on a bad environment")]
pub fn scale_factor() -> f64 {
    match std::env::var("RCOP_BENCH_SF") {
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(sf) if sf > 0.0 && sf.is_finite() => sf,
            _ => panic!("RCOP_BENCH_SF must be a positive number, got {v:?}"),
        },
        Err(_) => DEFAULT_SF,
    }
}

/// The workers' block cache size, as a config value: `RCOP_BENCH_BLOCK_CACHE` (e.g.
/// `"4GiB"`, for a warm worker that holds a whole SF 1 table's decoded blocks), else
/// `"512MiB"`.
pub fn block_cache_size() -> String {
    std::env::var("RCOP_BENCH_BLOCK_CACHE").unwrap_or_else(|_| "512MiB".to_owned())
}

/// A shard of keyspace [`KEYSPACE`] over an in-memory store, its store, and the read ts
/// after the load.
#[derive(Debug)]
pub struct Loaded {
    /// The shard (the storage node's side).
    pub shard: Shard,
    /// Its object store (the worker reads the same).
    pub store: Arc<SstStore>,
    /// A read timestamp after every loaded row.
    pub read_ts: u64,
}

/// A current-thread Tokio runtime for the fixtures' async setup.
///
/// # Panics
///
/// When the runtime cannot start.
#[expect(clippy::expect_used, reason = "benchmark setup fails loudly")]
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// Loads `tables` at `sf` with `opts` (the newest `memtable_tail` rows of each stay in the
/// memtable).
///
/// # Panics
///
/// When loading fails (a benchmark's setup should fail loudly).
#[expect(clippy::expect_used, reason = "benchmark setup fails loudly")]
pub fn load(tables: &[&str], sf: f64, memtable_tail: u64, opts: &LoadOptions) -> Loaded {
    let store = Arc::new(
        SstStore::from_config(&StoreConfig::default().with_backend(Backend::Memory))
            .expect("memory store"),
    );
    load_into(store, tables, sf, memtable_tail, opts)
}

/// [`load`] into `store` (a local directory, say) instead of memory.
///
/// # Panics
///
/// When loading fails (a benchmark's setup should fail loudly).
#[expect(clippy::expect_used, reason = "benchmark setup fails loudly")]
pub fn load_into(
    store: Arc<SstStore>,
    tables: &[&str],
    sf: f64,
    memtable_tail: u64,
    opts: &LoadOptions,
) -> Loaded {
    let rt = runtime();
    let start = tpch::keyspace_prefix(KEYSPACE).expect("keyspace");
    let end = tpch::keyspace_prefix(KEYSPACE + 1).expect("keyspace");
    let cfg = ShardConfig::new(u64::from(KEYSPACE), start, end, 4).expect("shard config");
    let shard = Shard::with_store(cfg, Arc::clone(&store), FileIds::default()).expect("shard");
    let mut ts = 100;
    for table in tables {
        let report = rt
            .block_on(tpch::load_table_with(
                &shard,
                KEYSPACE,
                table,
                sf,
                memtable_tail,
                ts,
                opts,
                |_| {},
            ))
            .expect("load");
        ts = report.max_commit_ts + 10;
    }
    Loaded { shard, store, read_ts: ts }
}

/// Every go-tpc table at `sf`, as the pushdown tasks read them.
pub fn go_tpc(sf: f64) -> Loaded {
    let names: Vec<&str> = schema::TABLES.iter().map(|t| t.name).collect();
    load(&names, sf, 0, &LoadOptions::go_tpc())
}

/// The pushdown tasks of the 22 TPC-H queries.
///
/// # Panics
///
/// Never in practice (the tasks are literals).
#[expect(clippy::expect_used, reason = "the tasks are literals")]
pub fn tasks() -> Vec<pushdowns::Task> {
    pushdowns::all().expect("pushdown tasks")
}
