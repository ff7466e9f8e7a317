//! The worker with its disk cache (`data-dir`, `[ia]`) over an in-process S3 (s3s-fs on
//! 127.0.0.1) that counts GET requests: a repeated query reads no object, a restarted worker
//! on the same data dir reads none either, `disk-cap` holds, corrupted cache files and an
//! unusable data dir still give the right answer.
#![expect(clippy::unwrap_used, reason = "test fixtures unwrap loopback binds and literals")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use prost::Message;
use rcop_datum::key;
use rcop_exec::{Engine, EngineConfig};
use rcop_limiter::ManualMemoryProbe;
use rcop_proto::{REQ_TYPE_DAG, coprocessor, kvrpcpb, metapb, tipb};
use rcop_snap::{FileIds, Shard, ShardConfig};
use rcop_sst::{Backend, SstStore, StoreConfig};
use rcop_worker::{SnapScan, Worker, WorkerConfig};
use s3s::auth::SimpleAuth;
use s3s::service::S3ServiceBuilder;
use tokio::net::TcpListener;

mod common;
use common::{TABLE, col_expr, column, export, int_ft, prefix, record_key, row};

const ACCESS_KEY: &str = "rcop-test-access";
const SECRET_KEY: &str = "rcop-test-secret-0123456789";
const BUCKET: &str = "ssts";
const START_TS: u64 = 1_000;
const ROWS: i64 = 4_000;

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let p = std::env::temp_dir().join(format!("rcop-worker-ia-{}-{tag}", std::process::id()));
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

/// An s3s-fs server on 127.0.0.1 counting the GETs it serves, and a store on it.
struct S3 {
    store: Arc<SstStore>,
    gets: Arc<AtomicUsize>,
    _root: TempDir,
}

impl S3 {
    async fn start(tag: &str) -> S3 {
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
        S3 { store, gets, _root: root }
    }

    fn gets(&self) -> usize {
        self.gets.load(Ordering::SeqCst)
    }
}

/// A shard of keyspace 1: every row compacted into L1 tables of many small blocks, with
/// updates in the memtable. (L0 files are not disk-cached, as upstream: they are read
/// whole and compacted away soon, so the fixture has none.)
async fn build_shard(store: Arc<SstStore>) -> Shard {
    let mut cfg = ShardConfig::new(7, prefix(1), prefix(2), 4).unwrap();
    cfg.block_size = 1024;
    cfg.max_table_size = 32 << 10;
    let shard = Shard::with_store(cfg, store, FileIds::default()).unwrap();
    for h in 1..=ROWS {
        shard.put(&record_key(h), 10, 11, &row(h % 7, h * 10)).unwrap();
    }
    shard.flush().await.unwrap();
    shard.compact(0).await.unwrap();
    for h in (5..=ROWS).step_by(97) {
        shard.put(&record_key(h), 20, 21, &row(6, -h)).unwrap();
    }
    let stats = shard.stats();
    assert!(stats.level_tables[0] > 2, "several L1 tables: {stats:?}");
    assert_eq!(stats.l0_files, 0);
    shard
}

/// TableScan(handle, c1, c2) → HashAgg(count(c2), sum(c2)) group by c1: reads every row.
fn agg_dag() -> tipb::DagRequest {
    let scan = tipb::Executor {
        tp: Some(tipb::ExecType::TypeTableScan as i32),
        tbl_scan: Some(tipb::TableScan {
            table_id: Some(TABLE),
            columns: vec![column(-1, true), column(1, false), column(2, false)],
            ..Default::default()
        }),
        ..Default::default()
    };
    let sum_ft = tipb::FieldType { tp: Some(246), flen: Some(41), ..int_ft() };
    let agg = |tp: i32, ft: tipb::FieldType| tipb::Expr {
        tp: Some(tp),
        field_type: Some(ft),
        children: vec![col_expr(2)],
        ..Default::default()
    };
    let aggregation = tipb::Executor {
        tp: Some(tipb::ExecType::TypeAggregation as i32),
        aggregation: Some(Box::new(tipb::Aggregation {
            group_by: vec![col_expr(1)],
            agg_func: vec![agg(3001, int_ft()), agg(3002, sum_ft)],
            ..Default::default()
        })),
        ..Default::default()
    };
    tipb::DagRequest {
        executors: vec![scan, aggregation],
        output_offsets: vec![0, 1, 2],
        time_zone_offset: Some(0),
        flags: Some(0),
        encode_type: Some(tipb::EncodeType::TypeDefault as i32),
        ..Default::default()
    }
}

fn cop_request() -> coprocessor::Request {
    let mut start = prefix(1);
    key::encode_record_prefix(&mut start, TABLE);
    let end = key::prefix_next(&start);
    coprocessor::Request {
        context: Some(kvrpcpb::Context {
            region_id: 7,
            region_epoch: Some(metapb::RegionEpoch { conf_ver: 1, version: 3 }),
            keyspace_id: Some(1),
            max_execution_duration_ms: 20_000,
            ..Default::default()
        }),
        tp: REQ_TYPE_DAG,
        data: agg_dag().encode_to_vec().into(),
        ranges: vec![coprocessor::KeyRange { start: start.into(), end: end.into() }],
        start_ts: START_TS,
        paging_size: u64::from(u32::MAX),
        ..Default::default()
    }
}

fn local_answer(shard: &Shard, req: &coprocessor::Request) -> Bytes {
    let snap = shard.snapshot();
    let mut scan = SnapScan::new(snap.scanner(req.start_ts));
    let resp = Engine::new(EngineConfig::default()).handle(req, &mut scan);
    assert!(resp.other_error.is_empty(), "{}", resp.other_error);
    resp.data
}

/// A worker with no block cache (every block read goes to the disk cache) and a disk
/// cache of small segments under `data_dir`.
fn worker(store: &Arc<SstStore>, data_dir: &Path, extra: &str) -> Worker {
    let mem_cap = if extra.contains("mem-cap") { "" } else { "mem-cap = \"16MiB\"" };
    let text = format!(
        "addr = \"127.0.0.1:0\"\ncop-block-cache-size = 0\ndata-dir = {dir:?}\n\
         [ia]\n{mem_cap}\nsegment-size = \"4KiB\"\nfreq-update-interval = \"0s\"\n{extra}",
        dir = data_dir.display().to_string(),
    );
    let config = WorkerConfig::from_toml(&text).unwrap();
    Worker::builder(config)
        .store(Arc::clone(store))
        .memory_probe(Arc::new(ManualMemoryProbe::new(1 << 30, 8 << 30)))
        .cores(2)
        .build()
        .unwrap()
}

/// Runs the request; checks the answer against the local one and returns the response.
async fn query(w: &Worker, body: &Bytes, expected: &Bytes) -> coprocessor::Response {
    let reply = w.handle_coprocessor(body.clone(), true).await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.body));
    let resp = coprocessor::Response::decode(reply.body).unwrap();
    assert_eq!(&resp.data, expected, "offloaded answer equals the local one");
    resp
}

fn ia_details(resp: &coprocessor::Response) -> kvrpcpb::ScanDetailV2 {
    resp.exec_details_v2.unwrap().scan_detail_v2.unwrap()
}

fn metrics(w: &Worker) -> String {
    String::from_utf8(w.metrics().encode_text()).unwrap()
}

fn metric(text: &str, name: &str) -> f64 {
    let value = text.lines().find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' ')));
    assert!(value.is_some(), "{name} missing from\n{text}");
    value.unwrap().parse().unwrap()
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() { stack.push(p) } else { out.push(p) }
        }
    }
    out
}

/// Warms the cache: the first query fetches, the second promotes the reused segments to
/// disk; waits for the writes.
async fn warm(w: &Worker, body: &Bytes, expected: &Bytes) {
    for _ in 0..2 {
        query(w, body, expected).await;
    }
    w.disk_cache().unwrap().wait_idle().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_and_restarted_queries_read_no_object() {
    let s3 = S3::start("warm").await;
    let shard = build_shard(Arc::clone(&s3.store)).await;
    let req = cop_request();
    let body = Bytes::from(export(&shard, &req));
    let expected = local_answer(&shard, &req);
    let data = TempDir::new("data-warm");

    let w = worker(&s3.store, &data.0, "");
    let before = s3.gets();
    let cold = query(&w, &body, &expected).await;
    let cold_gets = s3.gets() - before;
    assert!(cold_gets > 0, "the first query reads from object storage");
    let d = ia_details(&cold);
    assert!(d.ia_remote_read_segment_count > 0, "{d:?}");
    assert!(d.ia_remote_read_segment_bytes > 0 && d.ia_remote_read_segment_nanos > 0);
    query(&w, &body, &expected).await;
    w.disk_cache().unwrap().wait_idle().await;

    let before = s3.gets();
    let warm = query(&w, &body, &expected).await;
    assert_eq!(s3.gets(), before, "a repeated query reads no object");
    let d = ia_details(&warm);
    assert_eq!(d.ia_remote_read_segment_count, 0, "{d:?}");
    assert!(d.ia_cache_hit_count > 0, "{d:?}");
    let text = metrics(&w);
    assert!(metric(&text, "kv_engine_ia_manager_segments_disk_size") > 0.0);
    assert!(metric(&text, "kv_engine_ia_read_segment_cache_miss") > 0.0);
    assert!(metric(&text, "kv_engine_ia_main_queue_capacity") > 0.0);
    assert!(metric(&text, "tikv_worker_remote_cop_prefetch_duration_seconds_count") >= 3.0);
    assert!(text.contains("tikv_worker_remote_cop_prefetch_cache_hit_percent_bucket"));
    let on_disk = w.disk_cache().unwrap().stats().disk_segments;
    assert!(on_disk > 0);
    drop(w);

    // A new worker (new process state: empty block, metadata and segment memory) on the
    // same data dir reads metadata and segments from its files.
    let w = worker(&s3.store, &data.0, "");
    assert!(w.disk_cache().unwrap().stats().disk_segments >= on_disk, "restored at start");
    let before = s3.gets();
    let restarted = query(&w, &body, &expected).await;
    assert_eq!(s3.gets(), before, "after a restart the query reads no object");
    let d = ia_details(&restarted);
    assert_eq!(d.ia_remote_read_segment_count, 0, "{d:?}");
    assert!(d.ia_cache_hit_count > 0, "{d:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupted_cache_files_are_refetched_and_the_answer_stays_right() {
    let s3 = S3::start("corrupt").await;
    let shard = build_shard(Arc::clone(&s3.store)).await;
    let req = cop_request();
    let body = Bytes::from(export(&shard, &req));
    let expected = local_answer(&shard, &req);
    let data = TempDir::new("data-corrupt");
    let w = worker(&s3.store, &data.0, "");
    warm(&w, &body, &expected).await;
    drop(w);

    // Flip a byte in every other cache file and truncate the rest: segments and metadata.
    let cached: Vec<PathBuf> = files(&data.0.join("ia"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "seg" || e == "meta"))
        .collect();
    assert!(cached.iter().any(|p| p.extension().unwrap() == "seg"));
    assert!(cached.iter().any(|p| p.extension().unwrap() == "meta"));
    for (i, p) in cached.iter().enumerate() {
        let mut b = std::fs::read(p).unwrap();
        if i % 2 == 0 {
            let at = b.len() / 2;
            b[at] ^= 0x5a;
        } else {
            b.truncate(b.len() / 3);
        }
        std::fs::write(p, b).unwrap();
    }

    let w = worker(&s3.store, &data.0, "");
    let before = s3.gets();
    query(&w, &body, &expected).await;
    assert!(s3.gets() > before, "bad files are refetched from object storage");
    let text = metrics(&w);
    assert!(
        metric(&text, "rcop_worker_ia_fallback_total{reason=\"corrupt\"}") > 0.0,
        "corruption is counted"
    );
    assert!(w.disk_cache().unwrap().stats().corrupt > 0);
    // The bad files were replaced: warm again, then nothing is fetched.
    warm(&w, &body, &expected).await;
    let before = s3.gets();
    query(&w, &body, &expected).await;
    assert_eq!(s3.gets(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disk_cap_holds_and_answers_stay_right() {
    let s3 = S3::start("cap").await;
    let shard = build_shard(Arc::clone(&s3.store)).await;
    let req = cop_request();
    let body = Bytes::from(export(&shard, &req));
    let expected = local_answer(&shard, &req);
    let data = TempDir::new("data-cap");
    // Far less than the table data: most segments cannot stay on disk.
    let cap: u64 = 24 << 10;
    let w = worker(&s3.store, &data.0, &format!("disk-cap = {cap}\nmem-cap = \"8KiB\""));
    for round in 0..4 {
        let resp = query(&w, &body, &expected).await;
        if round == 0 {
            let read = ia_details(&resp).ia_remote_read_segment_bytes;
            assert!(read > 2 * cap, "the data ({read} bytes) does not fit the cap");
        }
        w.disk_cache().unwrap().wait_idle().await;
        let stats = w.disk_cache().unwrap().stats();
        assert!(stats.disk_bytes <= cap, "{stats:?}");
        // What is on disk is what the cache accounts, plus the manifest (9 bytes).
        let on_disk: u64 = files(&data.0.join("ia"))
            .iter()
            .filter(|p| !p.to_string_lossy().ends_with(".tmp"))
            .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
            .sum();
        assert!(on_disk <= cap + 64, "{on_disk} bytes of files for a {cap}-byte cap");
        if round > 0 {
            assert!(stats.disk_bytes > cap / 2, "the cache is used up to its cap: {stats:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_data_dir_still_answers_from_object_storage() {
    let s3 = S3::start("unusable").await;
    let shard = build_shard(Arc::clone(&s3.store)).await;
    let req = cop_request();
    let body = Bytes::from(export(&shard, &req));
    let expected = local_answer(&shard, &req);
    let data = TempDir::new("data-unusable");
    // `ia` is a file, so the cache's directories cannot be made.
    std::fs::write(data.0.join("ia"), b"not a directory").unwrap();
    let w = worker(&s3.store, &data.0, "");
    assert!(!w.disk_cache().unwrap().stats().disk_enabled);
    for _ in 0..3 {
        query(&w, &body, &expected).await;
    }
    let text = metrics(&w);
    assert_eq!(metric(&text, "rcop_worker_ia_fallback_total{reason=\"unwritable\"}"), 1.0);
}
