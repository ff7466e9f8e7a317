//! Issue 7 §4 and issue 14: every DAG of the executor corpus (`testdata/exec/*.toml`) gives
//! identical results executed locally, offloaded to a real worker over HTTP on 127.0.0.1 (the
//! second way), and sent the first way: a tonic client playing TiDB sends the request to the
//! worker's gRPC `cop-addr`, and the worker fetches the delegate from a storage node's
//! `DelegateCoprocessor` endpoint serving the same shards.
//!
//! Each corpus table is written through a storage-node [`Shard`] (rows in L1 SSTs, an L0 file
//! and the memtable, with older versions shadowed by newer ones and versions newer than the
//! read ts), and each case runs in both response encodings:
//!
//! - locally: `Engine::handle` over [`SnapScan`] of the shard's snapshot;
//! - offloaded: the shard exports an envelope, which is POSTed to a `rcop_worker` worker that
//!   reads the same (in-memory) object store;
//! - delegated: the request (region id = the shard's id, leader on store 1) goes to the
//!   worker over gRPC; the node's delegate service answers from the shard.
//!
//! The two `coprocessor.Response.data` are compared after clearing
//! `ExecutorExecutionSummary.time_processed_ns`, the only field that measures wall time (the
//! corpus DAGs ask for execution summaries); everything else, rows, errors, warnings, produced
//! rows and iteration counts, must be identical. The local answer is also checked against the
//! engine over the corpus' own in-memory table, so the layered shard holds exactly the table.
#![expect(clippy::unwrap_used, reason = "fixture setup in helpers outside #[test] fns")]

#[path = "../../crates/exec/tests/support/mod.rs"]
mod support;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use prost::Message;
use rcop_exec::{Engine, EngineConfig, KeyRange, KvBatch, ScanSource};
use rcop_limiter::ManualMemoryProbe;
use rcop_offload::{DelegateHost, ShardSource, SourceError};
use rcop_proto::tikvpb::tikv_client::TikvClient;
use rcop_proto::{coprocessor, errorpb, kvrpcpb, metapb, tipb};
use rcop_snap::{FileIds, LockCheck, NoLocks, Shard, ShardConfig};
use rcop_sst::{Backend, SstStore, StoreConfig};
use rcop_wire::{EnvelopeWriter, MemDataFormat};
use rcop_worker::{GrpcHandle, GrpcServer, SnapScan, Worker, WorkerConfig, WorkerHandle};
use support::corpus::{self, Table, build_dag, build_table};
use support::dag::{request, table_range};
use tokio::net::TcpStream;

/// Read ts of every request (`support::dag::request`).
const READ_TS: u64 = 100;

/// POSTs `body` to the worker's `/coprocessor` on a fresh connection; returns the status
/// and the decoded `coprocessor.Response` (200, or 500 with a protobuf body).
async fn post(addr: SocketAddr, body: Vec<u8>) -> (u16, coprocessor::Response) {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await.unwrap();
    let conn = tokio::spawn(conn);
    let req = Request::post(format!("http://{addr}/coprocessor"))
        .header("host", addr.to_string())
        .header("content-type", rcop_wire::CONTENT_TYPE_OCTET_STREAM)
        .header("accept", rcop_wire::CONTENT_TYPE_PROTOBUF)
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let resp = sender.send_request(req).await.unwrap();
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    drop(sender);
    let _ = conn.await;
    assert!(
        status == 200 || status == 500,
        "worker answered {status}: {}",
        String::from_utf8_lossy(&body)
    );
    (status, coprocessor::Response::decode(body).unwrap())
}

/// Writes the table's rows through a new shard over exactly the table's record range.
///
/// The first third of the rows (in key order) ends in L1 SSTs (flush + compaction), the
/// second third in an L0 file, the rest in the memtable. Rows of the memtable third also get
/// an older, shadowed version in L1 (holding another row's value), and a few rows a version
/// committed after the read ts: neither may show in any answer.
async fn shard_of(t: &Table, id: u64, store: Arc<SstStore>) -> Shard {
    let range = table_range(t.spec.id, t.spec.keyspace);
    let inner_key_off = if t.spec.keyspace.is_some() { 4 } else { 0 };
    let mut cfg =
        ShardConfig::new(id, range.start.to_vec(), range.end.to_vec(), inner_key_off).unwrap();
    cfg.block_size = 256;
    cfg.max_table_size = 2 << 10;
    let shard = Shard::with_store(cfg, store, FileIds::starting_at(id * 1_000_000)).unwrap();

    let mut all = KvBatch::new();
    let mut scanner = t.store.scanner();
    scanner.start(&KeyRange::new(Vec::new(), Vec::new()), false).unwrap();
    scanner.next_batch(usize::MAX, &mut all).unwrap();
    assert_eq!(all.len(), t.store.len());
    let pairs: Vec<(&[u8], &[u8])> = all.iter().collect();
    let n = pairs.len();
    let (l1, l0) = (n / 3, 2 * n / 3);
    let filler = pairs.first().map_or(&b"x"[..], |p| p.1);
    for (k, v) in &pairs[..l1] {
        shard.put(k, 10, 11, v).unwrap();
    }
    for (k, _) in &pairs[l0..] {
        shard.put(k, 8, 9, filler).unwrap(); // shadowed by the memtable version
    }
    shard.flush().await.unwrap();
    shard.compact(0).await.unwrap();
    for (k, v) in &pairs[l1..l0] {
        shard.put(k, 20, 21, v).unwrap();
    }
    shard.flush().await.unwrap();
    for (k, v) in &pairs[l0..] {
        shard.put(k, 30, 31, v).unwrap();
    }
    for (k, _) in pairs.iter().step_by(3) {
        shard.put(k, READ_TS + 50, READ_TS + 51, filler).unwrap(); // invisible at READ_TS
    }
    let stats = shard.stats();
    if n >= 3 {
        assert!(stats.level_tables[0] >= 1, "{}: L1 tables: {stats:?}", t.spec.name);
        assert_eq!(stats.l0_files, 1, "{}: {stats:?}", t.spec.name);
    }
    shard
}

/// The envelope a storage node sends for `req` over `shard`.
fn export(shard: &Shard, req: &coprocessor::Request) -> Vec<u8> {
    let mut body = Vec::new();
    let mut writer = EnvelopeWriter::new(&mut body, req).unwrap();
    let mut mem = writer.mem_data(MemDataFormat::V2);
    let cs = shard.export(&req.ranges, &LockCheck::si(req.start_ts), &NoLocks, &mut mem).unwrap();
    mem.finish().unwrap();
    writer.finish(&cs).unwrap();
    body
}

/// `data` with the execution summaries' wall times cleared, re-encoded.
fn without_times(data: &[u8]) -> Vec<u8> {
    let mut sel = tipb::SelectResponse::decode(data).unwrap();
    for s in &mut sel.execution_summaries {
        s.time_processed_ns = None;
    }
    sel.encode_to_vec()
}

/// The request for a case on region (shard) `region`, as a storage node sends it (context,
/// paging_size = u32::MAX) and as TiDB sends it the first way (the leader peer on store 1).
fn cop_request(t: &Table, dag: &tipb::DagRequest, region: u64) -> coprocessor::Request {
    let mut req = request(dag, vec![table_range(t.spec.id, t.spec.keyspace)]);
    assert_eq!(req.start_ts, READ_TS);
    req.context = Some(kvrpcpb::Context {
        region_id: region,
        region_epoch: Some(metapb::RegionEpoch { conf_ver: 1, version: 1 }),
        peer: Some(metapb::Peer { id: region * 10, store_id: 1, ..Default::default() }),
        keyspace_id: t.spec.keyspace,
        max_execution_duration_ms: 10_000,
        ..Default::default()
    });
    req.paging_size = u64::from(u32::MAX);
    req
}

/// A storage node's delegate host over the corpus shards, by region id.
struct Shards(HashMap<u64, Shard>);

impl DelegateHost for Shards {
    type Source<'a> = ShardSource<'a>;

    fn source(&self, context: Option<&kvrpcpb::Context>) -> Result<ShardSource<'_>, SourceError> {
        let region = context.map_or(0, |c| c.region_id);
        self.0.get(&region).map(ShardSource::new).ok_or_else(|| {
            SourceError::Region(Box::new(errorpb::Error {
                message: format!("region {region} not found"),
                ..Default::default()
            }))
        })
    }
}

/// A worker serving HTTP (the second way) and gRPC (the first way, its `[delegate] stores`
/// naming the node's delegate endpoint as store 1).
async fn start_worker(store: Arc<SstStore>, node: SocketAddr) -> (WorkerHandle, GrpcHandle) {
    let config = WorkerConfig::from_toml(&format!(
        "addr = \"127.0.0.1:0\"\ncop-block-cache-size = \"16MiB\"\n\
         [delegate]\nstores = {{ \"1\" = \"{node}\" }}"
    ))
    .unwrap();
    let server = Worker::builder(config)
        .store(store)
        .memory_probe(Arc::new(ManualMemoryProbe::new(1 << 30, 8 << 30)))
        .cores(2)
        .build()
        .unwrap()
        .bind()
        .await
        .unwrap();
    let grpc = GrpcServer::bind(Arc::clone(server.worker()), SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap()
        .spawn()
        .unwrap();
    (server.spawn(), grpc)
}

/// Serves the node's `DelegateCoprocessor` over `shards` on a free loopback port.
async fn serve_delegates(shards: Arc<Shards>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let incoming = tonic::transport::server::TcpIncoming::from(listener);
        let svc = rcop_offload::DelegateService::new(shards).into_server();
        let _ = tonic::transport::Server::builder().serve_with_incoming(svc, incoming).await;
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_corpus_dag_gives_identical_results_locally_offloaded_and_delegated() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata/exec");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus in {dir}");

    let store = Arc::new(
        SstStore::from_config(&StoreConfig::default().with_backend(Backend::Memory)).unwrap(),
    );
    // Every corpus table on a shard of its own (region id = shard id), before serving.
    let mut corpus = Vec::new();
    let mut shards = HashMap::new();
    let mut shard_id = 1;
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let file: corpus::File = toml::from_str(&text).unwrap();
        let mut tables = Vec::new();
        for spec in &file.table {
            let t = build_table(spec);
            shards.insert(shard_id, shard_of(&t, shard_id, Arc::clone(&store)).await);
            tables.push((t, shard_id));
            shard_id += 1;
        }
        corpus.push((f, file, tables));
    }
    let shards = Arc::new(Shards(shards));
    let node = serve_delegates(Arc::clone(&shards)).await;
    let (worker, grpc) = start_worker(Arc::clone(&store), node).await;
    let addr = worker.local_addr();
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{}", grpc.local_addr()))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut tidb = TikvClient::new(channel).max_decoding_message_size(usize::MAX);
    let engine = Engine::new(EngineConfig::default());

    let (mut corpus_size, mut cases_run, mut runs, mut errors, mut byte_equal) = (0, 0, 0, 0, 0);
    for (f, file, tables) in &corpus {
        corpus_size += file.case.len();
        for c in &file.case {
            let (t, region) = tables
                .iter()
                .find(|(t, _)| t.spec.name == c.table)
                .unwrap_or_else(|| panic!("{}: no table {}", c.name, c.table));
            let shard = &shards.0[region];
            let what = format!("{}:{}", f.file_name().unwrap().to_string_lossy(), c.name);
            for chunk in [false, true] {
                let (dag, _) = build_dag(t, c, chunk);
                let req = cop_request(t, &dag, *region);

                let snap = shard.snapshot();
                let mut scan = SnapScan::new(snap.scanner(req.start_ts));
                let local = engine.handle(&req, &mut scan);
                let reference = engine.handle(&req, &mut t.store.scanner());
                assert_eq!(local.other_error, reference.other_error, "{what} chunk={chunk}");
                assert_eq!(
                    without_times(&local.data),
                    without_times(&reference.data),
                    "{what} chunk={chunk}: the shard does not hold the corpus table"
                );

                let (status, remote) = post(addr, export(shard, &req)).await;
                assert_eq!(remote.other_error, local.other_error, "{what} chunk={chunk}");
                assert_eq!(status, if local.other_error.is_empty() { 200 } else { 500 });
                assert_eq!(remote.region_error, local.region_error, "{what} chunk={chunk}");
                assert_eq!(remote.range, local.range, "{what} chunk={chunk}");
                assert_eq!(
                    without_times(&remote.data),
                    without_times(&local.data),
                    "{what} chunk={chunk}: offloaded != local"
                );
                if remote.data == local.data {
                    byte_equal += 1;
                }

                let first = tidb.coprocessor(req.clone()).await.unwrap().into_inner();
                assert_eq!(first.other_error, local.other_error, "{what} chunk={chunk} (gRPC)");
                assert_eq!(first.region_error, local.region_error, "{what} chunk={chunk} (gRPC)");
                assert!(first.locked.is_none(), "{what} chunk={chunk} (gRPC)");
                assert_eq!(first.range, local.range, "{what} chunk={chunk} (gRPC)");
                assert_eq!(
                    without_times(&first.data),
                    without_times(&local.data),
                    "{what} chunk={chunk}: delegated != local"
                );

                let sel = tipb::SelectResponse::decode(local.data.clone()).unwrap();
                if let Some(want) = &c.error {
                    let got = sel.error.as_ref().and_then(|e| e.msg.clone()).unwrap_or_default();
                    assert!(got.contains(want.as_str()), "{what}: error {got:?}, want {want:?}");
                    errors += 1;
                } else {
                    assert!(sel.error.is_none(), "{what}: {:?}", sel.error);
                }
                runs += 1;
            }
            cases_run += 1;
        }
    }
    drop(tidb);
    grpc.shutdown().await.unwrap();
    worker.shutdown().await.unwrap();
    eprintln!(
        "corpus offload: {cases_run} cases, {runs} DAGs (TypeDefault + TypeChunk) each way, \
         {errors} expected errors, {byte_equal} byte-identical over HTTP before clearing \
         summary times"
    );
    assert_eq!(cases_run, corpus_size, "every corpus case ran");
    assert_eq!(runs, 2 * corpus_size);
}
