//! The disk cache: warm disk-tier reads against reading the same bytes from a plain local
//! file (goal ≥ 0.8× its throughput), and a cold query (segments from the object store,
//! here a local-directory store) against a warm one (segments from the cache's files).
//!
//! `cargo bench -p rcop-sst --bench ia`
#![expect(clippy::unwrap_used, reason = "benchmark fixtures are known-valid")]

use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use rcop_sst::{
    Backend, BlockCache, Compression, DiskCap, FileId, IaCache, IaConfig, MetaCache, ReaderOptions,
    SstReader, SstStore, StoreConfig, Table,
};

mod common;

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ia_config(dir: &std::path::Path) -> IaConfig {
    let mut c = IaConfig::new(dir);
    // Nothing kept in memory: every warm read is a disk-tier read.
    c.mem_cap = 1;
    c.disk_cap = DiskCap::Bytes(1 << 30);
    c.freq_update_interval = Duration::ZERO;
    c
}

fn reader(store: &Arc<SstStore>, ia: &IaCache) -> SstReader {
    SstReader::new(
        store.clone(),
        BlockCache::new(0),
        MetaCache::new(64 << 20),
        ReaderOptions::default(),
    )
    .with_ia(ia.clone())
}

fn bench(c: &mut Criterion) {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let root = Dir(std::env::temp_dir().join(format!("rcop-ia-bench-{}", std::process::id())));
    let store = Arc::new(
        SstStore::from_config(
            &StoreConfig::default().with_backend(Backend::Local { root: root.0.join("s3") }),
        )
        .unwrap(),
    );
    let file = common::table(150_000, Compression::Lz4); // ≈ 16 MiB
    let id = FileId(1);
    rt.block_on(store.put(id, file.clone())).unwrap();
    let meta = rcop_sst::TableMeta::from_table(id, &file).unwrap();
    let data_end = u64::from(meta.meta_offset());
    // Whole segments (1 MiB of whole blocks): the ranges a prefetch asks for.
    let mut segs = Vec::new();
    let mut start = 0u64;
    for i in 0..meta.num_blocks(rcop_sst::Section::Data) {
        let r = meta.block_handle(rcop_sst::Section::Data, i).range();
        if r.end - start > 1 << 20 {
            segs.push(start..r.start);
            start = r.start;
        }
    }
    segs.push(start..data_end);

    // Warm: the segments on disk (third read: small → ghost → main with mem-cap ≈ 0).
    let ia = IaCache::open(ia_config(&root.0.join("warm")), None);
    let r = reader(&store, &ia);
    let meta = rt.block_on(r.open(id, Some(meta.meta_offset()))).unwrap();
    for _ in 0..3 {
        for s in &segs {
            rt.block_on(r.read_range(&meta, s.clone())).unwrap();
        }
        rt.block_on(ia.wait_idle());
    }
    assert!(ia.stats().disk_segments >= segs.len());
    let plain = root.0.join("plain.sst");
    std::fs::write(&plain, &file).unwrap();

    let mut g = c.benchmark_group("ia");
    g.sample_size(20).measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Bytes(data_end));
    g.bench_function("disk_tier_read", |b| {
        b.iter(|| {
            rt.block_on(async {
                let reads = segs.iter().map(|s| r.read_range(&meta, s.clone()));
                futures::future::try_join_all(reads).await.unwrap()
            })
        })
    });
    g.bench_function("local_file_read", |b| {
        b.iter(|| {
            let segs = segs.clone();
            let plain = plain.clone();
            rt.block_on(async move {
                // The same reads through the same blocking pool, from one plain file.
                let reads = segs.into_iter().map(|s| {
                    let plain = plain.clone();
                    tokio::task::spawn_blocking(move || {
                        let f = std::fs::File::open(&plain).unwrap();
                        let mut buf = vec![0u8; (s.end - s.start) as usize];
                        f.read_exact_at(&mut buf, s.start).unwrap();
                        buf
                    })
                });
                futures::future::try_join_all(reads).await.unwrap()
            })
        })
    });
    g.finish();

    let mut g = c.benchmark_group("ia_query");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    let query = |r: &SstReader| {
        rt.block_on(async {
            let meta = r.open(id, Some(meta.meta_offset())).await.unwrap();
            let plan = r.plan_prefetch(&meta, &[(b"", b"")], false);
            let t = Table::new(meta, r.prefetch(plan).await.unwrap());
            let mut it = t.iter();
            it.seek_to_first().unwrap();
            let mut n = 0u32;
            while it.valid() {
                n += 1;
                it.next().unwrap();
            }
            assert_eq!(n, 150_000);
        })
    };
    let mut round = 0u32;
    g.bench_function("cold", |b| {
        b.iter_batched(
            || {
                round += 1;
                let dir = root.0.join(format!("cold-{round}"));
                let ia = IaCache::open(ia_config(&dir), None);
                (reader(&store, &ia), Dir(dir))
            },
            |(r, dir)| {
                query(&r);
                (r, dir)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("warm", |b| {
        b.iter_batched(
            // A fresh reader (empty memory caches) on the warm directory: as after a restart.
            || reader(&store, &IaCache::open(ia_config(&root.0.join("warm")), None)),
            |r| query(&r),
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
