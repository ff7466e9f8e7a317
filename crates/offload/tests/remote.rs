//! The remote path over real TCP on 127.0.0.1 against hyper servers started here: headers
//! and envelope, classification, retries with backoff, failover, deadlines, connection
//! reuse, fallback and metrics.

#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test helpers outside #[test] fns unwrap known-good setup"
)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use prometheus::Registry;
use prost::Message;
use rcop_offload::{
    Config, Dispatch, ManualClock, Offloader, RemoteError, RoutingKey, SnapshotSource, SourceError,
};
use rcop_proto::coprocessor::{KeyRange, Request, Response};
use rcop_proto::enginepb::ChangeSet;
use rcop_proto::errorpb;
use rcop_proto::kvrpcpb::{ExecDetailsV2, LockInfo, ScanDetailV2};
use rcop_wire::{Envelope, MemDataWriter};
use std::time::Instant;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore, ServerConfig};

mod common;
use common::{NOW_MS, config, dag_request};

/// What a test worker answers.
#[derive(Clone, Debug)]
enum Canned {
    /// Status, content type, body.
    Reply(u16, Option<&'static str>, Vec<u8>),
    /// Read the request, then drop the connection without answering.
    Hangup,
    /// Answer 200 with this response after a delay.
    Slow(Duration, Vec<u8>),
}

fn ok(response: &Response) -> Canned {
    Canned::Reply(200, None, response.encode_to_vec())
}

/// A request as the worker saw it.
#[derive(Clone, Debug)]
struct Seen {
    content_type: Option<String>,
    accept: Option<String>,
    dfs_addr: Option<String>,
    body: Bytes,
}

type Script = Arc<dyn Fn(usize) -> Canned + Send + Sync>;

struct TestWorker {
    url: String,
    accepted: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: JoinHandle<()>,
}

impl TestWorker {
    /// Serves `script(n)` for the n-th request (0-based), over plain HTTP.
    async fn start(script: impl Fn(usize) -> Canned + Send + Sync + 'static) -> TestWorker {
        TestWorker::start_with(None, script).await
    }

    /// As [`TestWorker::start`], over TLS when `tls` is given.
    async fn start_with(
        tls: Option<TlsAcceptor>,
        script: impl Fn(usize) -> Canned + Send + Sync + 'static,
    ) -> TestWorker {
        let scheme = if tls.is_some() { "https" } else { "http" };
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script: Script = Arc::new(script);
        let task = tokio::spawn({
            let accepted = accepted.clone();
            let seen = seen.clone();
            async move {
                loop {
                    let Ok((stream, _)) = listener.accept().await else { return };
                    accepted.fetch_add(1, Ordering::SeqCst);
                    let seen = seen.clone();
                    let script = script.clone();
                    let tls = tls.clone();
                    tokio::spawn(async move {
                        let service = service_fn(move |req: hyper::Request<Incoming>| {
                            let seen = seen.clone();
                            let script = script.clone();
                            async move { serve(req, &seen, &script).await }
                        });
                        let http = http1::Builder::new();
                        let _ = match tls {
                            None => http.serve_connection(TokioIo::new(stream), service).await,
                            Some(tls) => {
                                let Ok(stream) = tls.accept(stream).await else { return };
                                http.serve_connection(TokioIo::new(stream), service).await
                            }
                        };
                    });
                }
            }
        });
        TestWorker { url: format!("{scheme}://{addr}/coprocessor"), accepted, seen, task }
    }

    fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for TestWorker {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    req: hyper::Request<Incoming>,
    seen: &Mutex<Vec<Seen>>,
    script: &Script,
) -> Result<hyper::Response<Full<Bytes>>, std::io::Error> {
    let header =
        |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let content_type = header("content-type");
    let accept = header("accept");
    let dfs_addr = header("x-dfs-remote-cache-addr");
    let body = req.into_body().collect().await.map_err(std::io::Error::other)?.to_bytes();
    let n = {
        let mut s = seen.lock().unwrap();
        s.push(Seen { content_type, accept, dfs_addr, body });
        s.len() - 1
    };
    let (status, ctype, body) = match script(n) {
        Canned::Reply(status, ctype, body) => (status, ctype, body),
        Canned::Hangup => return Err(std::io::Error::other("hang up")),
        Canned::Slow(delay, body) => {
            tokio::time::sleep(delay).await;
            (200, None, body)
        }
    };
    let mut resp = hyper::Response::builder().status(status);
    if let Some(ctype) = ctype {
        resp = resp.header("content-type", ctype);
    }
    Ok(resp.body(Full::new(Bytes::from(body))).unwrap())
}

/// An address nobody listens on (connection refused).
async fn dead_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/coprocessor")
}

/// A source with a huge estimate, one memtable row and a change set naming shard 7.
struct Heavy {
    locked: bool,
}

impl SnapshotSource for Heavy {
    fn estimated_range_blocks_size(&self, _: &[KeyRange]) -> Result<u64, SourceError> {
        Ok(1 << 40)
    }

    fn export(
        &self,
        request: &Request,
        mem_data: &mut MemDataWriter<'_>,
    ) -> Result<ChangeSet, SourceError> {
        if self.locked {
            return Err(SourceError::Locked(Box::new(LockInfo {
                primary_lock: b"pk".to_vec().into(),
                lock_version: request.start_ts - 1,
                key: b"k".to_vec().into(),
                ..LockInfo::default()
            })));
        }
        mem_data.push(b"x\0\0\x01t_r1", 10, 11, b"value");
        Ok(ChangeSet { shard_id: 7, ..ChangeSet::default() })
    }
}

fn build(config: Config, registry: &Registry) -> Offloader {
    Offloader::builder(config)
        .clock(Arc::new(ManualClock::new(NOW_MS)))
        .registry(registry)
        .build()
        .unwrap()
}

fn counter(registry: &Registry, name: &str, label: Option<(&str, &str)>) -> u64 {
    for family in registry.gather() {
        if family.name() != name {
            continue;
        }
        for m in family.get_metric() {
            let matches = label
                .is_none_or(|(k, v)| m.get_label().iter().any(|l| l.name() == k && l.value() == v));
            if matches {
                return m.get_counter().get_value() as u64;
            }
        }
    }
    0
}

/// The response, worker and attempts of a `Respond` outcome.
fn respond(d: Dispatch) -> (Response, Option<Arc<str>>, u32) {
    match d {
        Dispatch::Respond { answer, worker, attempts, .. } => {
            (answer.into_response(), worker, attempts)
        }
        other => panic!("expected a response, got {other:?}"),
    }
}

/// A shard id whose first worker in rendezvous order is `first`.
fn shard_preferring(o: &Offloader, first: &str) -> u64 {
    let workers = o.client().workers();
    (0..1000u64)
        .find(|&shard_id| {
            let order = o.client().order(RoutingKey { keyspace_id: 1, shard_id });
            &*workers[order[0]] == first
        })
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn success_sends_upstream_headers_and_envelope() {
    let answer = Response {
        data: b"rows".to_vec().into(),
        exec_details_v2: Some(ExecDetailsV2 {
            scan_detail_v2: Some(ScanDetailV2 {
                processed_versions_size: 1234,
                ..ScanDetailV2::default()
            }),
            ..ExecDetailsV2::default()
        }),
        ..Response::default()
    };
    let expected = answer.clone();
    let w = TestWorker::start(move |_| ok(&answer)).await;
    let registry = Registry::new();
    let o = build(config(&[&w.url], "dfs-remote-cache-addr = \"127.0.0.1:20180\""), &registry);
    let req = dag_request(7, 0);
    let (response, worker, attempts) = respond(o.dispatch(&req, &Heavy { locked: false }).await);
    assert_eq!(response, expected);
    assert_eq!(worker.as_deref(), Some(w.url.as_str()));
    assert_eq!(attempts, 1);

    let seen = w.requests();
    assert_eq!(seen.len(), 1);
    let s = &seen[0];
    assert_eq!(s.content_type.as_deref(), Some("application/octet-stream"));
    assert_eq!(s.accept.as_deref(), Some("application/protobuf"));
    assert_eq!(s.dfs_addr.as_deref(), Some("127.0.0.1:20180"));
    let envelope = Envelope::decode(s.body.clone()).unwrap();
    let forwarded = envelope.decode_request().unwrap();
    assert_eq!(forwarded.paging_size, u64::from(u32::MAX));
    assert_eq!((forwarded.start_ts, &forwarded.ranges), (req.start_ts, &req.ranges));
    assert_eq!(forwarded.data, req.data);
    let mem = envelope.decode_mem_data().unwrap();
    let rows: Vec<_> = mem.rows().iter().map(|r| (r.key.to_vec(), r.value.to_vec())).collect();
    assert_eq!(rows, [(b"x\0\0\x01t_r1".to_vec(), b"value".to_vec())]);
    assert_eq!(envelope.decode_change_set().unwrap().shard_id, 7);

    let remote = Some(("path", "remote"));
    assert_eq!(counter(&registry, "rcop_offload_requests_total", remote), 1);
    assert_eq!(counter(&registry, "tikv_coprocessor_remote_processed_size", None), 1234);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_unavailable_is_retried_with_backoff() {
    let answer = Response { data: b"ok".to_vec().into(), ..Response::default() };
    let w = TestWorker::start(move |n| {
        if n < 2 { Canned::Reply(503, None, b"wait permit timeout".to_vec()) } else { ok(&answer) }
    })
    .await;
    let registry = Registry::new();
    let o = build(config(&[&w.url], ""), &registry);
    let started = Instant::now();
    let (response, _, attempts) =
        respond(o.dispatch(&dag_request(1, 0), &Heavy { locked: false }).await);
    let elapsed = started.elapsed();
    assert_eq!(response.data.as_ref(), b"ok");
    assert_eq!(attempts, 3);
    assert_eq!(w.requests().len(), 3);
    // Two equal-jitter sleeps: [20, 40] ms then [40, 80] ms.
    assert!(elapsed >= Duration::from_millis(60), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    let reason = Some(("reason", "remote_service_unavailable"));
    assert_eq!(counter(&registry, "rcop_offload_request_error_total", reason), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_land_on_their_preferred_worker() {
    let mut workers = Vec::new();
    for name in ["w0", "w1", "w2"] {
        let answer = Response { data: name.as_bytes().to_vec().into(), ..Response::default() };
        workers.push(TestWorker::start(move |_| ok(&answer)).await);
    }
    let urls: Vec<&str> = workers.iter().map(|w| w.url.as_str()).collect();
    let o = Arc::new(build(config(&urls, ""), &Registry::new()));
    let mut tasks = Vec::new();
    for shard in 0..60u64 {
        let o = o.clone();
        tasks.push(tokio::spawn(async move {
            let d = o.dispatch(&dag_request(shard, 0), &Heavy { locked: false }).await;
            (shard, respond(d))
        }));
    }
    let mut served = [0usize; 3];
    for t in tasks {
        let (shard, (response, worker, attempts)) = t.await.unwrap();
        let preferred = o.client().order(RoutingKey { keyspace_id: 1, shard_id: shard })[0];
        assert_eq!(worker.as_deref(), Some(urls[preferred]), "shard {shard}");
        assert_eq!(response.data.as_ref(), format!("w{preferred}").as_bytes());
        assert_eq!(attempts, 1);
        served[preferred] += 1;
    }
    for (w, n) in workers.iter().zip(served) {
        assert_eq!(w.requests().len(), n);
        assert!(n > 0, "every worker gets some shards: {served:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_worker_fails_over_to_the_next() {
    let dead = dead_url().await;
    let answer = Response { data: b"from live".to_vec().into(), ..Response::default() };
    let live = TestWorker::start(move |_| ok(&answer)).await;
    let registry = Registry::new();
    let o = build(config(&[&dead, &live.url], ""), &registry);
    let shard = shard_preferring(&o, &dead);
    let started = Instant::now();
    let (response, worker, attempts) =
        respond(o.dispatch(&dag_request(shard, 0), &Heavy { locked: false }).await);
    assert_eq!(response.data.as_ref(), b"from live");
    assert_eq!(worker.as_deref(), Some(live.url.as_str()));
    assert_eq!(attempts, 2);
    // Failover within a round does not back off.
    assert!(started.elapsed() < Duration::from_millis(500));
    let reason = Some(("reason", "remote_network"));
    assert_eq!(counter(&registry, "rcop_offload_request_error_total", reason), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_dying_mid_request_fails_over() {
    let dying = TestWorker::start(|_| Canned::Hangup).await;
    let answer = Response { data: b"survivor".to_vec().into(), ..Response::default() };
    let live = TestWorker::start(move |_| ok(&answer)).await;
    let o = build(config(&[&dying.url, &live.url], ""), &Registry::new());
    let shard = shard_preferring(&o, &dying.url);
    let (response, worker, attempts) =
        respond(o.dispatch(&dag_request(shard, 0), &Heavy { locked: false }).await);
    assert_eq!(response.data.as_ref(), b"survivor");
    assert_eq!(worker.as_deref(), Some(live.url.as_str()));
    assert_eq!(attempts, 2);
    assert_eq!(dying.requests().len(), 1, "the dying worker got the whole request");
    // The other shards prefer the live worker first and never touch the dying one.
    let other = shard_preferring(&o, &live.url);
    respond(o.dispatch(&dag_request(other, 0), &Heavy { locked: false }).await);
    assert_eq!(dying.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protobuf_error_body_is_relayed() {
    let error = Response {
        region_error: Some(errorpb::Error {
            message: "epoch not match".to_owned(),
            ..errorpb::Error::default()
        }),
        ..Response::default()
    };
    let expected = error.clone();
    let w = TestWorker::start(move |_| {
        Canned::Reply(500, Some("application/protobuf"), error.encode_to_vec())
    })
    .await;
    let o = build(config(&[&w.url], ""), &Registry::new());
    let (response, _, attempts) =
        respond(o.dispatch(&dag_request(1, 0), &Heavy { locked: false }).await);
    assert_eq!(response, expected);
    assert_eq!(attempts, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protobuf_503_is_relayed_not_retried() {
    // Upstream checks the content type before the status: a protobuf body is an answer.
    let busy = Response { other_error: "worker says no".to_owned(), ..Response::default() };
    let expected = busy.clone();
    let w = TestWorker::start(move |_| {
        Canned::Reply(503, Some("application/protobuf"), busy.encode_to_vec())
    })
    .await;
    let o = build(config(&[&w.url], ""), &Registry::new());
    let (response, _, attempts) =
        respond(o.dispatch(&dag_request(1, 0), &Heavy { locked: false }).await);
    assert_eq!((response, attempts), (expected, 1));
    assert_eq!(w.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_500_becomes_other_error_without_retry() {
    let w = TestWorker::start(|_| {
        Canned::Reply(500, Some("text/plain"), b"snapshot: file 42 missing".to_vec())
    })
    .await;
    let registry = Registry::new();
    let o = build(config(&[&w.url], ""), &registry);
    let (response, _, _) = respond(o.dispatch(&dag_request(1, 0), &Heavy { locked: false }).await);
    assert!(response.other_error.contains("500"), "{}", response.other_error);
    assert!(response.other_error.contains("snapshot: file 42 missing"), "{}", response.other_error);
    assert_eq!(response.region_error, None);
    assert_eq!(w.requests().len(), 1);
    let reason = Some(("reason", "remote_status"));
    assert_eq!(counter(&registry, "rcop_offload_request_error_total", reason), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_success_body_is_not_retried() {
    let w = TestWorker::start(|_| Canned::Reply(200, None, vec![0xff, 0xff, 0xff])).await;
    let o = build(config(&[&w.url], ""), &Registry::new());
    let (response, _, _) = respond(o.dispatch(&dag_request(1, 0), &Heavy { locked: false }).await);
    assert!(response.other_error.contains("malformed response"), "{}", response.other_error);
    assert_eq!(w.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadline_bounds_retries() {
    let w = TestWorker::start(|_| Canned::Reply(503, None, b"busy".to_vec())).await;
    let registry = Registry::new();
    let o = build(config(&[&w.url], ""), &registry);
    let started = Instant::now();
    // max_execution_duration_ms = 250.
    let (response, _, attempts) =
        respond(o.dispatch(&dag_request(1, 250), &Heavy { locked: false }).await);
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(250) && elapsed < Duration::from_secs(2),
        "{elapsed:?}"
    );
    let region = response.region_error.expect("deadline is a region error");
    assert_eq!(region.message, "deadline exceeded");
    assert!(region.server_is_busy.is_some());
    assert!(attempts >= 3, "{attempts}");
    // The deadline may cut the last attempt before the worker recorded it.
    let served = w.requests().len() as u32;
    assert!(served == attempts || served + 1 == attempts, "{served} of {attempts}");
    assert_eq!(
        counter(&registry, "rcop_offload_request_error_total", Some(("reason", "deadline"))),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadline_cuts_a_slow_worker() {
    let w = TestWorker::start(|_| Canned::Slow(Duration::from_secs(5), Vec::new())).await;
    let o = build(config(&[&w.url], ""), &Registry::new());
    let deadline = Instant::now() + Duration::from_millis(150);
    let started = Instant::now();
    let d = o.dispatch_with_deadline(&dag_request(1, 0), &Heavy { locked: false }, deadline).await;
    assert!(started.elapsed() < Duration::from_secs(1));
    let (response, _, attempts) = respond(d);
    assert_eq!(response.region_error.map(|e| e.message).as_deref(), Some("deadline exceeded"));
    assert_eq!(attempts, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_reused() {
    let answer = Response { data: b"ok".to_vec().into(), ..Response::default() };
    let a2 = answer.clone();
    let pooled = TestWorker::start(move |_| ok(&answer)).await;
    let unpooled = TestWorker::start(move |_| ok(&a2)).await;
    let o = build(config(&[&pooled.url], ""), &Registry::new());
    let no_pool = build(
        config(&[&unpooled.url], "remote-coprocessor-pool-max-idle-per-host = 0"),
        &Registry::new(),
    );
    for shard in 0..10 {
        respond(o.dispatch(&dag_request(shard, 0), &Heavy { locked: false }).await);
        respond(no_pool.dispatch(&dag_request(shard, 0), &Heavy { locked: false }).await);
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(pooled.requests().len(), 10);
    // hyper-util hands a connection back to the pool from a spawned task once the response
    // is read, so a request sent right after may race it and open another connection. The
    // pause between requests (a storage node's requests are not back to back either) lets
    // that task run, and an idle machine sees exactly one connection; the bound tolerates
    // lost races on a loaded one while still requiring most requests to reuse a connection.
    let accepted = pooled.accepted();
    assert!((1..=5).contains(&accepted), "ten requests over {accepted} pooled connections");
    assert_eq!(unpooled.accepted(), 10, "without a pool every request connects");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fallback_to_local_after_one_failed_round() {
    let a = TestWorker::start(|_| Canned::Reply(503, None, b"busy".to_vec())).await;
    let dead = dead_url().await;
    let registry = Registry::new();
    let o = build(config(&[&a.url, &dead], "fallback-to-local = true"), &registry);
    let started = Instant::now();
    match o.dispatch(&dag_request(1, 0), &Heavy { locked: false }).await {
        Dispatch::FallbackLocal {
            error: RemoteError::AllWorkersFailed { attempts, .. }, ..
        } => {
            assert_eq!(attempts, 2)
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_millis(500), "no backoff before falling back");
    assert_eq!(a.requests().len(), 1);
    let local = Some(("path", "local"));
    assert_eq!(counter(&registry, "rcop_offload_requests_total", local), 1);
    // Without the switch the same failure is retried until the deadline.
    let strict = build(config(&[&a.url, &dead], ""), &Registry::new());
    let (response, _, _) =
        respond(strict.dispatch(&dag_request(1, 200), &Heavy { locked: false }).await);
    assert!(response.region_error.is_some());
    assert!(a.requests().len() > 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_lock_answers_without_contacting_a_worker() {
    let w = TestWorker::start(|_| Canned::Reply(200, None, Vec::new())).await;
    let registry = Registry::new();
    let o = build(config(&[&w.url], ""), &registry);
    let (response, worker, attempts) =
        respond(o.dispatch(&dag_request(1, 0), &Heavy { locked: true }).await);
    let lock = response.locked.expect("locked");
    assert_eq!(lock.primary_lock.as_ref(), b"pk");
    assert_eq!((worker, attempts), (None, 0));
    assert_eq!(w.requests().len(), 0);
    assert_eq!(counter(&registry, "rcop_offload_request_error_total", Some(("reason", "lock"))), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_decisions_send_nothing() {
    struct Light;
    impl SnapshotSource for Light {
        fn estimated_range_blocks_size(&self, _: &[KeyRange]) -> Result<u64, SourceError> {
            Ok(1)
        }
        fn export(&self, _: &Request, _: &mut MemDataWriter<'_>) -> Result<ChangeSet, SourceError> {
            Ok(ChangeSet::default())
        }
    }
    let w = TestWorker::start(|_| Canned::Reply(200, None, Vec::new())).await;
    let registry = Registry::new();
    let o = build(config(&[&w.url], ""), &registry);
    assert!(matches!(o.dispatch(&dag_request(1, 0), &Light).await, Dispatch::Local { .. }));
    assert_eq!(w.accepted(), 0);
    let local = Some(("path", "local"));
    assert_eq!(counter(&registry, "rcop_offload_requests_total", local), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_response_is_rejected() {
    let w = TestWorker::start(|_| Canned::Reply(200, None, vec![0; 4096])).await;
    let o =
        build(config(&[&w.url], "remote-coprocessor-max-response-size = 1024"), &Registry::new());
    let (response, _, _) = respond(o.dispatch(&dag_request(1, 0), &Heavy { locked: false }).await);
    assert!(response.other_error.contains("exceeds 1024 bytes"), "{}", response.other_error);
}

// A test CA and a worker certificate for IP 127.0.0.1 / localhost signed by it (P-256,
// valid until 2126), generated once with openssl; see tests/data/README.md.
const CA_DER: &[u8] = include_bytes!("data/ca.der");
const WORKER_DER: &[u8] = include_bytes!("data/worker.der");
const WORKER_KEY_DER: &[u8] = include_bytes!("data/worker.key.der");

fn ring() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn tls_acceptor() -> TlsAcceptor {
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(WORKER_KEY_DER.to_vec()));
    let config = ServerConfig::builder_with_provider(ring())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![CertificateDer::from(WORKER_DER.to_vec())], key)
        .unwrap();
    TlsAcceptor::from(Arc::new(config))
}

fn trusting_test_ca() -> ClientConfig {
    let mut roots = RootCertStore::empty();
    roots.add(CertificateDer::from(CA_DER.to_vec())).unwrap();
    ClientConfig::builder_with_provider(ring())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_private_ca_reuses_the_tls_connection() {
    let answer = Response { data: b"over tls".to_vec().into(), ..Response::default() };
    let w = TestWorker::start_with(Some(tls_acceptor()), move |_| ok(&answer)).await;
    assert!(w.url.starts_with("https://127.0.0.1:"));
    let o = Offloader::builder(config(&[&w.url], ""))
        .clock(Arc::new(ManualClock::new(NOW_MS)))
        .tls_config(trusting_test_ca())
        .build()
        .unwrap();
    for shard in 0..10 {
        let (response, _, attempts) =
            respond(o.dispatch(&dag_request(shard, 0), &Heavy { locked: false }).await);
        assert_eq!((response.data.as_ref(), attempts), (&b"over tls"[..], 1));
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(w.requests().len(), 10);
    // See `connections_are_reused` for the bound.
    let accepted = w.accepted();
    assert!((1..=5).contains(&accepted), "{accepted} TLS handshakes for ten requests");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_rejects_an_untrusted_worker() {
    let w = TestWorker::start_with(Some(tls_acceptor()), |_| Canned::Reply(200, None, Vec::new()))
        .await;
    // The default client trusts only the public web roots, not the test CA.
    let o = build(config(&[&w.url], "fallback-to-local = true"), &Registry::new());
    match o.dispatch(&dag_request(1, 0), &Heavy { locked: false }).await {
        Dispatch::FallbackLocal { error: RemoteError::AllWorkersFailed { last, .. }, .. } => {
            assert!(matches!(*last, RemoteError::Network { .. }), "{last:?}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(w.requests().len(), 0, "no request crossed an unverified connection");
}

#[test]
fn dispatch_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let o = Offloader::builder(Config::default()).build().unwrap();
    let req = dag_request(1, 0);
    let source = Heavy { locked: false };
    let fut = o.dispatch(&req, &source);
    assert_send(&fut);
}
