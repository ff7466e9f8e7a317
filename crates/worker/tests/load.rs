//! The load test: four storage-node clients of two keyspaces send a few hundred concurrent
//! requests of mixed size (whole-table aggregations and point ranges) to one worker over real
//! TCP for a bounded time. Nothing is lost (every request gets an answer: the right one, or a
//! 503 to retry elsewhere), and the figures are printed: throughput, p50/p99 per keyspace,
//! and each keyspace's share of the answers (fairness).
#![expect(clippy::unwrap_used, reason = "test plumbing")]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rcop_datum::{KeyspaceId, key};
use rcop_proto::coprocessor;
use rcop_snap::{FileIds, Shard, ShardConfig};

mod common;
use common::fixture::{
    agg_dag, cop_request, decode_response, memory_store, post, run_locally, start, test_config,
};
use common::{TABLE, export, row};

/// Load duration per client.
const RUN: Duration = Duration::from_secs(6);

fn prefix(ks: u32) -> Vec<u8> {
    KeyspaceId(ks).txn_prefix().unwrap().to_vec()
}

fn record_key(ks: u32, handle: i64) -> Vec<u8> {
    let mut k = prefix(ks);
    key::encode_record_key(&mut k, TABLE, handle);
    k
}

/// A shard of keyspace `ks` with 2,000 rows in L1 SSTs and 200 in the memtable.
async fn shard(store: Arc<rcop_sst::SstStore>, ks: u32) -> Shard {
    let mut cfg = ShardConfig::new(u64::from(ks), prefix(ks), prefix(ks + 1), 4).unwrap();
    cfg.block_size = 1024;
    cfg.max_table_size = 32 << 10;
    let shard = Shard::with_store(cfg, store, FileIds::starting_at(u64::from(ks) << 32)).unwrap();
    for h in 1..=2_000 {
        shard.put(&record_key(ks, h), 10, 11, &row(h % 5, h)).unwrap();
    }
    shard.flush().await.unwrap();
    shard.compact(0).await.unwrap();
    for h in 2_001..=2_200 {
        shard.put(&record_key(ks, h), 20, 21, &row(h % 5, h)).unwrap();
    }
    shard
}

/// The request for keyspace `ks`: the whole table (`big`) or ten rows.
fn request(ks: u32, big: bool) -> coprocessor::Request {
    let mut req = cop_request(&agg_dag());
    req.context.as_mut().unwrap().keyspace_id = Some(ks);
    let (start, end) = if big {
        (record_key(ks, i64::MIN), record_key(ks, i64::MAX))
    } else {
        (record_key(ks, 1_000), record_key(ks, 1_010))
    };
    req.ranges = vec![coprocessor::KeyRange { start: start.into(), end: end.into() }];
    req
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_load_from_several_nodes_loses_nothing() {
    let store = memory_store();
    let mut cases = Vec::new();
    for ks in [1u32, 2] {
        let s = shard(Arc::clone(&store), ks).await;
        for big in [true, false] {
            let req = request(ks, big);
            let want = run_locally(&s, &req, 32 << 20).data;
            cases.push((ks, big, Bytes::from(export(&s, &req)), want));
        }
    }
    let handle = start(test_config(), Arc::clone(&store), 1 << 30, 8 << 30).await;
    let addr = handle.local_addr();
    let cases = Arc::new(cases);

    // Four "storage nodes": keyspace 1 sends three times the concurrency of keyspace 2.
    let started = Instant::now();
    let mut clients = Vec::new();
    for (node, ks, concurrency) in [(0, 1u32, 24), (1, 1, 24), (2, 1, 24), (3, 2, 24)] {
        for lane in 0..concurrency {
            let cases = Arc::clone(&cases);
            clients.push(tokio::spawn(async move {
                let mut out = Vec::new();
                let mut i = lane;
                while started.elapsed() < RUN {
                    // One big request in four.
                    let big = (i + node) % 4 == 0;
                    i += 1;
                    let (_, _, body, want) =
                        cases.iter().find(|c| c.0 == ks && c.1 == big).unwrap();
                    let t = Instant::now();
                    let reply = post(addr, body.to_vec(), true).await;
                    let took = t.elapsed();
                    match reply.status {
                        200 => assert_eq!(&decode_response(&reply.body).data, want),
                        503 => {}
                        s => panic!("keyspace {ks}: {s} {}", String::from_utf8_lossy(&reply.body)),
                    }
                    out.push((ks, big, reply.status, took));
                }
                out
            }));
        }
    }
    let mut results = Vec::new();
    for c in clients {
        results.extend(c.await.unwrap());
    }
    let elapsed = started.elapsed();
    let mut by: BTreeMap<(u32, u16), Vec<Duration>> = BTreeMap::new();
    for (ks, _, status, took) in &results {
        by.entry((*ks, *status)).or_default().push(*took);
    }
    let ok = results.iter().filter(|r| r.2 == 200).count();
    println!(
        "load: {} requests in {:.1} s, {:.0} answered/s ({} ok, {} busy)",
        results.len(),
        elapsed.as_secs_f64(),
        ok as f64 / elapsed.as_secs_f64(),
        ok,
        results.len() - ok
    );
    for ((ks, status), mut times) in by {
        times.sort();
        println!(
            "  keyspace {ks} status {status}: {} requests, p50 {:?}, p99 {:?}",
            times.len(),
            percentile(&times, 0.5),
            percentile(&times, 0.99)
        );
    }
    // Fairness: the lighter keyspace (a quarter of the clients) is not starved.
    let answered = |ks: u32| results.iter().filter(|r| r.0 == ks && r.2 == 200).count();
    let (heavy, light) = (answered(1), answered(2));
    println!(
        "  answered per client: keyspace 1 {:.1}, keyspace 2 {:.1}",
        heavy as f64 / 72.0,
        light as f64 / 24.0
    );
    assert!(light > 0 && heavy > 0, "both keyspaces served: {heavy} / {light}");
    assert!(
        light as f64 / 24.0 >= 0.5 * (heavy as f64 / 72.0),
        "keyspace 2's clients got less than half the per-client service of keyspace 1's"
    );
    assert_eq!(handle.worker().limiter().memory_limiter().used(), 0);
    handle.shutdown().await.unwrap();
}
