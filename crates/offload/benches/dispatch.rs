//! Per-request costs of the storage-node side.
//!
//! * `plan/*`: the decision rules on a 16-column table scan with a filter (DAG decode, pattern
//!   extraction, estimate, ageing) — paid by every DAG request on the storage node.
//! * `rendezvous_order/*`: ordering 3 and 16 workers for one shard.
//! * `roundtrip/*`: a whole `dispatch` of a remote request with a 1 KiB memtable export to a
//!   loopback worker answering an empty response, with the connection pool on (the default)
//!   and off (`pool-max-idle-per-host = 0`, upstream's setting). The difference is the cost of
//!   a TCP connect per request that pooling removes.

#![expect(clippy::unwrap_used, reason = "benchmark: a setup failure must abort the run")]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use prost::Message;
use rcop_offload::{
    Config, Dispatch, ManualClock, Offloader, RoutingKey, SnapshotSource, SourceError,
    rendezvous_order,
};
use rcop_proto::coprocessor::{KeyRange, Request, Response};
use rcop_proto::enginepb::ChangeSet;
use rcop_proto::kvrpcpb::Context;
use rcop_proto::tipb::{
    ColumnInfo, DagRequest, ExecType, Executor, Expr, ExprType, FieldType, Selection, TableScan,
};
use rcop_wire::MemDataWriter;

const NOW_MS: u64 = 1_700_000_000_000;

struct Source;

impl SnapshotSource for Source {
    fn estimated_range_blocks_size(&self, ranges: &[KeyRange]) -> Result<u64, SourceError> {
        Ok(ranges.len() as u64 * (64 << 20))
    }

    fn export(&self, _: &Request, mem: &mut MemDataWriter<'_>) -> Result<ChangeSet, SourceError> {
        for i in 0..8u64 {
            mem.push(&i.to_be_bytes(), 1, 2, &[0u8; 100]);
        }
        Ok(ChangeSet { shard_id: 1, ..ChangeSet::default() })
    }
}

fn request() -> Request {
    let columns = (1..=16)
        .map(|id| ColumnInfo { column_id: Some(id), tp: Some(8), ..ColumnInfo::default() })
        .collect();
    let col = |o: u64| Expr {
        tp: Some(ExprType::ColumnRef as i32),
        val: Some((o ^ (1 << 63)).to_be_bytes().to_vec().into()),
        field_type: Some(FieldType { tp: Some(8), ..FieldType::default() }),
        ..Expr::default()
    };
    let dag = DagRequest {
        executors: vec![
            Executor {
                tp: Some(ExecType::TypeTableScan as i32),
                tbl_scan: Some(TableScan { table_id: Some(108), columns, ..TableScan::default() }),
                ..Executor::default()
            },
            Executor {
                tp: Some(ExecType::TypeSelection as i32),
                selection: Some(Box::new(Selection {
                    conditions: vec![Expr {
                        tp: Some(ExprType::ScalarFunc as i32),
                        sig: Some(100), // LTInt
                        children: vec![col(4), col(6)],
                        field_type: Some(FieldType { tp: Some(8), ..FieldType::default() }),
                        ..Expr::default()
                    }],
                    ..Selection::default()
                })),
                ..Executor::default()
            },
        ],
        ..DagRequest::default()
    };
    Request {
        context: Some(Context { region_id: 9, keyspace_id: Some(1), ..Context::default() }),
        tp: rcop_proto::REQ_TYPE_DAG,
        data: dag.encode_to_vec().into(),
        start_ts: NOW_MS << 18,
        ranges: vec![KeyRange {
            start: b"x\0\0\x01t\x80\0\0\0\0\0\0\x6c_r".to_vec().into(),
            end: b"x\0\0\x01t\x80\0\0\0\0\0\0\x6c_s".to_vec().into(),
        }],
        ..Request::default()
    }
}

fn offloader(urls: &[String], extra: &str) -> Offloader {
    let list: Vec<String> = urls.iter().map(|u| format!("{u:?}")).collect();
    let config =
        Config::from_toml_str(&format!("remote-coprocessor-addr = [{}]\n{extra}", list.join(",")))
            .unwrap();
    Offloader::builder(config).clock(Arc::new(ManualClock::new(NOW_MS))).build().unwrap()
}

fn plan(c: &mut Criterion) {
    let o = offloader(&["http://127.0.0.1:1".to_owned()], "");
    let req = request();
    assert!(
        o.plan(&req, &Source).unwrap().decision.is_remote(),
        "the bench plans a remote request"
    );
    c.bench_function("plan/table_scan_selection", |b| {
        b.iter(|| black_box(o.plan(black_box(&req), &Source).unwrap()))
    });
}

fn rendezvous(c: &mut Criterion) {
    for n in [3usize, 16] {
        let workers: Vec<String> =
            (0..n).map(|i| format!("http://10.0.0.{i}:19000/coprocessor")).collect();
        let key = RoutingKey { keyspace_id: 1, shard_id: 42 };
        c.bench_function(&format!("rendezvous_order/{n}"), |b| {
            b.iter(|| black_box(rendezvous_order(black_box(&workers), key)))
        });
    }
}

fn roundtrip(c: &mut Criterion) {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let url = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let service = service_fn(|req: hyper::Request<hyper::body::Incoming>| async {
                        let _ = req.into_body().collect().await;
                        let body = Response::default().encode_to_vec();
                        Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(
                            Bytes::from(body),
                        )))
                    });
                    let _ =
                        http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        format!("http://{addr}/coprocessor")
    });
    let req = request();
    // Short windows: the unpooled case opens a TCP connection per iteration.
    let mut group = c.benchmark_group("roundtrip");
    group.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    for (name, extra) in
        [("pooled", ""), ("unpooled", "remote-coprocessor-pool-max-idle-per-host = 0")]
    {
        let o = offloader(std::slice::from_ref(&url), extra);
        group.bench_function(name, |b| {
            b.iter(|| {
                let d = rt.block_on(o.dispatch(&req, &Source));
                assert!(matches!(d, Dispatch::Respond { worker: Some(_), .. }));
            })
        });
    }
    group.finish();
}

criterion_group!(benches, plan, rendezvous, roundtrip);
criterion_main!(benches);
