//! One request on many cores, end to end: a heavy request is cut into parts on the compute
//! pool (the metrics show them) and answers what the engine answers on one thread; light
//! requests and `cop-parallelism = 1` stay on one thread.

#![expect(clippy::unwrap_used, clippy::panic, reason = "test helpers over known-valid fixtures")]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use common::export;
use common::fixture::{agg_dag, build_shard, cop_request, memory_store, run_locally, scan_dag};
use prost::Message;
use rcop_limiter::ManualMemoryProbe;
use rcop_proto::{coprocessor, tipb};
use rcop_worker::{Worker, WorkerConfig};

fn worker(store: Arc<rcop_sst::SstStore>, extra: &str) -> Worker {
    let config =
        WorkerConfig::from_toml(&format!("cop-block-cache-size = \"16MiB\"\n{extra}")).unwrap();
    Worker::builder(config)
        .store(store)
        .memory_probe(Arc::new(ManualMemoryProbe::new(1 << 30, 16 << 30)))
        .cores(2)
        .compute_threads(2)
        .build()
        .unwrap()
}

/// The value of an unlabelled (or the one labelled) series in the metrics text.
fn metric(w: &Worker, series: &str) -> u64 {
    let text = String::from_utf8(w.metrics().encode_text()).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.trim().parse::<f64>().ok())
        .map_or(0, |v| v as u64)
}

async fn answer(w: &Worker, body: &[u8]) -> tipb::SelectResponse {
    let reply = w.handle_coprocessor(Bytes::copy_from_slice(body), true).await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    let resp = coprocessor::Response::decode(reply.body).unwrap();
    assert!(resp.other_error.is_empty() && resp.region_error.is_none(), "{resp:?}");
    assert!(resp.range.is_none(), "one page");
    tipb::SelectResponse::decode(resp.data).unwrap()
}

fn rows_data(sel: &tipb::SelectResponse) -> Vec<u8> {
    sel.chunks.iter().flat_map(|c| c.rows_data.as_deref().unwrap_or(&[]).to_vec()).collect()
}

/// `(count, sum)` per group of the fixture's aggregation, merged as TiDB's final
/// aggregation merges partial rows.
fn merged(sel: &tipb::SelectResponse) -> BTreeMap<i64, (i64, String)> {
    let datums = rcop_datum::Datum::decode_all(&rows_data(sel)).unwrap();
    let mut out: BTreeMap<i64, (i64, rcop_datum::Decimal)> = BTreeMap::new();
    for row in datums.chunks(3) {
        use rcop_datum::Datum;
        let (count, sum, key) = match row {
            [Datum::Uint(c), Datum::Decimal(s), Datum::Int(k)] => (*c as i64, *s, *k),
            [Datum::Int(c), Datum::Decimal(s), Datum::Int(k)] => (*c, *s, *k),
            other => panic!("unexpected row {other:?}"),
        };
        let e = out.entry(key).or_insert((0, rcop_datum::Decimal::zero()));
        e.0 += count;
        e.1 = e.1.add(&sum).into_result().unwrap();
    }
    out.into_iter().map(|(k, (c, s))| (k, (c, s.to_string()))).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heavy_requests_split_into_parts_and_answer_as_the_engine() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let w = worker(Arc::clone(&store), "cop-parallel-min-bytes = \"1KiB\"");

    // A plain scan: the rows in range order, byte for byte, and the same scan counts.
    let req = cop_request(&scan_dag());
    let body = export(&shard, &req);
    let whole = tipb::SelectResponse::decode(run_locally(&shard, &req, 32 << 20).data).unwrap();
    let split = answer(&w, &body).await;
    assert!(!rows_data(&whole).is_empty());
    assert_eq!(rows_data(&split), rows_data(&whole));
    assert_eq!(split.output_counts, whole.output_counts);
    assert_eq!(metric(&w, "rcop_worker_split_requests_total"), 1);
    assert_eq!(metric(&w, "rcop_worker_split_parts_total"), 2);

    // An aggregation: partial rows of both parts, equal after TiDB's final aggregation.
    let req = cop_request(&agg_dag());
    let body = export(&shard, &req);
    let whole = tipb::SelectResponse::decode(run_locally(&shard, &req, 32 << 20).data).unwrap();
    let split = answer(&w, &body).await;
    assert!(split.chunks.len() >= 2 || rows_data(&split).len() > rows_data(&whole).len());
    assert_eq!(merged(&split), merged(&whole));
    assert_eq!(metric(&w, "rcop_worker_split_requests_total"), 2);

    // A TopN whose order column is not an output column: the same rows.
    let mut dag = scan_dag();
    dag.executors.push(tipb::Executor {
        tp: Some(tipb::ExecType::TypeTopN as i32),
        top_n: Some(Box::new(tipb::TopN {
            order_by: vec![tipb::ByItem {
                expr: Some(common::col_expr(2)),
                desc: Some(true),
                ..Default::default()
            }],
            limit: Some(7),
            ..Default::default()
        })),
        ..Default::default()
    });
    dag.output_offsets = vec![0, 1];
    let req = cop_request(&dag);
    let body = export(&shard, &req);
    let whole = tipb::SelectResponse::decode(run_locally(&shard, &req, 32 << 20).data).unwrap();
    let split = answer(&w, &body).await;
    assert_eq!(rows_data(&split), rows_data(&whole));
    assert_eq!(metric(&w, "rcop_worker_split_requests_total"), 3);

    // A Limit: the first rows in range order. The second part stops once the first holds
    // the rows, if it is still running then (counted as skipped; timing decides whether).
    let mut dag = scan_dag();
    dag.executors.push(tipb::Executor {
        tp: Some(tipb::ExecType::TypeLimit as i32),
        limit: Some(Box::new(tipb::Limit { limit: Some(3), ..Default::default() })),
        ..Default::default()
    });
    let req = cop_request(&dag);
    let body = export(&shard, &req);
    let whole = tipb::SelectResponse::decode(run_locally(&shard, &req, 32 << 20).data).unwrap();
    let split = answer(&w, &body).await;
    assert!(!rows_data(&whole).is_empty());
    assert_eq!(rows_data(&split), rows_data(&whole));
    assert_eq!(metric(&w, "rcop_worker_split_requests_total"), 4);
    assert!(metric(&w, "rcop_worker_split_parts_skipped_total") <= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn light_requests_and_parallelism_one_stay_on_one_thread() {
    let store = memory_store();
    let shard = build_shard(Arc::clone(&store)).await;
    let req = cop_request(&agg_dag());
    let body = export(&shard, &req);
    let whole = tipb::SelectResponse::decode(run_locally(&shard, &req, 32 << 20).data).unwrap();

    // Under the default threshold (1 MiB): whole, counted as small.
    let w = worker(Arc::clone(&store), "");
    let got = answer(&w, &body).await;
    assert_eq!(rows_data(&got), rows_data(&whole));
    assert_eq!(metric(&w, "rcop_worker_split_requests_total"), 0);
    assert_eq!(metric(&w, "rcop_worker_unsplit_requests_total{reason=\"small\"}"), 1);

    // Splitting off: whole, and not counted.
    let w = worker(store, "cop-parallelism = 1\ncop-parallel-min-bytes = \"1KiB\"");
    let got = answer(&w, &body).await;
    assert_eq!(rows_data(&got), rows_data(&whole));
    assert_eq!(metric(&w, "rcop_worker_split_requests_total"), 0);
    assert_eq!(metric(&w, "rcop_worker_unsplit_requests_total{reason=\"small\"}"), 0);
}
