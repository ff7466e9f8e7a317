//! Integration against a real S3 endpoint: an in-process s3s-fs server on 127.0.0.1 with
//! signature checking, behind a small fault-injection layer (503s, slow responses).
#![expect(
    clippy::unwrap_used,
    reason = "the test server setup unwraps loopback binds and literals"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rcop_sst::{
    Backend, BlockCache, BuilderOptions, Compression, Error, FileId, MetaCache, NewValue,
    ReaderOptions, SstReader, SstStore, StoreConfig, Table, TableBuilder,
};
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use tokio::net::TcpListener;

const ACCESS_KEY: &str = "rcop-test-access";
const SECRET_KEY: &str = "rcop-test-secret-0123456789";
const BUCKET: &str = "ssts";

/// Faults to inject into the next requests.
#[derive(Default)]
struct Faults {
    /// The next this-many requests answer 503.
    fail_next: AtomicUsize,
    /// The next this-many requests are delayed by `delay_ms` before being served.
    slow_next: AtomicUsize,
    delay_ms: AtomicUsize,
    /// Requests seen.
    requests: AtomicUsize,
}

fn take_one(n: &AtomicUsize) -> bool {
    n.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| v.checked_sub(1)).is_ok()
}

struct Server {
    addr: std::net::SocketAddr,
    faults: Arc<Faults>,
    _root: TempDir,
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn start_server(tag: &str) -> Server {
    let root = std::env::temp_dir().join(format!("rcop-sst-s3-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(root.join(BUCKET)).unwrap();
    let fs = s3s_fs::FileSystem::new(&root).unwrap();
    let mut b = S3ServiceBuilder::new(fs);
    b.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
    let service = b.build();
    let faults = Arc::new(Faults::default());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let f = faults.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let service = service.clone();
            let f = f.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let service = service.clone();
                    let f = f.clone();
                    async move {
                        f.requests.fetch_add(1, Ordering::SeqCst);
                        if take_one(&f.fail_next) {
                            return Ok::<_, s3s::HttpError>(
                                hyper::Response::builder()
                                    .status(503)
                                    .body(s3s::Body::from(
                                        "<Error><Code>SlowDown</Code></Error>".to_string(),
                                    ))
                                    .unwrap(),
                            );
                        }
                        if take_one(&f.slow_next) {
                            let ms = f.delay_ms.load(Ordering::SeqCst) as u64;
                            tokio::time::sleep(Duration::from_millis(ms)).await;
                        }
                        hyper::service::Service::call(&service, req).await
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    Server { addr, faults, _root: TempDir(root) }
}

fn config(server: &Server, secret: &str, retries: usize, timeout: Duration) -> StoreConfig {
    StoreConfig::default()
        .with_backend(Backend::S3)
        .with_endpoint(format!("http://{}", server.addr))
        .with_bucket(BUCKET)
        .with_region("us-east-1")
        .with_credentials(ACCESS_KEY, secret)
        .with_prefix("cluster-1")
        .with_connect_timeout(Duration::from_secs(2))
        .with_request_timeout(timeout)
        .with_max_retries(retries)
        .with_retry_init_backoff(Duration::from_millis(10))
        .with_retry_max_backoff(Duration::from_millis(50))
        .with_retry_timeout(Duration::from_secs(20))
        .with_allow_http(true)
}

fn sample_table(id: FileId) -> Bytes {
    let mut b = TableBuilder::new(
        id,
        BuilderOptions::default().with_block_size(4 << 10).with_compression(Compression::Lz4),
    );
    for i in 0..3000u32 {
        let key = format!("t_r{i:08}");
        // Hex of a simple LCG: barely compressible, so the file is well over the 64 KiB
        // first read (s3s-fs cannot serve a suffix range longer than the object).
        let mut x =
            u64::from(i).wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let value: String = (0..100)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                char::from(b"0123456789abcdef"[(x >> 60) as usize])
            })
            .collect();
        b.add(
            key.as_bytes(),
            &NewValue { meta: 0, version: 100, user_meta: &[], value: value.as_bytes() },
        )
        .unwrap();
    }
    b.finish().unwrap()
}

fn scan_keys(t: &Table<impl rcop_sst::BlockSource>, start: &[u8], end: &[u8]) -> Vec<Vec<u8>> {
    let mut it = t.iter();
    it.seek(start).unwrap();
    let mut out = Vec::new();
    while it.valid() && it.key() < end {
        out.push(it.key().to_vec());
        it.next().unwrap();
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranged_reads_open_and_prefetch_against_s3s() {
    let server = start_server("basic").await;
    let store = Arc::new(
        SstStore::from_config(&config(&server, SECRET_KEY, 2, Duration::from_secs(5))).unwrap(),
    );
    let id = FileId(0x0102_0304_0506_0708);
    let file = sample_table(id);
    assert!(file.len() > 128 << 10);
    store.put(id, file.clone()).await.unwrap();

    // Ranged reads return exactly the asked bytes.
    let got = store.get_range(id, 1000..1100).await.unwrap();
    assert_eq!(got, file.slice(1000..1100));
    assert_eq!(store.get_all(id).await.unwrap(), file);

    // Open (metadata from the tail) and prefetch a key range.
    let reader = SstReader::new(
        store.clone(),
        BlockCache::new(64 << 20),
        MetaCache::new(8 << 20),
        // open_read_size below the file size: s3s-fs cannot serve a suffix range longer than
        // the object (real S3 returns the whole object).
        ReaderOptions::default().with_max_read_size(16 << 10).with_open_read_size(64 << 10),
    );
    let meta = reader.open(id, None).await.unwrap();
    assert_eq!(meta.properties().entries, 3000);
    let before = store.stats();
    let plan = reader.plan_prefetch(&meta, &[(b"t_r00000100", b"t_r00001200")], false);
    assert!(plan.num_blocks() > 4);
    // Adjacent blocks are merged into reads of at most 16 KiB.
    assert!(plan.reads().len() < plan.num_blocks());
    assert!(
        plan.reads().iter().all(|r| r.range.end - r.range.start <= 16 << 10 || r.blocks.len() == 1)
    );
    let to_fetch = plan.bytes_to_fetch();
    let reads = plan.reads().len() as u64;
    let pinned = reader.prefetch(plan).await.unwrap();
    let after = store.stats();
    assert_eq!(after.gets - before.gets, reads);
    assert_eq!(after.bytes_read - before.bytes_read, to_fetch);

    // The scan runs on the pinned blocks and matches the in-memory table.
    let remote = Table::new(meta.clone(), pinned);
    let local = Table::open_in_memory(id, file.clone()).unwrap();
    let want = scan_keys(&local, b"t_r00000100", b"t_r00001200");
    assert_eq!(want.len(), 1100);
    assert_eq!(scan_keys(&remote, b"t_r00000100", b"t_r00001200"), want);
    // Outside the prefetched ranges the source says so instead of doing I/O.
    let e = remote.get(b"t_r00002900", u64::MAX).unwrap_err();
    assert!(matches!(e, Error::NotPrefetched { file_id, .. } if file_id == id), "{e:?}");

    // A second prefetch of the same range is served from the cache: no request.
    let plan = reader.plan_prefetch(&meta, &[(b"t_r00000100", b"t_r00001200")], false);
    assert_eq!(plan.bytes_to_fetch(), 0);
    let gets = store.stats().gets;
    reader.prefetch(plan).await.unwrap();
    assert_eq!(store.stats().gets, gets);

    // Opening with the known meta offset takes exactly one request.
    let reader2 = SstReader::new(
        store.clone(),
        BlockCache::new(1 << 20),
        MetaCache::new(1 << 20),
        ReaderOptions::default(),
    );
    let gets = store.stats().gets;
    let meta2 = reader2.open(id, Some(meta.meta_offset())).await.unwrap();
    assert_eq!(store.stats().gets, gets + 1);
    assert_eq!(meta2.properties(), meta.properties());
    // A tiny first read forces a second read for the rest of the metadata.
    let reader3 = SstReader::new(
        store.clone(),
        BlockCache::new(1 << 20),
        MetaCache::new(1 << 20),
        ReaderOptions::default().with_open_read_size(64),
    );
    let gets = store.stats().gets;
    reader3.open(id, None).await.unwrap();
    assert_eq!(store.stats().gets, gets + 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_objects_and_bad_credentials_are_typed() {
    let server = start_server("errors").await;
    let store =
        SstStore::from_config(&config(&server, SECRET_KEY, 2, Duration::from_secs(5))).unwrap();
    match store.get_range(FileId(42), 0..10).await {
        Err(Error::NotFound { file_id, path }) => {
            assert_eq!(file_id, FileId(42));
            assert_eq!(path, rcop_sst::object_key("cluster-1", FileId(42)));
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
    // Signatures are checked: a wrong secret is refused.
    let bad = SstStore::from_config(&config(
        &server,
        "wrong-secret-key-000000",
        2,
        Duration::from_secs(5),
    ))
    .unwrap();
    let e = bad.get_all(FileId(42)).await.unwrap_err();
    assert!(matches!(e, Error::Permission { file_id: FileId(42), .. }), "{e:?}");
    assert!(!e.is_retryable());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_503s_are_retried_then_exhaust_the_budget() {
    let server = start_server("503").await;
    let store =
        SstStore::from_config(&config(&server, SECRET_KEY, 3, Duration::from_secs(5))).unwrap();
    let id = FileId(7);
    store.put(id, Bytes::from_static(b"0123456789abcdef")).await.unwrap();

    // Two failures, then served: within the budget of 3 retries.
    let seen = server.faults.requests.load(Ordering::SeqCst);
    server.faults.fail_next.store(2, Ordering::SeqCst);
    assert_eq!(store.get_range(id, 4..8).await.unwrap().as_ref(), b"4567");
    assert_eq!(server.faults.requests.load(Ordering::SeqCst) - seen, 3);

    // More failures than the budget: a retryable error after 1 + 3 attempts.
    let seen = server.faults.requests.load(Ordering::SeqCst);
    server.faults.fail_next.store(10, Ordering::SeqCst);
    let e = store.get_range(id, 4..8).await.unwrap_err();
    assert!(e.is_retryable(), "{e:?}");
    assert!(matches!(e, Error::Retryable { file_id: FileId(7), .. }));
    assert_eq!(server.faults.requests.load(Ordering::SeqCst) - seen, 4);
    server.faults.fail_next.store(0, Ordering::SeqCst);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_responses_time_out_and_are_retried() {
    let server = start_server("slow").await;
    let store =
        SstStore::from_config(&config(&server, SECRET_KEY, 2, Duration::from_secs(1))).unwrap();
    let id = FileId(8);
    store.put(id, Bytes::from_static(b"slow-but-steady")).await.unwrap();

    // One response slower than the 1 s request timeout: retried, then served.
    server.faults.delay_ms.store(3000, Ordering::SeqCst);
    server.faults.slow_next.store(1, Ordering::SeqCst);
    let t = std::time::Instant::now();
    assert_eq!(store.get_range(id, 0..4).await.unwrap().as_ref(), b"slow");
    assert!(t.elapsed() >= Duration::from_secs(1));

    // Every attempt slow: retry budget spent, retryable error.
    server.faults.slow_next.store(100, Ordering::SeqCst);
    let e = store.get_range(id, 0..4).await.unwrap_err();
    assert!(e.is_retryable(), "{e:?}");
    server.faults.slow_next.store(0, Ordering::SeqCst);
}
