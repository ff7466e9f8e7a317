//! The disk cache (IA) against an in-process S3 (s3s-fs) that counts GET requests: warm
//! reads, restarts, capacity, corruption of every cache file kind, single flight, a full
//! disk and an unusable directory.
#![expect(clippy::unwrap_used, reason = "test setup unwraps loopback binds and literals")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rcop_sst::{
    Backend, BlockCache, BuilderOptions, Compression, DiskCap, FileId, IaCache, IaConfig,
    IaRequest, MetaCache, NewValue, ReaderOptions, SstReader, SstStore, StoreConfig, Table,
    TableBuilder,
};
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use tokio::net::TcpListener;

const ACCESS_KEY: &str = "rcop-test-access";
const SECRET_KEY: &str = "rcop-test-secret-0123456789";
const BUCKET: &str = "ssts";
const N_KEYS: u32 = 12_000;

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let p = std::env::temp_dir().join(format!("rcop-ia-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct S3 {
    store: Arc<SstStore>,
    gets: Arc<AtomicUsize>,
    _root: TempDir,
}

impl S3 {
    fn gets(&self) -> usize {
        self.gets.load(Ordering::SeqCst)
    }
}

/// An s3s-fs server on 127.0.0.1 counting GETs, and a store on it holding one table.
async fn start(tag: &str, id: FileId, table: &Bytes) -> S3 {
    let root = TempDir::new(&format!("s3-{tag}"));
    std::fs::create_dir_all(root.0.join(BUCKET)).unwrap();
    let mut b = S3ServiceBuilder::new(s3s_fs::FileSystem::new(&root.0).unwrap());
    b.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
    let service = b.build();
    let gets = Arc::new(AtomicUsize::new(0));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let g = gets.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = service.clone();
            let g = g.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    if req.method() == hyper::Method::GET {
                        g.fetch_add(1, Ordering::SeqCst);
                    }
                    let service = service.clone();
                    async move { hyper::service::Service::call(&service, req).await }
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
        .with_max_retries(1);
    let store = Arc::new(SstStore::from_config(&cfg).unwrap());
    store.put(id, table.clone()).await.unwrap();
    S3 { store, gets, _root: root }
}

fn key(i: u32) -> Vec<u8> {
    format!("t_r{i:08}").into_bytes()
}

fn value(i: u32, version: u64) -> Vec<u8> {
    let mut x = u64::from(i) ^ (version << 32);
    (0..120)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            b"0123456789abcdef"[(x >> 60) as usize]
        })
        .collect()
}

/// A table with two versions of every key (data and old-version sections), ~3 MiB.
fn table(id: FileId) -> Bytes {
    let mut b = TableBuilder::new(
        id,
        BuilderOptions::default().with_block_size(8 << 10).with_compression(Compression::Lz4),
    );
    for i in 0..N_KEYS {
        for version in [200u64, 100] {
            let v = value(i, version);
            b.add(&key(i), &NewValue { meta: 0, version, user_meta: &[], value: &v }).unwrap();
        }
    }
    b.finish().unwrap()
}

fn ia_config(dir: &Path) -> IaConfig {
    let mut c = IaConfig::new(dir);
    c.mem_cap = 64 << 20;
    c.disk_cap = DiskCap::Bytes(1 << 30);
    c.segment_size = 128 << 10;
    c.freq_update_interval = Duration::ZERO;
    c
}

/// A reader with no block cache, so every read goes to the disk cache.
fn reader(s3: &S3, ia: &IaCache) -> SstReader {
    SstReader::new(
        s3.store.clone(),
        BlockCache::new(0),
        MetaCache::new(8 << 20),
        ReaderOptions::default().with_open_read_size(64 << 10),
    )
    .with_ia(ia.clone())
}

/// Opens the table, prefetches `[lo, hi)` at read ts 150 (old versions included) and checks
/// every key and value against the generator.
async fn query(r: &SstReader, id: FileId, meta_offset: u32, lo: u32, hi: u32) {
    let meta = r.open(id, Some(meta_offset)).await.unwrap();
    let (s, e) = (key(lo), key(hi));
    let plan = r.plan_prefetch(&meta, &[(&s, &e)], true);
    let t = Table::new(meta, r.prefetch(plan).await.unwrap());
    let mut it = t.iter();
    it.seek(&s).unwrap();
    let mut i = lo;
    while it.valid() && it.key() < e.as_slice() {
        assert_eq!(it.key(), key(i).as_slice());
        assert_eq!(it.value().value, value(i, 200).as_slice());
        let old = it.value_at(150).unwrap().unwrap();
        assert_eq!(old.value.as_ref(), value(i, 100).as_slice());
        it.next().unwrap();
        i += 1;
    }
    assert_eq!(i, hi);
}

fn files(dir: &Path, sub: &str) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir.join("ia").join(sub))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn dir_bytes(dir: &Path) -> u64 {
    ["segment", "meta"]
        .iter()
        .flat_map(|s| files(dir, s))
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum()
}

async fn setup(tag: &str) -> (S3, FileId, u32, TempDir) {
    let id = FileId(0x77);
    let t = table(id);
    let meta_offset = rcop_sst::TableMeta::from_table(id, &t).unwrap().meta_offset();
    (start(tag, id, &t).await, id, meta_offset, TempDir::new(&format!("data-{tag}")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warm_queries_and_a_restart_make_no_gets() {
    let (s3, id, mo, data) = setup("warm").await;
    let ia = IaCache::open(ia_config(&data.0), None);
    let r = reader(&s3, &ia);
    query(&r, id, mo, 1000, 9000).await;
    let cold = s3.gets();
    assert!(cold > 2, "cold query reads segments: {cold}");
    // Second run: every segment from memory, and now reused, so written to disk.
    let req = IaRequest::default();
    query(&r.for_request(req.clone()), id, mo, 1000, 9000).await;
    assert_eq!(s3.gets(), cold, "warm query made GETs");
    assert!(req.stats.cache_hits() > 0);
    assert_eq!(req.stats.remote_segments(), 0);
    ia.wait_idle().await;
    assert!(!files(&data.0, "segment").is_empty());
    assert_eq!(files(&data.0, "meta").len(), 1);
    drop((r, ia));

    // Restart on the same data dir: metadata and segments come from disk.
    let ia = IaCache::open(ia_config(&data.0), None);
    assert!(ia.stats().disk_segments > 0);
    let r = reader(&s3, &ia);
    query(&r, id, mo, 1000, 9000).await;
    assert_eq!(s3.gets(), cold, "the first query after a restart made GETs");
    assert_eq!(ia.stats().corrupt, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_disk_stays_within_disk_cap() {
    let (s3, id, mo, data) = setup("cap").await;
    let cap = 700u64 << 10;
    let mut cfg = ia_config(&data.0);
    cfg.disk_cap = DiskCap::Bytes(cap);
    cfg.mem_cap = 256 << 10;
    let ia = IaCache::open(cfg, None);
    let r = reader(&s3, &ia);
    for round in 0..3 {
        for lo in (0..N_KEYS - 1000).step_by(1500) {
            query(&r, id, mo, lo, lo + 1000).await;
            query(&r, id, mo, lo, lo + 1000).await;
            ia.wait_idle().await;
            let on_disk = dir_bytes(&data.0);
            assert!(on_disk <= cap, "round {round}: {on_disk} bytes on disk > {cap}");
            assert!(ia.stats().disk_bytes <= cap);
            assert_eq!(ia.stats().disk_bytes, on_disk, "accounting matches the directory");
        }
    }
    assert!(ia.stats().memory_bytes <= 256 << 10);
    assert!(dir_bytes(&data.0) > cap / 2, "the cache was used");
}

/// Warms the cache onto disk, then drops it.
async fn warm_to_disk(s3: &S3, data: &Path, id: FileId, mo: u32) {
    let ia = IaCache::open(ia_config(data), None);
    let r = reader(s3, &ia);
    query(&r, id, mo, 0, N_KEYS).await;
    query(&r, id, mo, 0, N_KEYS).await;
    ia.wait_idle().await;
}

fn damage(path: &Path, truncate: bool) {
    let mut b = std::fs::read(path).unwrap();
    if truncate {
        b.truncate(b.len() / 2);
    } else {
        let at = b.len() / 3;
        b[at] ^= 0x5a;
    }
    std::fs::write(path, b).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_cache_files_are_detected_and_refetched() {
    let (s3, id, mo, data) = setup("corrupt").await;
    for (sub, truncate) in
        [("segment", false), ("segment", true), ("meta", false), ("meta", true), ("", false)]
    {
        warm_to_disk(&s3, &data.0, id, mo).await;
        let victims: Vec<PathBuf> = if sub.is_empty() {
            vec![data.0.join("ia").join("manifest")]
        } else {
            files(&data.0, sub)
        };
        assert!(!victims.is_empty(), "{sub}");
        for v in &victims {
            damage(v, truncate);
        }
        let before = s3.gets();
        let ia = IaCache::open(ia_config(&data.0), None);
        let r = reader(&s3, &ia);
        query(&r, id, mo, 0, N_KEYS).await;
        ia.wait_idle().await;
        if !sub.is_empty() {
            assert!(s3.gets() > before, "{sub} truncate={truncate}: damaged files were refetched");
        }
        // Whatever was damaged is gone or rewritten: a second run is clean and served warm.
        let again = s3.gets();
        query(&r, id, mo, 0, N_KEYS).await;
        assert_eq!(s3.gets(), again, "{sub} truncate={truncate}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_reads_of_one_cold_segment_make_one_get() {
    let (s3, id, mo, data) = setup("flight").await;
    let ia = IaCache::open(ia_config(&data.0), None);
    // Metadata first, so only segment GETs are counted.
    let meta = reader(&s3, &ia).open(id, Some(mo)).await.unwrap();
    let before = s3.gets();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        // Separate readers (and block caches): only the disk cache can coalesce them.
        let r = reader(&s3, &ia);
        let meta = meta.clone();
        tasks.push(tokio::spawn(async move {
            let (s, e) = (key(10), key(20));
            let plan = r.plan_prefetch(&meta, &[(&s, &e)], false);
            r.prefetch(plan).await.unwrap().len()
        }));
    }
    for t in tasks {
        assert!(t.await.unwrap() > 0);
    }
    assert_eq!(s3.gets() - before, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_still_answers_right() {
    let (s3, id, mo, data) = setup("full").await;
    let mut cfg = ia_config(&data.0);
    // A "filesystem" of 300 KiB under a 1 GiB disk-cap: writes fail with StorageFull.
    cfg.simulated_fs_size = Some(300 << 10);
    let ia = IaCache::open(cfg, None);
    let r = reader(&s3, &ia);
    for _ in 0..3 {
        query(&r, id, mo, 0, N_KEYS).await;
        ia.wait_idle().await;
    }
    let s = ia.stats();
    assert!(s.write_errors > 0, "{s:?}");
    assert!(dir_bytes(&data.0) <= 300 << 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_directory_serves_from_object_storage() {
    let (s3, id, mo, data) = setup("unusable").await;
    // The data dir is a regular file: nothing can be created under it.
    let file = data.0.join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let ia = IaCache::open(ia_config(&file), None);
    assert!(!ia.stats().disk_enabled);
    let r = reader(&s3, &ia);
    query(&r, id, mo, 0, N_KEYS).await;
    query(&r, id, mo, 0, N_KEYS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leftovers_and_orphans_are_removed_at_startup() {
    let (s3, id, mo, data) = setup("gc").await;
    warm_to_disk(&s3, &data.0, id, mo).await;
    let seg = data.0.join("ia").join("segment");
    let kept = files(&data.0, "segment");
    std::fs::write(seg.join("119-0-100.seg.3.tmp"), b"partial").unwrap();
    std::fs::write(seg.join("999-0-10.seg"), [0u8; 26]).unwrap(); // no metadata file
    std::fs::write(seg.join("junk"), b"?").unwrap();
    let ia = IaCache::open(ia_config(&data.0), None);
    assert_eq!(files(&data.0, "segment"), kept);
    assert_eq!(ia.collect_garbage(), rcop_sst::GcReport::default());
    let before = s3.gets();
    query(&reader(&s3, &ia), id, mo, 0, N_KEYS).await;
    assert_eq!(s3.gets(), before);
}
