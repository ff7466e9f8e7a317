//! Benches of issue 4: scan of a rebuilt snapshot (memtable + 2 levels, hot cache), rebuild
//! from 64 MiB of mem-data + 200 files with warm metadata, block-size estimate of 10 ranges
//! over 1,000 files.
#![expect(clippy::unwrap_used, reason = "bench setup unwraps known-good fixtures")]

use std::hint::black_box;
use std::sync::Arc;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcop_exec::KvBatch;
use rcop_proto::coprocessor::KeyRange;
use rcop_proto::enginepb::ChangeSet;
use rcop_snap::{
    FileIds, InnerRange, KvSink, Level, LockCheck, NoLocks, PairBuf, RebuildRequest, ScanStatus,
    Shard, ShardConfig, estimate_range_blocks_size, plan_rebuild,
};
use rcop_sst::{
    Backend, BlockCache, BuilderOptions, FileId, InMemory, MetaCache, NewValue, ReaderOptions,
    SstReader, SstStore, StoreConfig, Table, TableBuilder,
};
use rcop_wire::{MemData, MemDataFormat, MemDataWriter};

const PREFIX: &[u8] = b"x\0\0\x01";
const END: &[u8] = b"x\0\0\x02";

fn key(i: u32) -> Vec<u8> {
    let mut k = PREFIX.to_vec();
    k.extend_from_slice(format!("t{i:08}").as_bytes());
    k
}

fn value(i: u32) -> Vec<u8> {
    let mut x = (u64::from(i) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (0..100)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn full() -> Vec<KeyRange> {
    vec![KeyRange { start: PREFIX.to_vec().into(), end: END.to_vec().into() }]
}

fn memory_store() -> Arc<SstStore> {
    Arc::new(SstStore::from_config(&StoreConfig::default().with_backend(Backend::Memory)).unwrap())
}

fn reader(store: Arc<SstStore>) -> SstReader {
    SstReader::new(
        store,
        BlockCache::new(1 << 30),
        MetaCache::new(256 << 20),
        ReaderOptions::default(),
    )
}

/// A shard with `n` keys in L2 and, when `overlap`, every other key rewritten in L1 and
/// every 16th in the memtable; exported at ts 100.
fn shard_fixture(
    rt: &tokio::runtime::Runtime,
    n: u32,
    store: Arc<SstStore>,
    overlap: bool,
) -> (Shard, MemData, ChangeSet) {
    let mut cfg = ShardConfig::new(1, PREFIX, END, 4).unwrap();
    cfg.max_table_size = 2 << 20;
    let shard = Shard::with_store(cfg, store, FileIds::starting_at(1)).unwrap();
    rt.block_on(async {
        for i in 0..n {
            shard.put(&key(i), 1, 2, &value(i)).unwrap();
        }
        shard.flush().await.unwrap();
        shard.compact(0).await.unwrap();
        shard.compact(1).await.unwrap();
        if !overlap {
            return;
        }
        for i in (0..n).step_by(2) {
            shard.put(&key(i), 3, 4, &value(i + 1)).unwrap();
        }
        shard.flush().await.unwrap();
        shard.compact(0).await.unwrap();
        for i in (0..n).step_by(16) {
            shard.put(&key(i), 5, 6, &value(i + 2)).unwrap();
        }
    });
    let mut buf = Vec::new();
    let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
    let cs = shard.export(&full(), &LockCheck::si(100), &NoLocks, &mut w).unwrap();
    w.finish().unwrap();
    (shard, MemData::decode(Bytes::from(buf)).unwrap(), cs)
}

fn scan(c: &mut Criterion) {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let n = 200_000;
    let mut g = c.benchmark_group("scan_rebuilt");
    g.throughput(Throughput::Elements(u64::from(n)));
    for (name, overlap) in [
        ("memtable+2 levels, 100-byte rows, batches of 1024", true),
        ("one level, 100-byte rows, batches of 1024", false),
    ] {
        let store = memory_store();
        let (_shard, mem, cs) = shard_fixture(&rt, n, store.clone(), overlap);
        let reader = reader(store);
        let ranges = full();
        let snap = rt.block_on(async {
            let req =
                RebuildRequest { mem_data: &mem, change_set: &cs, ranges: &ranges, read_ts: 100 };
            plan_rebuild(&reader, req).await.unwrap().fetch().await.unwrap()
        });
        g.bench_function(name, |b| {
            let mut out = PairBuf::new();
            b.iter(|| {
                let mut s = snap.scanner(100);
                s.start(PREFIX, END, false).unwrap();
                let mut total = 0;
                loop {
                    out.clear();
                    let st = s.next_batch(1024, &mut out).unwrap();
                    total += out.len();
                    if st == ScanStatus::Done {
                        break;
                    }
                }
                assert_eq!(total, n as usize);
                black_box(total)
            })
        });
        // The worker's sink: the engine's batch, values read in place in the blocks.
        g.bench_function(format!("{name}, values in place"), |b| {
            let mut out = InPlace(KvBatch::new());
            b.iter(|| {
                let mut s = snap.scanner(100);
                s.start(PREFIX, END, false).unwrap();
                let mut total = 0;
                loop {
                    out.0.clear();
                    let st = s.next_batch(1024, &mut out).unwrap();
                    total += out.0.len();
                    if st == ScanStatus::Done {
                        break;
                    }
                }
                assert_eq!(total, n as usize);
                black_box(total)
            })
        });
    }
    g.finish();
}

/// The engine's batch as the worker fills it: keys copied, values left in their blocks.
struct InPlace(KvBatch);

impl KvSink for InPlace {
    #[inline]
    fn push(&mut self, key: &[u8], value: &[u8]) {
        self.0.push(key, value);
    }

    #[inline(always)]
    fn push_in(&mut self, key: &[u8], value: &[u8], owner: &Bytes) {
        self.0.push_in(key, value, owner);
    }

    #[inline(always)]
    fn push_in_split(
        &mut self,
        head: &[u8],
        suffix: &[u8],
        value: &[u8],
        owner: &Bytes,
        _scratch: &mut Vec<u8>,
    ) {
        self.0.push_in_split(head, suffix, value, owner);
    }
}

fn rebuild(c: &mut Criterion) {
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    // 200 files: a level of 200 small tables.
    let store = memory_store();
    let mut cfg = ShardConfig::new(1, PREFIX, END, 4).unwrap();
    cfg.max_table_size = 64 << 10;
    let shard = Shard::with_store(cfg, store.clone(), FileIds::starting_at(1)).unwrap();
    let per_file = 500;
    rt.block_on(async {
        for i in 0..200 * per_file {
            shard.put(&key(i), 1, 2, &value(i)).unwrap();
        }
        shard.flush().await.unwrap();
        shard.compact(0).await.unwrap();
    });
    // 64 MiB of mem-data: rows of ~128 bytes shipped with the change set.
    let mut buf = Vec::new();
    let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
    let cs = shard.export(&full(), &LockCheck::si(100), &NoLocks, &mut w).unwrap();
    let mut i = 0u32;
    let v = vec![7u8; 100];
    while w.row_count() * 140 < 64 << 20 {
        w.push(&key(200 * per_file + i), 3, 4, &v);
        i += 1;
    }
    w.finish().unwrap();
    let mem = MemData::decode(Bytes::from(buf)).unwrap();
    let files = cs.snapshot.as_ref().unwrap().table_creates.len();
    let reader = reader(store);
    let ranges = full();
    // Warm the metadata (and block) caches.
    rt.block_on(async {
        let req = RebuildRequest { mem_data: &mem, change_set: &cs, ranges: &ranges, read_ts: 100 };
        plan_rebuild(&reader, req).await.unwrap().fetch().await.unwrap();
    });
    let mut g = c.benchmark_group("rebuild");
    g.sample_size(10);
    g.bench_function(format!("64 MiB mem-data + {files} files, warm metadata"), |b| {
        b.iter(|| {
            rt.block_on(async {
                let req = RebuildRequest {
                    mem_data: &mem,
                    change_set: &cs,
                    ranges: &ranges,
                    read_ts: 100,
                };
                black_box(plan_rebuild(&reader, req).await.unwrap().fetch().await.unwrap())
            })
        })
    });
    g.finish();
}

fn estimate(c: &mut Criterion) {
    // 1,000 tables of 50 keys (several blocks each) in one level.
    let mut tables = Vec::new();
    for t in 0..1000u32 {
        let id = u64::from(t) + 1;
        let mut b =
            TableBuilder::new(FileId(id), BuilderOptions::for_level(1).with_block_size(1024));
        for i in 0..50 {
            let k = &key(t * 100 + i)[PREFIX.len()..];
            b.add(k, &NewValue { meta: 0, version: 1, user_meta: &[], value: &value(i) }).unwrap();
        }
        tables.push(Table::open_in_memory(FileId(id), b.finish().unwrap()).unwrap());
    }
    let levels: Vec<Level<InMemory>> = vec![Level { level: 1, tables }];
    let ranges: Vec<InnerRange> = (0..10u32)
        .map(|r| InnerRange {
            start: key(r * 10_000 + 17)[PREFIX.len()..].to_vec(),
            end: key(r * 10_000 + 5_000)[PREFIX.len()..].to_vec(),
        })
        .collect();
    c.bench_function("estimate: 10 ranges over 1,000 files", |b| {
        b.iter(|| black_box(estimate_range_blocks_size(&levels, black_box(&ranges))))
    });
}

criterion_group!(benches, scan, rebuild, estimate);
criterion_main!(benches);
