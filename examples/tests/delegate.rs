//! Issue 14: the first way over real gRPC on loopback — a tonic client playing TiDB sends
//! `coprocessor.Request`s (region id, epoch, peer store id) to a worker's `cop-addr`; the
//! worker asks the storage node for a delegate, rebuilds, executes and answers.
//!
//! - TPC-H Q1, Q6 and the other example DAGs equal the node's local execution;
//! - a region error, a store mismatch, a lock and a busy node reach the client in the same
//!   fields of `coprocessor.Response`;
//! - a node killed mid-delegate is retried (and answers once it is back), or the client gets
//!   a retryable `server_is_busy` within the deadline;
//! - the PD resolver against an in-process `pdpb.PD/GetStore`, cached and invalidated;
//! - methods a side does not serve answer UNIMPLEMENTED.
#![expect(clippy::unwrap_used, reason = "fixture setup in helpers outside #[test] fns")]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rcop_examples::{LoadSpec, NodeConfig, StorageNode, dags};
use rcop_limiter::ManualMemoryProbe;
use rcop_offload::{DelegateHost, SnapshotSource, SourceError};
use rcop_proto::coprocessor::{self, DelegateRequest, KeyRange};
use rcop_proto::enginepb::ChangeSet;
use rcop_proto::kvrpcpb::Context;
use rcop_proto::pdpb::pd_server::{Pd, PdServer};
use rcop_proto::pdpb::{self, GetStoreRequest, GetStoreResponse};
use rcop_proto::tikvpb::tikv_client::TikvClient;
use rcop_proto::{metapb, tipb};
use rcop_snap::{Lock, LockType};
use rcop_sst::{Backend, SstStore, StoreConfig};
use rcop_wire::MemDataWriter;
use rcop_worker::delegate::{DelegateConfig, StaticResolver};
use rcop_worker::{DelegateClient, GrpcHandle, GrpcServer, Worker, WorkerConfig};
use tonic::transport::{Channel, Endpoint};

const STORE_ID: u64 = 1;
const REGION_ID: u64 = 7;

fn memory_store() -> Arc<SstStore> {
    Arc::new(SstStore::from_config(&StoreConfig::default().with_backend(Backend::Memory)).unwrap())
}

/// A storage node (store 1) over `store`, loaded with TPC-H lineitem at SF 0.002 and a
/// 250-row memtable tail.
async fn node(store: &Arc<SstStore>, max_concurrency: usize) -> Arc<StorageNode> {
    let mut cfg = NodeConfig { store_id: STORE_ID, ..NodeConfig::default() };
    cfg.delegate.max_concurrency = max_concurrency;
    let node = StorageNode::new(&cfg, Arc::clone(store)).unwrap();
    let spec = LoadSpec { scale_factor: 0.002, memtable_tail: 250, ..LoadSpec::default() };
    node.load(&spec, dags::tso_now(), |_| {}).await.unwrap();
    Arc::new(node)
}

/// A gRPC server on its own runtime, so dropping it kills every connection at once, as a
/// killed process would.
struct Served {
    addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Served {
    fn kill(mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// Serves the delegate endpoint of `host` on `addr` (port 0: a free one).
fn serve_delegates<H: DelegateHost>(
    host: Arc<H>,
    addr: SocketAddr,
    max_concurrency: usize,
) -> Served {
    // A node served again on the port of one just killed: its runtime drops the old
    // listener in the background, so the port can take a moment to come free.
    let mut tries = 0;
    let listener = loop {
        match std::net::TcpListener::bind(addr) {
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse && tries < 200 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            r => break r.unwrap(),
        }
    };
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    runtime.spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let incoming = tonic::transport::server::TcpIncoming::from(listener);
        let svc = rcop_offload::DelegateService::new(host)
            .with_permits(rcop_offload::DelegatePermits::new(max_concurrency))
            .into_server();
        let _ = tonic::transport::Server::builder()
            .serve_with_incoming_shutdown(svc, incoming, std::future::pending())
            .await;
    });
    Served { addr, runtime: Some(runtime) }
}

fn serve_node(node: &Arc<StorageNode>, addr: SocketAddr, max_concurrency: usize) -> Served {
    serve_delegates(Arc::clone(node), addr, max_concurrency)
}

fn worker_config(delegate: &str) -> WorkerConfig {
    WorkerConfig::from_toml(&format!(
        "addr = \"127.0.0.1:0\"\ncop-block-cache-size = \"16MiB\"\n[delegate]\n\
         backoff-base = \"10ms\"\nbackoff-max = \"100ms\"\n{delegate}"
    ))
    .unwrap()
}

fn build_worker(store: &Arc<SstStore>, config: WorkerConfig) -> Arc<Worker> {
    Arc::new(
        Worker::builder(config)
            .store(Arc::clone(store))
            .memory_probe(Arc::new(ManualMemoryProbe::new(1 << 30, 8 << 30)))
            .cores(2)
            .build()
            .unwrap(),
    )
}

/// A worker whose `[delegate] stores` maps store 1 (and 2, for the mismatch case) to `node`.
async fn worker_for(store: &Arc<SstStore>, node: SocketAddr) -> (GrpcHandle, Arc<Worker>) {
    let config = worker_config(&format!("stores = {{ \"1\" = \"{node}\", \"2\" = \"{node}\" }}"));
    let worker = build_worker(store, config);
    let handle = GrpcServer::bind(Arc::clone(&worker), SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap()
        .spawn()
        .unwrap();
    (handle, worker)
}

async fn tidb(addr: SocketAddr) -> TikvClient<Channel> {
    let channel = Endpoint::from_shared(format!("http://{addr}")).unwrap().connect().await.unwrap();
    TikvClient::new(channel).max_decoding_message_size(usize::MAX)
}

/// The request TiDB sends for `query`: region, epoch and leader peer on store `store_id`.
fn tidb_request(
    node: &StorageNode,
    query: &dags::Query,
    store_id: u64,
    timeout_ms: u64,
) -> coprocessor::Request {
    let prefix = rcop_examples::tpch::keyspace_prefix(node.keyspace_id()).unwrap();
    let mut req = dags::request(query, node.keyspace_id(), &prefix, REGION_ID, dags::tso_now());
    let ctx = req.context.get_or_insert_with(Context::default);
    ctx.region_epoch = Some(metapb::RegionEpoch { conf_ver: 1, version: 3 });
    ctx.peer = Some(metapb::Peer { id: 11, store_id, ..Default::default() });
    ctx.max_execution_duration_ms = timeout_ms;
    req
}

async fn local(node: &Arc<StorageNode>, req: &coprocessor::Request) -> coprocessor::Response {
    let (node, req) = (Arc::clone(node), req.clone());
    tokio::task::spawn_blocking(move || node.execute_local(&req)).await.unwrap()
}

fn q(name: &str) -> dags::Query {
    dags::all().unwrap().into_iter().find(|q| q.name.contains(name)).unwrap()
}

/// `data` with the execution summaries' wall times cleared, re-encoded.
fn without_times(data: &[u8]) -> Vec<u8> {
    use prost::Message;
    let mut sel = tipb::SelectResponse::decode(data).unwrap();
    for s in &mut sel.execution_summaries {
        s.time_processed_ns = None;
    }
    sel.encode_to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tpch_and_example_dags_equal_local_execution() {
    let store = memory_store();
    let node = node(&store, 16).await;
    let served = serve_node(&node, SocketAddr::from(([127, 0, 0, 1], 0)), 16);
    let (handle, worker) = worker_for(&store, served.addr).await;
    let mut client = tidb(handle.local_addr()).await;
    let queries = dags::all().unwrap();
    assert!(
        queries.iter().any(|q| q.name.contains("Q1"))
            && queries.iter().any(|q| q.name.contains("Q6"))
    );
    for query in &queries {
        let req = tidb_request(&node, query, STORE_ID, 30_000);
        let resp = client.coprocessor(req.clone()).await.unwrap().into_inner();
        assert!(resp.region_error.is_none() && resp.locked.is_none(), "{}: {resp:?}", query.name);
        assert_eq!(resp.other_error, "", "{}", query.name);
        let want = local(&node, &req).await;
        assert!(!want.data.is_empty(), "{}", query.name);
        assert_eq!(
            without_times(&resp.data),
            without_times(&want.data),
            "{}: delegate != local",
            query.name
        );
        assert!(resp.exec_details_v2.is_some(), "{}", query.name);
    }
    // Each side answers UNIMPLEMENTED for what it does not serve.
    let status = client.delegate_coprocessor(DelegateRequest::default()).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unimplemented);
    let mut node_client = tidb(served.addr).await;
    let status = node_client.coprocessor(coprocessor::Request::default()).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unimplemented);
    // The metrics tell the two paths apart.
    let text = String::from_utf8(worker.metrics().encode_text()).unwrap();
    let want =
        format!("tikv_worker_remote_cop_dag_request_counter{{path=\"grpc\"}} {}", queries.len());
    assert!(text.contains(&want), "{text}");
    assert!(text.contains("rcop_worker_delegate_duration_seconds_count"), "{text}");
    served.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_errors_reach_the_client_in_the_same_fields() {
    let store = memory_store();
    let node = node(&store, 16).await;
    let served = serve_node(&node, SocketAddr::from(([127, 0, 0, 1], 0)), 16);
    let (handle, _worker) = worker_for(&store, served.addr).await;
    let mut client = tidb(handle.local_addr()).await;
    let q6 = q("Q6");

    // A range outside the node's shard: the node's region error, as is.
    let mut outside = tidb_request(&node, &q6, STORE_ID, 10_000);
    let other = rcop_examples::tpch::keyspace_prefix(node.keyspace_id() + 5).unwrap();
    outside.ranges = vec![KeyRange {
        start: [&other[..], b"t"].concat().into(),
        end: [&other[..], b"u"].concat().into(),
    }];
    let resp = client.coprocessor(outside).await.unwrap().into_inner();
    let e = resp.region_error.expect("region error");
    assert!(!e.message.is_empty() && resp.data.is_empty(), "{e:?}");

    // TiDB names store 2, which the node is not: store_not_match comes back.
    let resp = client.coprocessor(tidb_request(&node, &q6, 2, 10_000)).await.unwrap().into_inner();
    let mismatch = resp.region_error.and_then(|e| e.store_not_match).expect("store_not_match");
    assert_eq!((mismatch.request_store_id, mismatch.actual_store_id), (2, STORE_ID));

    // A lock in the scanned range, older than the read: `locked` with the node's lock.
    let req = tidb_request(&node, &q6, STORE_ID, 10_000);
    let key = [&req.ranges[0].start[..], b"\x00"].concat();
    let lock_ts = req.start_ts - 1;
    node.shard().put_lock(&key, &Lock::new(LockType::Put, key.clone(), lock_ts, 3000)).unwrap();
    let resp = client.coprocessor(req.clone()).await.unwrap().into_inner();
    let locked = resp.locked.expect("locked");
    assert_eq!((locked.key.as_ref(), locked.lock_version), (&key[..], lock_ts));
    assert_eq!(locked.primary_lock.as_ref(), &key[..]);
    // Resolved by the client: the read goes through.
    let mut resolved = req.clone();
    resolved.context.as_mut().unwrap().resolved_locks = vec![lock_ts];
    let resp = client.coprocessor(resolved).await.unwrap().into_inner();
    assert!(resp.locked.is_none() && resp.region_error.is_none(), "{resp:?}");
    node.shard().remove_lock(&key).unwrap();
    served.kill();

    // A node with no permit free answers busy; the worker retries until the deadline, then
    // TiDB gets server_is_busy (which it backs off and retries) in time.
    let busy = serve_node(&node, SocketAddr::from(([127, 0, 0, 1], 0)), 0);
    let (handle, worker) = worker_for(&store, busy.addr).await;
    let mut client = tidb(handle.local_addr()).await;
    let started = Instant::now();
    let resp =
        client.coprocessor(tidb_request(&node, &q6, STORE_ID, 400)).await.unwrap().into_inner();
    let took = started.elapsed();
    let e = resp.region_error.expect("busy");
    assert!(e.server_is_busy.is_some(), "{e:?}");
    assert!(took < Duration::from_millis(400 + 300), "answered after {took:?}");
    let text = String::from_utf8(worker.metrics().encode_text()).unwrap();
    assert!(text.contains("rcop_worker_delegate_retries_total{reason=\"busy\"}"), "{text}");
    drop(worker);
    busy.kill();
}

/// A source that waits before exporting, so the node can be killed mid-delegate.
struct Slow {
    node: Arc<StorageNode>,
    delay: Duration,
    calls: AtomicUsize,
}

struct SlowSource<'a> {
    inner: rcop_offload::ShardSource<'a>,
    delay: Duration,
}

impl SnapshotSource for SlowSource<'_> {
    fn estimated_range_blocks_size(&self, ranges: &[KeyRange]) -> Result<u64, SourceError> {
        self.inner.estimated_range_blocks_size(ranges)
    }

    fn export(
        &self,
        request: &coprocessor::Request,
        mem_data: &mut MemDataWriter<'_>,
    ) -> Result<ChangeSet, SourceError> {
        std::thread::sleep(self.delay);
        self.inner.export(request, mem_data)
    }
}

impl DelegateHost for Slow {
    type Source<'a> = SlowSource<'a>;

    fn source(&self, context: Option<&Context>) -> Result<SlowSource<'_>, SourceError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        Ok(SlowSource { inner: self.node.source(context)?, delay: self.delay })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_killed_mid_delegate_is_retried_or_answers_busy_in_time() {
    let store = memory_store();
    let node = node(&store, 16).await;
    let slow = Arc::new(Slow {
        node: Arc::clone(&node),
        delay: Duration::from_millis(300),
        calls: AtomicUsize::new(0),
    });
    let served = serve_delegates(Arc::clone(&slow), SocketAddr::from(([127, 0, 0, 1], 0)), 16);
    let addr = served.addr;
    let (handle, worker) = worker_for(&store, addr).await;
    let mut client = tidb(handle.local_addr()).await;
    let q1 = q("Q1");

    // Killed while exporting, back on the same port 200 ms later: the worker retries and
    // answers what local execution answers.
    let req = tidb_request(&node, &q1, STORE_ID, 10_000);
    let call = tokio::spawn({
        let mut client = client.clone();
        let req = req.clone();
        async move { client.coprocessor(req).await }
    });
    while slow.calls.load(Ordering::Relaxed) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    served.kill();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let back = serve_node(&node, addr, 16);
    let resp = call.await.unwrap().unwrap().into_inner();
    assert!(resp.region_error.is_none() && resp.other_error.is_empty(), "{resp:?}");
    assert_eq!(without_times(&resp.data), without_times(&local(&node, &req).await.data));
    let text = String::from_utf8(worker.metrics().encode_text()).unwrap();
    assert!(text.contains("rcop_worker_delegate_retries_total{reason=\"network\"}"), "{text}");
    back.kill();

    // Killed for good: a retryable server_is_busy before the deadline has long passed.
    let again = serve_delegates(Arc::clone(&slow), addr, 16);
    let before = slow.calls.load(Ordering::Relaxed);
    let req = tidb_request(&node, &q1, STORE_ID, 800);
    let started = Instant::now();
    let call = tokio::spawn(async move { client.coprocessor(req).await });
    while slow.calls.load(Ordering::Relaxed) == before {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    again.kill();
    let resp = call.await.unwrap().unwrap().into_inner();
    let took = started.elapsed();
    let busy = resp.region_error.and_then(|e| e.server_is_busy).expect("server_is_busy");
    assert!(busy.reason.contains("unreachable"), "{busy:?}");
    assert!(took < Duration::from_millis(800 + 400), "answered after {took:?}");
}

/// PD's `GetStore` over a map, answering only requests with its cluster id (after telling
/// the caller which one it is, as PD does).
#[derive(Default)]
struct FakePd {
    stores: Mutex<HashMap<u64, String>>,
    calls: AtomicUsize,
}

const CLUSTER_ID: u64 = 6_934_726;

/// The served side of [`FakePd`].
struct PdHandle(Arc<FakePd>);

#[tonic::async_trait]
impl Pd for PdHandle {
    async fn get_store(
        &self,
        request: tonic::Request<GetStoreRequest>,
    ) -> Result<tonic::Response<GetStoreResponse>, tonic::Status> {
        self.0.calls.fetch_add(1, Ordering::Relaxed);
        let req = request.into_inner();
        let mut header = pdpb::ResponseHeader { cluster_id: CLUSTER_ID, error: None };
        if req.header.map_or(0, |h| h.cluster_id) != CLUSTER_ID {
            header.error = Some(pdpb::Error {
                r#type: pdpb::ErrorType::Unknown as i32,
                message: "mismatch cluster id".into(),
            });
            return Ok(tonic::Response::new(GetStoreResponse {
                header: Some(header),
                store: None,
            }));
        }
        let store = self.0.stores.lock().unwrap().get(&req.store_id).map(|address| metapb::Store {
            id: req.store_id,
            address: address.clone(),
            ..Default::default()
        });
        Ok(tonic::Response::new(GetStoreResponse { header: Some(header), store }))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pd_resolver_finds_caches_and_refreshes_the_store() {
    let store = memory_store();
    let node = node(&store, 16).await;
    let served = serve_node(&node, SocketAddr::from(([127, 0, 0, 1], 0)), 16);
    let pd = Arc::new(FakePd::default());
    pd.stores.lock().unwrap().insert(STORE_ID, served.addr.to_string());
    let pd_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let pd_addr = pd_listener.local_addr().unwrap();
    tokio::spawn({
        let pd = Arc::clone(&pd);
        async move {
            let incoming = tonic::transport::server::TcpIncoming::from(pd_listener);
            let _ = tonic::transport::Server::builder()
                .serve_with_incoming_shutdown(
                    PdServer::new(PdHandle(pd)),
                    incoming,
                    std::future::pending(),
                )
                .await;
        }
    });
    let config = worker_config(&format!("pd-endpoints = [\"{pd_addr}\"]"));
    let worker = build_worker(&store, config);
    let handle = GrpcServer::bind(Arc::clone(&worker), SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap()
        .spawn()
        .unwrap();
    let mut client = tidb(handle.local_addr()).await;
    let q6 = q("Q6");
    let req = tidb_request(&node, &q6, STORE_ID, 10_000);
    let want = local(&node, &req).await;
    for _ in 0..2 {
        let resp = client.coprocessor(req.clone()).await.unwrap().into_inner();
        assert!(resp.region_error.is_none() && resp.other_error.is_empty(), "{resp:?}");
        assert_eq!(without_times(&resp.data), without_times(&want.data));
    }
    // Once with cluster id 0, once with PD's: then the address is cached.
    assert_eq!(pd.calls.load(Ordering::Relaxed), 2);

    // The node moves: the old address fails, the cache entry goes, PD is asked again.
    served.kill();
    let moved = serve_node(&node, SocketAddr::from(([127, 0, 0, 1], 0)), 16);
    pd.stores.lock().unwrap().insert(STORE_ID, moved.addr.to_string());
    let resp = client.coprocessor(req.clone()).await.unwrap().into_inner();
    assert!(resp.region_error.is_none() && resp.other_error.is_empty(), "{resp:?}");
    assert_eq!(without_times(&resp.data), without_times(&want.data));
    assert!(pd.calls.load(Ordering::Relaxed) >= 3);

    // An unknown store is an error in the response, not a transport error.
    let resp = client.coprocessor(tidb_request(&node, &q6, 99, 2_000)).await.unwrap().into_inner();
    assert!(resp.other_error.contains("99"), "{resp:?}");
    moved.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_client_alone_speaks_upstreams_protocol() {
    // The library client against the node, no worker: the parts decode as the envelope's.
    let store = memory_store();
    let node = node(&store, 16).await;
    let served = serve_node(&node, SocketAddr::from(([127, 0, 0, 1], 0)), 16);
    let resolver = Arc::new(StaticResolver::new([(STORE_ID, served.addr.to_string())]));
    let client = DelegateClient::new(resolver, DelegateConfig::default());
    let req = tidb_request(&node, &q("Q6"), STORE_ID, 10_000);
    let deadline = Instant::now() + Duration::from_secs(10);
    match client.fetch(&req, deadline).await {
        rcop_worker::DelegateOutcome::Parts { mem_data, change_set, attempts } => {
            assert_eq!(attempts, 1);
            let mem = rcop_wire::MemData::decode(mem_data).unwrap();
            assert_eq!(mem.format(), Some(rcop_wire::MemDataFormat::V2));
            assert!(!mem.rows().is_empty());
            let cs = <ChangeSet as prost::Message>::decode(change_set).unwrap();
            assert!(cs.snapshot.is_some_and(|s| !s.table_creates.is_empty()));
        }
        other => panic!("{other:?}"),
    }
    served.kill();
}

/// `max-connections` bounds `cop-addr` too: with the limit held by idle connections a new
/// client is not served, and once one closes it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_grpc_listener_holds_at_most_max_connections() {
    let store = memory_store();
    let node = node(&store, 16).await;
    let served = serve_node(&node, SocketAddr::from(([127, 0, 0, 1], 0)), 16);
    let mut config = worker_config(&format!("stores = {{ \"1\" = \"{}\" }}", served.addr));
    config.max_connections = 2;
    let worker = build_worker(&store, config);
    let handle = GrpcServer::bind(Arc::clone(&worker), SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap()
        .spawn()
        .unwrap();
    let addr = handle.local_addr();
    let idle_a = tokio::net::TcpStream::connect(addr).await.unwrap();
    let _idle_b = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = tidb_request(&node, &q("Q6"), STORE_ID, 10_000);
    let try_call = || async {
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect_timeout(Duration::from_millis(300))
            .timeout(Duration::from_millis(600));
        match channel.connect().await {
            Ok(ch) => TikvClient::new(ch).coprocessor(req.clone()).await.is_ok(),
            Err(_) => false,
        }
    };
    assert!(!try_call().await, "a third connection is served past the limit");
    drop(idle_a);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !try_call().await {
        assert!(Instant::now() < deadline, "the freed slot never served the client");
    }
}
