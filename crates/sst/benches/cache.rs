//! Block-cache hits (target: ≥ 10 M lookups/s on one core), with a `moka` sync cache
//! holding the same entries as the baseline that chose `quick_cache` for blocks.
#![expect(clippy::unwrap_used, reason = "benchmark fixtures are known-valid")]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcop_sst::{Block, BlockCache, BlockKey, Compression, FileId, Section, TableMeta};

mod common;

fn hits(c: &mut Criterion) {
    let file = common::table(2_000, Compression::Lz4);
    let meta = TableMeta::from_table(FileId(1), &file).unwrap();
    let h = meta.block_handle(Section::Data, 0);
    let stored = file.slice(h.offset as usize..(h.offset + h.len) as usize);
    let block = meta.decode_block(h, &stored).unwrap();
    // 10 000 blocks over 97 files: a working set bigger than the CPU caches' hot lines.
    let keys: Vec<BlockKey> = (0..10_000u32)
        .map(|i| BlockKey { file_id: FileId(u64::from(i % 97)), offset: i * 65_536 })
        .collect();
    let cache = BlockCache::new(1 << 30);
    for k in &keys {
        cache.insert(*k, block.clone());
    }
    let moka: moka::sync::Cache<BlockKey, Block> = moka::sync::Cache::builder()
        .max_capacity(1 << 30)
        .weigher(|_, b: &Block| u32::try_from(b.size()).unwrap())
        .build();
    for k in &keys {
        moka.insert(*k, block.clone());
    }
    moka.run_pending_tasks();

    let mut g = c.benchmark_group("block_cache");
    g.throughput(Throughput::Elements(1_000));
    let mut i = 0usize;
    g.bench_function("hit_1000", |b| {
        b.iter(|| {
            let mut found = 0usize;
            for _ in 0..1_000 {
                i = (i + 7) % keys.len();
                found += cache.get(&keys[i]).map_or(0, |b| b.len());
            }
            black_box(found)
        })
    });
    g.bench_function("moka_sync_hit_1000", |b| {
        b.iter(|| {
            let mut found = 0usize;
            for _ in 0..1_000 {
                i = (i + 7) % keys.len();
                found += moka.get(&keys[i]).map_or(0, |b| b.len());
            }
            black_box(found)
        })
    });
    g.finish();
}

criterion_group!(benches, hits);
criterion_main!(benches);
