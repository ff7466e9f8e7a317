//! Analyze requests (tp 104) offloaded to a real worker over HTTP on 127.0.0.1: the answer
//! equals the engine run locally on the shard's snapshot under the same sampler seed, and
//! its counts and samples are those of the rows visible at the read timestamp.
#![expect(clippy::unwrap_used, reason = "test plumbing")]

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use rcop_exec::{Engine, EngineConfig};
use rcop_limiter::ManualMemoryProbe;
use rcop_proto::{REQ_TYPE_ANALYZE, coprocessor, tipb};
use rcop_snap::Shard;
use rcop_worker::{SnapScan, Worker, WorkerHandle};

mod common;
use common::export;
use common::fixture::{
    agg_dag, build_shard, cop_request, decode_response, memory_store, post, test_config,
};

const SEED: u64 = 0x5eed_0104;

async fn start_seeded(store: Arc<rcop_sst::SstStore>, seed: Option<u64>) -> WorkerHandle {
    let mut engine = EngineConfig::default();
    if let Some(s) = seed {
        engine = engine.with_analyze_seed(s);
    }
    let worker = Worker::builder(test_config())
        .store(store)
        .memory_probe(Arc::new(ManualMemoryProbe::new(1 << 30, 8 << 30)))
        .cores(2)
        .engine_config(engine)
        .build()
        .unwrap();
    worker.bind().await.unwrap().spawn()
}

fn run_locally(shard: &Shard, req: &coprocessor::Request) -> coprocessor::Response {
    let snap = shard.snapshot();
    let mut scan = SnapScan::new(snap.scanner(req.start_ts));
    Engine::new(EngineConfig::default().with_analyze_seed(SEED)).handle(req, &mut scan)
}

/// The fixture's columns: the int handle, c1 and c2 (BIGINT).
fn columns() -> Vec<tipb::ColumnInfo> {
    let col = |id, pk| tipb::ColumnInfo {
        column_id: Some(id),
        tp: Some(8),
        pk_handle: Some(pk),
        ..Default::default()
    };
    vec![col(100, true), col(1, false), col(2, false)]
}

fn analyze_request(analyze: &tipb::AnalyzeReq) -> coprocessor::Request {
    let mut req = cop_request(&agg_dag());
    req.tp = REQ_TYPE_ANALYZE;
    req.paging_size = 0;
    req.data = Bytes::from(analyze.encode_to_vec());
    req
}

fn full_sampling(sample_size: i64) -> tipb::AnalyzeReq {
    tipb::AnalyzeReq {
        tp: Some(tipb::AnalyzeType::TypeFullSampling as i32),
        col_req: Some(tipb::AnalyzeColumnsReq {
            sample_size: Some(sample_size),
            sketch_size: Some(10_000),
            columns_info: columns(),
            column_groups: vec![
                tipb::AnalyzeColumnGroup { column_offsets: vec![1, 2], prefix_lengths: vec![] },
                tipb::AnalyzeColumnGroup { column_offsets: vec![0], prefix_lengths: vec![] },
            ],
            version: Some(2),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A BIGINT response datum: INT flag, big-endian with the sign bit flipped.
fn int_datum(x: i64) -> Vec<u8> {
    let mut v = vec![3];
    v.extend_from_slice(&((x as u64) ^ (1 << 63)).to_be_bytes());
    v
}

/// The rows visible at the fixture's read timestamp, as (handle, c1, c2): 1..=1000 less
/// the 9 deleted at ts 32, with the rows rewritten at ts 30.
fn visible_rows() -> Vec<(i64, i64, i64)> {
    (1..=1000i64)
        .filter(|h| !((7..=600).contains(h) && (h - 7) % 70 == 0))
        .map(
            |h| {
                if (50..=600).contains(&h) && h % 50 == 0 { (h, 6, -h) } else { (h, h % 7, h * 10) }
            },
        )
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offloaded_full_sampling_equals_local_and_samples_visible_rows() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let handle = start_seeded(Arc::clone(&store), Some(SEED)).await;
    let addr = handle.local_addr();
    let req = analyze_request(&full_sampling(100));

    let reply = post(addr, export(&shard, &req), true).await;
    assert_eq!(reply.status, 200, "{:?}", String::from_utf8_lossy(&reply.body));
    let remote = decode_response(&reply.body);
    assert!(remote.other_error.is_empty(), "{}", remote.other_error);
    let local = run_locally(&shard, &req);
    assert_eq!(remote.data, local.data, "same AnalyzeColumnsResp bytes as local execution");
    // Deterministic under the seed: a second offload answers the same bytes.
    let again = decode_response(&post(addr, export(&shard, &req), true).await.body);
    assert_eq!(again.data, remote.data);

    let rc = tipb::AnalyzeColumnsResp::decode(remote.data.clone()).unwrap().row_collector.unwrap();
    let rows = visible_rows();
    assert_eq!(rc.count, Some(rows.len() as i64));
    assert_eq!(rc.null_counts, [0, 0, 0, 0, 0]);
    // Three BIGINT columns: 8 bytes each per row; the (c1, c2) group 16; the handle group 8.
    let n = rows.len() as i64;
    assert_eq!(rc.total_size, [8 * n, 8 * n, 8 * n, 16 * n, 8 * n]);
    assert_eq!(rc.fm_sketch.len(), 5);
    assert_eq!(rc.fm_sketch[0].hashset.len(), rows.len(), "NDV exact below the sketch size");
    assert_eq!(rc.fm_sketch[1].hashset.len(), 7, "c1 = h % 7, or 6");
    assert_eq!(rc.fm_sketch[4], rc.fm_sketch[0]);

    let by_datums: HashMap<Vec<Vec<u8>>, i64> =
        rows.iter().map(|&(h, a, b)| (vec![int_datum(h), int_datum(a), int_datum(b)], h)).collect();
    assert_eq!(rc.samples.len(), 100);
    let mut handles = BTreeSet::new();
    for s in &rc.samples {
        let row: Vec<Vec<u8>> = s.row.iter().map(|b| b.to_vec()).collect();
        let h = by_datums.get(&row).expect("every sample is a visible row");
        assert!(handles.insert(*h), "no row sampled twice");
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offloaded_column_analyze_v1_and_errors() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let handle = start_seeded(Arc::clone(&store), Some(SEED)).await;
    let addr = handle.local_addr();

    let v1 = tipb::AnalyzeReq {
        tp: Some(tipb::AnalyzeType::TypeColumn as i32),
        col_req: Some(tipb::AnalyzeColumnsReq {
            bucket_size: Some(64),
            sample_size: Some(50),
            sketch_size: Some(1000),
            columns_info: columns(),
            cmsketch_depth: Some(5),
            cmsketch_width: Some(512),
            ..Default::default()
        }),
        ..Default::default()
    };
    let req = analyze_request(&v1);
    let reply = post(addr, export(&shard, &req), true).await;
    assert_eq!(reply.status, 200, "{:?}", String::from_utf8_lossy(&reply.body));
    let remote = decode_response(&reply.body);
    assert_eq!(remote.data, run_locally(&shard, &req).data);
    let resp = tipb::AnalyzeColumnsResp::decode(remote.data).unwrap();
    let pk = resp.pk_hist.unwrap();
    let n = visible_rows().len() as i64;
    assert_eq!(pk.ndv, Some(n));
    assert_eq!(pk.buckets.last().unwrap().count, Some(n));
    assert!(pk.buckets.len() <= 64);
    assert_eq!(resp.collectors.len(), 2);
    assert_eq!(resp.collectors[0].count, Some(n));

    // A request without its sub-request is the caller's error, as TiKV answers it.
    let bad = analyze_request(&tipb::AnalyzeReq {
        tp: Some(tipb::AnalyzeType::TypeFullSampling as i32),
        ..Default::default()
    });
    let reply = post(addr, export(&shard, &bad), true).await;
    assert_eq!(reply.status, 500);
    assert!(decode_response(&reply.body).other_error.contains("col_req"));
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unseeded_worker_samples_differently_each_time() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let handle = start_seeded(Arc::clone(&store), None).await;
    let req = analyze_request(&full_sampling(20));
    let a = decode_response(&post(handle.local_addr(), export(&shard, &req), true).await.body);
    let b = decode_response(&post(handle.local_addr(), export(&shard, &req), true).await.body);
    let weights = |r: &coprocessor::Response| {
        let rc = tipb::AnalyzeColumnsResp::decode(r.data.clone()).unwrap().row_collector.unwrap();
        assert_eq!(rc.samples.len(), 20);
        rc.samples.iter().map(|s| s.weight.unwrap()).collect::<BTreeSet<_>>()
    };
    assert_ne!(weights(&a), weights(&b));
    handle.shutdown().await.unwrap();
}
