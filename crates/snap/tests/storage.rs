//! Integration through object storage: the storage node's shard uploads its files, a worker
//! with its own store client and caches rebuilds from the export, on the local filesystem
//! backend and, with the `s3` feature, on an in-process S3 endpoint (s3s-fs on loopback,
//! signed requests).
#![expect(clippy::unwrap_used, reason = "test setup unwraps loopback binds and literals")]

use std::sync::Arc;

use bytes::Bytes;
use rcop_proto::coprocessor::KeyRange;
use rcop_snap::{
    FileIds, LockCheck, NoLocks, PairBuf, RebuildRequest, ScanStatus, Shard, ShardConfig, Snapshot,
    plan_rebuild,
};
use rcop_sst::{
    Backend, BlockCache, BlockSource, MetaCache, ReaderOptions, SstReader, SstStore, StoreConfig,
};
use rcop_wire::{MemData, MemDataFormat, MemDataWriter};

const PREFIX: &[u8] = b"x\0\0\x07";
const END: &[u8] = b"x\0\0\x08";

struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let p = std::env::temp_dir().join(format!("rcop-snap-{}-{tag}", std::process::id()));
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

fn key(i: u32) -> Vec<u8> {
    let mut k = PREFIX.to_vec();
    k.extend_from_slice(format!("t{i:06}").as_bytes());
    k
}

fn scan<S: BlockSource>(
    snap: &Snapshot<S>,
    ts: u64,
    s: &[u8],
    e: &[u8],
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut sc = snap.scanner(ts);
    sc.start(s, e, false).unwrap();
    let mut buf = PairBuf::new();
    while sc.next_batch(100, &mut buf).unwrap() == ScanStatus::More {}
    buf.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
}

/// Writes ~2 MiB through flushes and compactions with `node`, then rebuilds narrow and wide
/// requests with `worker` (another client of the same bucket) and compares.
async fn scenario(node: Arc<SstStore>, worker: Arc<SstStore>) {
    let mut cfg = ShardConfig::new(11, PREFIX, END, 4).unwrap();
    cfg.block_size = 4 << 10;
    cfg.max_table_size = 256 << 10;
    let shard = Shard::with_store(cfg, node, FileIds::starting_at(1 << 40)).unwrap();
    // Incompressible values, so tables reach their size limit.
    let value = |i: u32, round: u32| {
        let mut x = (u64::from(i) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ u64::from(round);
        (0..180)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect::<Vec<u8>>()
    };
    for i in 0..8000 {
        shard.put(&key(i), 10, 11, &value(i, 1)).unwrap();
    }
    shard.flush().await.unwrap();
    shard.compact(0).await.unwrap();
    shard.compact(1).await.unwrap();
    for i in (0..8000).step_by(2) {
        shard.put(&key(i), 20, 21, &value(i, 2)).unwrap();
    }
    shard.flush().await.unwrap();
    shard.compact(0).await.unwrap();
    for i in (0..8000).step_by(3) {
        shard.put(&key(i), 30, 31, &value(i, 3)).unwrap();
    }
    shard.flush().await.unwrap();
    for i in (0..8000).step_by(5) {
        shard.delete(&key(i), 40, 41).unwrap();
    }
    let stats = shard.stats();
    assert!(stats.level_tables[0] >= 2 && stats.level_tables[1] >= 2, "{stats:?}");

    let reader = SstReader::new(
        worker.clone(),
        BlockCache::new(64 << 20),
        MetaCache::new(16 << 20),
        ReaderOptions::default(),
    );
    let direct = shard.snapshot();
    for (ts, ranges) in
        [(25, vec![(100, 120), (5000, 5003)]), (35, vec![(0, 8000)]), (100, vec![(7990, 8000)])]
    {
        let kr: Vec<KeyRange> = ranges
            .iter()
            .map(|&(a, b)| KeyRange { start: key(a).into(), end: key(b).into() })
            .collect();
        let mut buf = Vec::new();
        let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
        let cs = shard.export(&kr, &LockCheck::si(ts), &NoLocks, &mut w).unwrap();
        w.finish().unwrap();
        let mem = MemData::decode(Bytes::from(buf)).unwrap();
        let before = worker.stats().bytes_read;
        let plan = plan_rebuild(
            &reader,
            RebuildRequest { mem_data: &mem, change_set: &cs, ranges: &kr, read_ts: ts },
        )
        .await
        .unwrap();
        let to_fetch = plan.bytes_to_fetch();
        let snap = plan.fetch().await.unwrap();
        let read = worker.stats().bytes_read - before;
        // Only metadata (first time) and the planned bytes were read.
        assert!(read >= to_fetch, "read {read} < planned {to_fetch}");
        let mut total = 0;
        for r in &kr {
            let got = scan(&snap, ts, &r.start, &r.end);
            assert_eq!(got, scan(&direct, ts, &r.start, &r.end));
            total += got.len();
        }
        assert!(total > 0);
        if ranges.len() == 2 {
            // Narrow ranges over ~3.5 MB of files: metadata and a few blocks per file only
            // (L0 files included: they are read by range too).
            assert!(read < 256 << 10, "narrow request read {read} bytes");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_filesystem_backend() {
    let dir = TempDir::new("local");
    let cfg = StoreConfig::default().with_backend(Backend::Local { root: dir.0.clone() });
    let node = Arc::new(SstStore::from_config(&cfg).unwrap());
    let worker = Arc::new(SstStore::from_config(&cfg).unwrap());
    scenario(node, worker).await;
}

#[cfg(feature = "s3")]
mod s3 {
    use std::sync::Arc;

    use hyper_util::rt::TokioIo;
    use rcop_sst::{Backend, SstStore, StoreConfig};
    use s3s::auth::SimpleAuth;
    use s3s::service::S3ServiceBuilder;
    use tokio::net::TcpListener;

    use super::{TempDir, scenario};

    const ACCESS_KEY: &str = "rcop-snap-access";
    const SECRET_KEY: &str = "rcop-snap-secret-0123456789";
    const BUCKET: &str = "shards";

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn s3_endpoint() {
        let dir = TempDir::new("s3");
        std::fs::create_dir_all(dir.0.join(BUCKET)).unwrap();
        let fs = s3s_fs::FileSystem::new(&dir.0).unwrap();
        let mut b = S3ServiceBuilder::new(fs);
        b.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
        let service = b.build();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let service = service.clone();
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
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
            .with_prefix("cluster-1")
            .with_max_retries(1);
        let node = Arc::new(SstStore::from_config(&cfg).unwrap());
        let worker = Arc::new(SstStore::from_config(&cfg).unwrap());
        scenario(node, worker).await;
    }
}
