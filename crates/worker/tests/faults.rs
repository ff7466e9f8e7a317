//! The fault suite: the object store (an in-process s3s-fs on 127.0.0.1 behind a fault
//! injector) answers 503, answers slowly, sends truncated bodies or resets connections. Every
//! request gets either the right answer or a refusal (503 to retry elsewhere, 500) within its
//! deadline — never a wrong answer — and once the store heals the same worker answers right.
#![expect(clippy::unwrap_used, reason = "test plumbing")]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use prost::Message;
use rcop_limiter::ManualMemoryProbe;
use rcop_proto::coprocessor;
use rcop_sst::{Backend, SstStore, StoreConfig};
use rcop_worker::{Worker, WorkerConfig};
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use tokio::net::TcpListener;

mod common;
use common::export;
use common::fixture::{agg_dag, build_shard, cop_request, run_locally};

const ACCESS_KEY: &str = "rcop-test-access";
const SECRET_KEY: &str = "rcop-test-secret-0123456789";
const BUCKET: &str = "ssts";

/// What the injector does to the next GETs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
enum Fault {
    None = 0,
    /// 503 SlowDown.
    Unavailable = 1,
    /// The response after a delay of [`Faults::delay_ms`].
    Slow = 2,
    /// The body cut to half its length (a consistent but short response).
    Truncated = 3,
    /// The connection closed without a response.
    Reset = 4,
}

#[derive(Default)]
struct Faults {
    fault: AtomicU32,
    /// GETs left to fault (u64::MAX: all).
    remaining: AtomicU64,
    delay_ms: AtomicU64,
    faulted: AtomicU64,
}

impl Faults {
    fn set(&self, fault: Fault, count: u64) {
        self.remaining.store(count, Ordering::SeqCst);
        self.fault.store(fault as u32, Ordering::SeqCst);
    }

    /// The fault for this GET, counting it down.
    fn take(&self) -> Fault {
        let fault = match self.fault.load(Ordering::SeqCst) {
            1 => Fault::Unavailable,
            2 => Fault::Slow,
            3 => Fault::Truncated,
            4 => Fault::Reset,
            _ => return Fault::None,
        };
        let left = self.remaining.load(Ordering::SeqCst);
        if left == 0 {
            return Fault::None;
        }
        if left != u64::MAX {
            self.remaining.fetch_sub(1, Ordering::SeqCst);
        }
        self.faulted.fetch_add(1, Ordering::SeqCst);
        fault
    }
}

struct Store {
    store: Arc<SstStore>,
    faults: Arc<Faults>,
    _root: tempfile::TempDir,
}

async fn s3() -> Store {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join(BUCKET)).unwrap();
    let mut b = S3ServiceBuilder::new(s3s_fs::FileSystem::new(root.path()).unwrap());
    b.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
    let service = b.build();
    let faults = Arc::new(Faults::default());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let f = Arc::clone(&faults);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (service, f) = (service.clone(), Arc::clone(&f));
            tokio::spawn(async move {
                let svc = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let (service, f) = (service.clone(), Arc::clone(&f));
                    async move {
                        let fault =
                            if req.method() == hyper::Method::GET { f.take() } else { Fault::None };
                        match fault {
                            Fault::Unavailable => {
                                let xml = "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code>\
                                           <Message>injected</Message></Error>";
                                return Ok(hyper::Response::builder()
                                    .status(503)
                                    .body(Full::new(Bytes::from(xml)))
                                    .unwrap());
                            }
                            Fault::Reset => return Err("injected reset".to_owned()),
                            Fault::Slow => {
                                let ms = f.delay_ms.load(Ordering::SeqCst);
                                tokio::time::sleep(Duration::from_millis(ms)).await;
                            }
                            Fault::None | Fault::Truncated => {}
                        }
                        let resp = hyper::service::Service::call(&service, req)
                            .await
                            .map_err(|e| format!("{e:?}"))?;
                        let (mut parts, body) = resp.into_parts();
                        let mut bytes =
                            body.collect().await.map_err(|e| format!("{e}"))?.to_bytes();
                        if fault == Fault::Truncated && bytes.len() > 1 {
                            bytes = bytes.slice(..bytes.len() / 2);
                            parts.headers.insert(hyper::header::CONTENT_LENGTH, bytes.len().into());
                        }
                        Ok::<_, String>(hyper::Response::from_parts(parts, Full::new(bytes)))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    let cfg = StoreConfig::default()
        .with_backend(Backend::S3)
        .with_endpoint(format!("http://{addr}"))
        .with_bucket(BUCKET)
        .with_credentials(ACCESS_KEY, SECRET_KEY)
        .with_allow_http(true)
        .with_max_retries(2);
    let store = Arc::new(SstStore::from_config(&cfg).unwrap());
    Store { store, faults, _root: root }
}

/// A worker without a block cache: every request reads its blocks from the store.
fn worker(store: &Arc<SstStore>) -> Worker {
    let config =
        WorkerConfig::from_toml("addr = \"127.0.0.1:0\"\ncop-block-cache-size = 0").unwrap();
    Worker::builder(config)
        .store(Arc::clone(store))
        .memory_probe(Arc::new(ManualMemoryProbe::new(1 << 30, 8 << 30)))
        .cores(2)
        .build()
        .unwrap()
}

/// One request: the right answer, or a refusal (400 for a file that does not match the
/// change set, 500, 503), within the deadline (+ slack).
async fn under(w: &Worker, body: &Bytes, want: &Bytes, deadline: Duration) -> u16 {
    let started = Instant::now();
    let reply = w.handle_coprocessor(body.clone(), true).await;
    assert!(started.elapsed() < deadline + Duration::from_secs(2), "{:?}", started.elapsed());
    match reply.status {
        200 => {
            let resp = coprocessor::Response::decode(reply.body).unwrap();
            assert!(resp.other_error.is_empty() && resp.region_error.is_none(), "{resp:?}");
            assert_eq!(&resp.data, want, "a 200 under a fault is the right answer");
        }
        s => assert!([400, 500, 503].contains(&s), "{s}: {}", String::from_utf8_lossy(&reply.body)),
    }
    reply.status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn object_store_faults_never_give_a_wrong_answer() {
    let s3 = s3().await;
    let shard = build_shard(Arc::clone(&s3.store)).await;
    let mut req = cop_request(&agg_dag());
    req.context.as_mut().unwrap().max_execution_duration_ms = 3_000;
    let deadline = Duration::from_millis(3_000);
    let want = run_locally(&shard, &req, 32 << 20).data;
    let body = Bytes::from(export(&shard, &req));
    let w = worker(&s3.store);
    assert_eq!(under(&w, &body, &want, deadline).await, 200);

    s3.faults.delay_ms.store(5_000, Ordering::SeqCst);
    let cases = [
        // (fault, GETs faulted, what the request may get)
        (Fault::Unavailable, 1, &[200][..]), // retried by the store client
        (Fault::Unavailable, u64::MAX, &[503][..]),
        (Fault::Reset, 1, &[200][..]),
        (Fault::Reset, u64::MAX, &[503][..]),
        // A consistent but short body is a file shorter than the change set says: a stale
        // or wrong file id, refused as not retryable.
        (Fault::Truncated, u64::MAX, &[400][..]),
        (Fault::Slow, u64::MAX, &[503][..]), // past the deadline
    ];
    for (fault, count, allowed) in cases {
        s3.faults.set(fault, count);
        let before = s3.faults.faulted.load(Ordering::SeqCst);
        let status = under(&w, &body, &want, deadline).await;
        assert!(s3.faults.faulted.load(Ordering::SeqCst) > before, "{fault:?} was not injected");
        assert!(allowed.contains(&status), "{fault:?} × {count}: {status}");
        // Healed: the same worker answers right.
        s3.faults.set(Fault::None, 0);
        assert_eq!(under(&w, &body, &want, deadline).await, 200, "after {fault:?}");
    }
    // Concurrent requests while half the GETs fail: every one right or refused.
    s3.faults.set(Fault::Unavailable, 40);
    let w = Arc::new(w);
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (w, body, want) = (Arc::clone(&w), body.clone(), want.clone());
            tokio::spawn(async move { under(&w, &body, &want, deadline).await })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    s3.faults.set(Fault::None, 0);
    assert_eq!(under(&w, &body, &want, deadline).await, 200);
    assert_eq!(w.limiter().memory_limiter().used(), 0);
}

/// `/readyz` follows the object store: 200 while it answers, 503 naming it while it does not
/// (checked every `store-check-interval`), 200 again once it heals, and 503 "draining" once
/// the server shuts down. `/healthz` stays 200 throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_follows_the_object_store_and_shutdown() {
    use common::fixture::get;
    let s3 = s3().await;
    let config = WorkerConfig::from_toml(
        "addr = \"127.0.0.1:0\"\ncop-block-cache-size = 0\nstore-check-interval = \"50ms\"",
    )
    .unwrap();
    let worker = Worker::builder(config)
        .store(Arc::clone(&s3.store))
        .memory_probe(Arc::new(ManualMemoryProbe::new(1 << 30, 8 << 30)))
        .cores(2)
        .build()
        .unwrap();
    let handle = worker.bind().await.unwrap().spawn();
    let addr = handle.local_addr();
    let until = |want: u16, text: &'static str| async move {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let reply = get(addr, "/readyz").await;
            let body = String::from_utf8_lossy(&reply.body).into_owned();
            if reply.status == want && body.contains(text) {
                return;
            }
            assert!(Instant::now() < deadline, "still {} {body}", reply.status);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    until(200, "ready").await;
    s3.faults.set(Fault::Unavailable, u64::MAX);
    until(503, "object store unreachable").await;
    assert_eq!(get(addr, "/healthz").await.status, 200, "alive while not ready");
    let metrics = String::from_utf8(get(addr, "/metrics").await.body.to_vec()).unwrap();
    assert!(metrics.contains("rcop_worker_ready 0"), "{metrics}");
    s3.faults.set(Fault::None, 0);
    until(200, "ready").await;
    let worker = Arc::clone(handle.worker());
    handle.shutdown().await.unwrap();
    assert_eq!(worker.readiness(), Err("draining".to_owned()));
}
