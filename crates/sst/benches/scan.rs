//! Seek + scan over cached blocks (target: ≥ 30 M entries/s on one core, 100-byte values).
#![expect(clippy::unwrap_used, reason = "benchmark fixtures are known-valid")]

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcop_sst::{Block, BlockHandle, BlockSource, Compression, FileId, Table, TableMeta};

mod common;

/// Every data block of a table, decoded once: what a warm block cache holds.
#[derive(Debug)]
pub struct Cached(pub HashMap<u32, Block>);

impl Cached {
    pub fn load(meta: &TableMeta, file: &Bytes) -> Self {
        let mut m = HashMap::new();
        for i in 0..meta.num_blocks(rcop_sst::Section::Data) {
            let h = meta.block_handle(rcop_sst::Section::Data, i);
            let stored = file.slice(h.offset as usize..(h.offset + h.len) as usize);
            m.insert(h.offset, meta.decode_block(h, &stored).unwrap());
        }
        Cached(m)
    }
}

impl BlockSource for Cached {
    fn block(&self, meta: &TableMeta, handle: BlockHandle) -> rcop_sst::Result<Block> {
        self.0.get(&handle.offset).cloned().ok_or(rcop_sst::Error::NotPrefetched {
            file_id: meta.file_id(),
            offset: u64::from(handle.offset),
        })
    }
}

fn scan(c: &mut Criterion) {
    let n = 200_000u32;
    let file = common::table(n, Compression::Lz4);
    let meta = Arc::new(TableMeta::from_table(FileId(1), &file).unwrap());
    let table = Table::new(meta.clone(), Cached::load(&meta, &file));
    let mut g = c.benchmark_group("scan");
    // Seek to a key in the first block, then read 10 000 entries (key + value) in order.
    let per_iter = 10_000u64;
    g.throughput(Throughput::Elements(per_iter));
    let mut start = 0u32;
    g.bench_function("seek_then_next_10k_cached", |b| {
        b.iter(|| {
            start = (start + 7919) % (n - per_iter as u32);
            let key = common::key(start);
            let mut it = table.iter();
            it.seek(&key).unwrap();
            let mut sum = 0usize;
            for _ in 0..per_iter {
                let v = it.value();
                sum += it.key().len() + v.value.len() + v.version as usize;
                it.next().unwrap();
            }
            black_box(sum)
        })
    });
    g.throughput(Throughput::Elements(1));
    // Seek alone, to keys prepared in advance (spread over the whole table).
    let keys: Vec<Vec<u8>> = (0..1024u32).map(|k| common::key(k * 7919 % n)).collect();
    let mut next = 0usize;
    g.bench_function("seek_cached", |b| {
        let mut it = table.iter();
        b.iter(|| {
            next = (next + 1) % keys.len();
            it.seek(&keys[next]).unwrap();
            black_box(it.valid())
        })
    });
    g.finish();
}

criterion_group!(benches, scan);
criterion_main!(benches);
