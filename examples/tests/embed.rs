//! Both halves embedded as a host would, through the public API only:
//!
//! - the worker half mounted as a `WorkerService` in the host worker's own Tokio runtime,
//!   its metrics on a host registry that already holds TiKV's metric names;
//! - the storage-node half (`Offloader` over `ShardSource`) with a host transport that is
//!   not hyper (it hands the request to the worker's service in process), its metrics on
//!   the node's host registry beside TiKV's own `tikv_coprocessor_request_error`, driven
//!   from a plain thread with `futures::executor::block_on` — no Tokio runtime there.

#![expect(clippy::unwrap_used, reason = "test setup")]

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::executor::block_on;
use http_body_util::BodyExt;
use prometheus::{IntCounterVec, Opts, Registry};
use prost::Message;
use rcop_datum::key;
use rcop_datum::row::RowEncoder;
use rcop_exec::Engine;
use rcop_offload::{
    BoxFuture, Config, Dispatch, LocalReason, Offloader, Post, ShardSource, Transport,
    TransportError, TransportReply,
};
use rcop_proto::{coprocessor, kvrpcpb, tipb};
use rcop_snap::{FileIds, Shard, ShardConfig};
use rcop_sst::{Backend, SstStore, StoreConfig};
use rcop_worker::{SnapScan, Worker, WorkerConfig, WorkerService};

const TABLE: i64 = 12;
const PREFIX: &[u8] = b"x\0\0\x01";

/// The host's own transport: the worker fork serves in the same process, so a POST is a
/// call of its service on its runtime.
#[derive(Debug)]
struct InProcess {
    runtime: tokio::runtime::Handle,
    service: WorkerService,
}

impl Transport for InProcess {
    fn post<'a>(&'a self, post: Post<'a>) -> BoxFuture<'a, Result<TransportReply, TransportError>> {
        let request = http::Request::post(post.url)
            .header(http::header::CONTENT_TYPE, "application/octet-stream")
            .header(http::header::ACCEPT, "application/protobuf")
            .body(http_body_util::Full::new(post.body))
            .map_err(|e| TransportError::BadRequest(e.to_string()));
        let service = self.service.clone();
        Box::pin(async move {
            let request = request?;
            let task = self.runtime.spawn(async move { service.handle(request).await });
            let response = task.await.map_err(TransportError::network)?;
            let status = response.status().as_u16();
            let content_type = response
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let body = response.into_body().collect().await.map_err(TransportError::network)?;
            Ok(TransportReply::new(status, content_type, body.to_bytes()))
        })
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(async move { std::thread::sleep(duration) })
    }
}

fn host_registry() -> Registry {
    let registry = Registry::new();
    let tikv = IntCounterVec::new(
        Opts::new("tikv_coprocessor_request_error", "Total number of push down request error."),
        &["reason"],
    )
    .unwrap();
    registry.register(Box::new(tikv)).unwrap();
    registry
}

fn record(h: i64) -> Vec<u8> {
    let mut k = PREFIX.to_vec();
    key::encode_record_key(&mut k, TABLE, h);
    k
}

fn column(id: i64, tp: i32) -> tipb::ColumnInfo {
    tipb::ColumnInfo { column_id: Some(id), tp: Some(tp), ..Default::default() }
}

fn request(conditions: Vec<tipb::Expr>, start_ts: u64) -> coprocessor::Request {
    let mut executors = vec![tipb::Executor {
        tp: Some(tipb::ExecType::TypeTableScan as i32),
        tbl_scan: Some(tipb::TableScan {
            table_id: Some(TABLE),
            columns: vec![column(1, 8), column(2, 15)],
            ..Default::default()
        }),
        ..Default::default()
    }];
    if !conditions.is_empty() {
        executors.push(tipb::Executor {
            tp: Some(tipb::ExecType::TypeSelection as i32),
            selection: Some(Box::new(tipb::Selection { conditions, ..Default::default() })),
            ..Default::default()
        });
    }
    let dag = tipb::DagRequest {
        executors,
        output_offsets: vec![0, 1],
        encode_type: Some(tipb::EncodeType::TypeChunk as i32),
        ..Default::default()
    };
    coprocessor::Request {
        context: Some(kvrpcpb::Context {
            region_id: 1,
            keyspace_id: Some(1),
            max_execution_duration_ms: 30_000,
            ..Default::default()
        }),
        tp: rcop_proto::REQ_TYPE_DAG,
        data: dag.encode_to_vec().into(),
        start_ts,
        ranges: vec![coprocessor::KeyRange {
            start: record(i64::MIN).into(),
            end: record(i64::MAX).into(),
        }],
        ..Default::default()
    }
}

fn aes_on_c2() -> tipb::Expr {
    let varchar = tipb::FieldType { tp: Some(15), collate: Some(-46), ..Default::default() };
    let mut off = Vec::new();
    rcop_datum::codec::encode_i64(&mut off, 1);
    tipb::Expr {
        tp: Some(10000),
        sig: Some(4502), // AesEncrypt: TiKV does not evaluate it either
        field_type: Some(tipb::FieldType { tp: Some(8), ..Default::default() }),
        children: vec![
            tipb::Expr {
                tp: Some(201),
                val: Some(off.into()),
                field_type: Some(varchar.clone()),
                ..Default::default()
            },
            tipb::Expr {
                tp: Some(6),
                val: Some(Bytes::from_static(b"^r1")),
                field_type: Some(varchar),
                ..Default::default()
            },
        ],
        ..Default::default()
    }
}

fn counter(registry: &Registry, name: &str, label: (&str, &str)) -> u64 {
    registry
        .gather()
        .iter()
        .filter(|f| f.name() == name)
        .flat_map(|f| f.get_metric().iter())
        .filter(|m| m.get_label().iter().any(|l| l.name() == label.0 && l.value() == label.1))
        .map(|m| m.get_counter().get_value() as u64)
        .sum()
}

#[test]
fn both_halves_embed_through_the_public_api() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(
        SstStore::from_config(
            &StoreConfig::default().with_backend(Backend::Local { root: dir.path().to_path_buf() }),
        )
        .unwrap(),
    );
    // The worker fork: its runtime, its registry (with TiKV's names), our service mounted.
    let worker_runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let worker_registry = host_registry();
    let worker = Worker::builder(WorkerConfig::default())
        .store(store.clone())
        .registry(worker_registry.clone())
        .compute_threads(2)
        .build()
        .unwrap();
    let service = WorkerService::new(Arc::new(worker));

    // The storage node: a shard with files in the store and rows still in its memtable.
    let shard = Shard::with_store(
        ShardConfig::new(1, PREFIX, &b"x\0\0\x02"[..], 4).unwrap(),
        store,
        FileIds::starting_at(1),
    )
    .unwrap();
    let mut value = Vec::new();
    for h in 1..=4000i64 {
        value.clear();
        let text = format!("r{h}");
        RowEncoder::new().int(1, 7 * h).bytes(2, text.as_bytes()).finish(&mut value).unwrap();
        shard.put(&record(h), 10, 11, &value).unwrap();
        if h == 3900 {
            // The host's engine works on its own runtime; the dispatching thread has none.
            worker_runtime.block_on(async {
                shard.flush().await.unwrap();
                shard.compact(0).await.unwrap();
            });
        }
    }
    let node_registry = host_registry();
    let config = Config::from_toml_str(
        "remote-coprocessor-addr = \"http://worker.in-process/coprocessor\"\n\
         remote-coprocessor-min-blocks-size = \"1KiB\"\n",
    )
    .unwrap();
    let transport = Arc::new(InProcess { runtime: worker_runtime.handle().clone(), service });
    let offloader =
        Offloader::builder(config).transport(transport).registry(&node_registry).build().unwrap();
    assert!(tokio::runtime::Handle::try_current().is_err(), "no runtime on this thread");

    // Offloaded, answered like local execution.
    let req = request(Vec::new(), 100);
    let source = ShardSource::new(&shard);
    let answer = match block_on(offloader.dispatch(&req, &source)) {
        Dispatch::Respond { answer, worker, .. } => {
            assert_eq!(worker.as_deref(), Some("http://worker.in-process/coprocessor"));
            answer
        }
        other => panic!("expected a remote answer, got {other:?}"),
    };
    let snapshot = shard.snapshot();
    let local = Engine::default().handle(&req, &mut SnapScan::new(snapshot.scanner(100)));
    let remote = answer.response().clone();
    assert!(remote.other_error.is_empty(), "{}", remote.other_error);
    let (got, want) = (
        tipb::SelectResponse::decode(remote.data.clone()).unwrap(),
        tipb::SelectResponse::decode(local.data).unwrap(),
    );
    assert_eq!(rcop_exec::count_rows(&got, 2).unwrap(), 4000);
    assert_eq!(got.chunks, want.chunks);

    // The same through the raw-bytes API: the worker's bytes come back unchanged.
    match block_on(offloader.dispatch_raw(Bytes::from(req.encode_to_vec()), &source)) {
        Dispatch::Respond { answer, .. } => {
            let raw = answer.into_bytes();
            assert_eq!(coprocessor::Response::decode(raw).unwrap().data, remote.data);
        }
        other => panic!("{other:?}"),
    }

    // What the worker cannot run stays here, with its reason counted.
    let req = request(vec![aes_on_c2()], 100);
    match block_on(offloader.dispatch(&req, &source)) {
        Dispatch::Local { reason: LocalReason::Unsupported { detail, .. }, .. } => {
            assert_eq!(detail, "AesEncrypt (4502)");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        counter(&node_registry, "rcop_offload_local_total", ("reason", "unsupported_scalar_func")),
        1
    );
    assert_eq!(counter(&node_registry, "rcop_offload_requests_total", ("path", "remote")), 2);
    // Both registries still hold TiKV's metric as the host registered it.
    for r in [&node_registry, &worker_registry] {
        let again =
            IntCounterVec::new(Opts::new("tikv_coprocessor_request_error", "x"), &["reason"])
                .unwrap();
        assert!(r.register(Box::new(again)).is_err(), "TiKV's metric is still the host's");
    }
    let worker_requests = worker_registry
        .gather()
        .iter()
        .find(|f| f.name() == "tikv_worker_remote_cop_dag_request_counter")
        .and_then(|f| {
            f.get_metric()
                .iter()
                .find(|m| m.get_label().iter().any(|l| l.name() == "path" && l.value() == "http"))
                .map(|m| m.get_counter().get_value() as u64)
        });
    assert_eq!(worker_requests, Some(2));
    drop(worker_runtime);
}
