//! The worker under test over real TCP: a keyspace-1 shard in a memory store with rows in
//! L1 SSTs, an L0 file and the memtable; the DAGs and requests over it; an HTTP/1.1 client.
#![allow(dead_code, reason = "each test binary uses its own subset")]
#![expect(clippy::unwrap_used, reason = "HTTP client and fixture helpers")]

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use prost::Message;
use rcop_datum::key;
use rcop_exec::{Engine, EngineConfig};
use rcop_limiter::ManualMemoryProbe;
use rcop_proto::{REQ_TYPE_DAG, coprocessor, kvrpcpb, metapb, tipb};
use rcop_snap::{FileIds, Shard, ShardConfig};
use rcop_sst::{Backend, SstStore, StoreConfig};
use rcop_worker::{SnapScan, Worker, WorkerConfig, WorkerHandle};
use tokio::net::TcpStream;

use super::{TABLE, col_expr, column, int_ft, prefix, record_key, row};

/// The read ts of every request.
pub const START_TS: u64 = 1_000;

pub struct Reply {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Bytes,
}

pub async fn send(addr: SocketAddr, req: Request<Full<Bytes>>) -> Reply {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await.unwrap();
    let conn = tokio::spawn(conn);
    let resp = sender.send_request(req).await.unwrap();
    let status = resp.status().as_u16();
    let content_type =
        resp.headers().get(hyper::header::CONTENT_TYPE).map(|v| v.to_str().unwrap().to_owned());
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    drop(sender);
    let _ = conn.await;
    Reply { status, content_type, body }
}

pub async fn post(addr: SocketAddr, body: Vec<u8>, accept_pb: bool) -> Reply {
    post_with(addr, body, accept_pb, &[]).await
}

pub async fn post_with(
    addr: SocketAddr,
    body: Vec<u8>,
    accept_pb: bool,
    headers: &[(&str, String)],
) -> Reply {
    let mut b = Request::post(format!("http://{addr}/coprocessor"))
        .header("host", addr.to_string())
        .header("content-type", rcop_wire::CONTENT_TYPE_OCTET_STREAM);
    if accept_pb {
        b = b.header("accept", rcop_wire::CONTENT_TYPE_PROTOBUF);
    }
    for (name, value) in headers {
        b = b.header(*name, value);
    }
    send(addr, b.body(Full::new(Bytes::from(body))).unwrap()).await
}

pub async fn get(addr: SocketAddr, path: &str) -> Reply {
    let req = Request::get(format!("http://{addr}{path}"))
        .header("host", addr.to_string())
        .body(Full::new(Bytes::new()))
        .unwrap();
    send(addr, req).await
}

pub fn memory_store() -> Arc<SstStore> {
    Arc::new(SstStore::from_config(&StoreConfig::default().with_backend(Backend::Memory)).unwrap())
}

/// A shard of keyspace 1 whose rows sit in L1 SSTs, an L0 file and the memtable, with
/// updates, deletes and a version newer than the read ts.
pub async fn build_shard(store: Arc<SstStore>) -> Shard {
    let mut cfg = ShardConfig::new(7, prefix(1), prefix(2), 4).unwrap();
    cfg.block_size = 512;
    cfg.max_table_size = 8 << 10;
    let shard = Shard::with_store(cfg, store, FileIds::default()).unwrap();
    for h in 1..=600 {
        shard.put(&record_key(h), 10, 11, &row(h % 7, h * 10)).unwrap();
    }
    shard.flush().await.unwrap();
    shard.compact(0).await.unwrap();
    for h in 601..=900 {
        shard.put(&record_key(h), 20, 21, &row(h % 7, h * 10)).unwrap();
    }
    for h in (50..=600).step_by(50) {
        shard.put(&record_key(h), 30, 31, &row(6, -h)).unwrap();
    }
    for h in (7..=600).step_by(70) {
        shard.delete(&record_key(h), 32, 33).unwrap();
    }
    shard.flush().await.unwrap();
    for h in 901..=1000 {
        shard.put(&record_key(h), 40, 41, &row(h % 7, h * 10)).unwrap();
    }
    shard.put(&record_key(5), 2_000, 2_001, &row(0, 0)).unwrap(); // invisible at START_TS
    let stats = shard.stats();
    assert!(stats.level_tables[0] > 1, "several L1 tables: {stats:?}");
    assert_eq!(stats.l0_files, 1);
    assert!(stats.mem_versions > 100);
    shard
}

pub fn int_const(x: i64) -> tipb::Expr {
    let mut v = Vec::new();
    rcop_datum::codec::encode_i64(&mut v, x);
    tipb::Expr {
        tp: Some(1),
        val: Some(v.into()),
        field_type: Some(int_ft()),
        ..Default::default()
    }
}

/// DECIMAL(41, 0): SUM of a BIGINT.
pub fn sum_ft() -> tipb::FieldType {
    tipb::FieldType { tp: Some(246), flen: Some(41), ..int_ft() }
}

/// TableScan(handle, c1, c2) → Selection(c1 > 2) → HashAgg(count(1), sum(c2)) group by c1.
pub fn agg_dag() -> tipb::DagRequest {
    let scan = tipb::Executor {
        tp: Some(tipb::ExecType::TypeTableScan as i32),
        tbl_scan: Some(tipb::TableScan {
            table_id: Some(TABLE),
            columns: vec![column(-1, true), column(1, false), column(2, false)],
            ..Default::default()
        }),
        ..Default::default()
    };
    let gt = tipb::Expr {
        tp: Some(10000),
        sig: Some(120), // GTInt
        field_type: Some(int_ft()),
        children: vec![col_expr(1), int_const(2)],
        ..Default::default()
    };
    let selection = tipb::Executor {
        tp: Some(tipb::ExecType::TypeSelection as i32),
        selection: Some(Box::new(tipb::Selection { conditions: vec![gt], ..Default::default() })),
        ..Default::default()
    };
    let agg = |tp: i32, child: tipb::Expr| tipb::Expr {
        tp: Some(tp),
        field_type: Some(if tp == 3001 { int_ft() } else { sum_ft() }),
        children: vec![child],
        ..Default::default()
    };
    let aggregation = tipb::Executor {
        tp: Some(tipb::ExecType::TypeAggregation as i32),
        aggregation: Some(Box::new(tipb::Aggregation {
            group_by: vec![col_expr(1)],
            agg_func: vec![agg(3001, int_const(1)), agg(3002, col_expr(2))],
            ..Default::default()
        })),
        ..Default::default()
    };
    tipb::DagRequest {
        executors: vec![scan, selection, aggregation],
        output_offsets: vec![0, 1, 2],
        time_zone_offset: Some(0),
        flags: Some(0),
        encode_type: Some(tipb::EncodeType::TypeDefault as i32),
        ..Default::default()
    }
}

/// A plain scan of every row (no aggregation), so paging and scan counters show.
pub fn scan_dag() -> tipb::DagRequest {
    let mut dag = agg_dag();
    dag.executors.truncate(1);
    dag
}

pub fn table_range() -> coprocessor::KeyRange {
    let mut start = prefix(1);
    key::encode_record_prefix(&mut start, TABLE);
    let end = key::prefix_next(&start);
    coprocessor::KeyRange { start: start.into(), end: end.into() }
}

pub fn cop_request(dag: &tipb::DagRequest) -> coprocessor::Request {
    coprocessor::Request {
        context: Some(kvrpcpb::Context {
            region_id: 7,
            region_epoch: Some(metapb::RegionEpoch { conf_ver: 1, version: 3 }),
            keyspace_id: Some(1),
            max_execution_duration_ms: 10_000,
            ..Default::default()
        }),
        tp: REQ_TYPE_DAG,
        data: dag.encode_to_vec().into(),
        ranges: vec![table_range()],
        start_ts: START_TS,
        paging_size: u64::from(u32::MAX),
        ..Default::default()
    }
}

/// The engine run locally on the shard's own snapshot.
pub fn run_locally(
    shard: &Shard,
    req: &coprocessor::Request,
    max_resp: usize,
) -> coprocessor::Response {
    let snap = shard.snapshot();
    let mut scan = SnapScan::new(snap.scanner(req.start_ts));
    Engine::new(EngineConfig::default().with_max_response_bytes(max_resp)).handle(req, &mut scan)
}

pub fn test_config() -> WorkerConfig {
    WorkerConfig::from_toml("addr = \"127.0.0.1:0\"\ncop-block-cache-size = \"16MiB\"").unwrap()
}

pub async fn start(
    config: WorkerConfig,
    store: Arc<SstStore>,
    used: u64,
    limit: u64,
) -> WorkerHandle {
    let worker = Worker::builder(config)
        .store(store)
        .memory_probe(Arc::new(ManualMemoryProbe::new(used, limit)))
        .cores(2)
        .build()
        .unwrap();
    worker.bind().await.unwrap().spawn()
}

pub fn decode_response(body: &Bytes) -> coprocessor::Response {
    coprocessor::Response::decode(body.clone()).unwrap()
}
