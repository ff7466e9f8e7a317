//! Caches: concurrent misses fetch once, prefetch coalescing and pinning, byte weights.
#![expect(clippy::unwrap_used, reason = "helpers outside #[test] fns build known-good files")]

use std::sync::Arc;

use bytes::Bytes;
use rcop_sst::{
    Backend, BlockCache, BuilderOptions, Compression, Error, FileId, MetaCache, NewValue,
    ReaderOptions, Section, SstReader, SstStore, StoreConfig, Table, TableBuilder,
};

fn table(id: FileId, n: u32) -> Bytes {
    let mut b = TableBuilder::new(
        id,
        // Zstd where this build has it: the cache holds decompressed blocks either way.
        BuilderOptions::default().with_block_size(2 << 10).with_compression(
            if cfg!(feature = "zstd") { Compression::Zstd } else { Compression::Lz4 },
        ),
    );
    for i in 0..n {
        b.add(
            format!("k{i:06}").as_bytes(),
            &NewValue {
                meta: 0,
                version: 9,
                user_meta: &[],
                value: format!("value {i} {}", "x".repeat(60)).as_bytes(),
            },
        )
        .unwrap();
    }
    b.finish().unwrap()
}

fn memory() -> StoreConfig {
    StoreConfig::default().with_backend(Backend::Memory)
}

async fn setup(opts: ReaderOptions) -> (Arc<SstStore>, SstReader, FileId, Bytes) {
    let store = Arc::new(SstStore::from_config(&memory()).unwrap());
    let id = FileId(11);
    let file = table(id, 2000);
    store.put(id, file.clone()).await.unwrap();
    let reader =
        SstReader::new(store.clone(), BlockCache::new(32 << 20), MetaCache::new(4 << 20), opts);
    (store, reader, id, file)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_opens_and_block_misses_fetch_once() {
    let (store, reader, id, _) = setup(ReaderOptions::default()).await;
    let opens = (0..32).map(|_| reader.open(id, None));
    let metas = futures::future::try_join_all(opens).await.unwrap();
    assert!(metas.iter().all(|m| Arc::ptr_eq(m, &metas[0])));
    assert_eq!(store.stats().gets, 1);

    let meta = metas[0].clone();
    let h = meta.block_handle(Section::Data, 3);
    let loads = (0..32).map(|_| reader.block(&meta, h));
    let blocks = futures::future::try_join_all(loads).await.unwrap();
    assert_eq!(store.stats().gets, 2);
    assert_eq!(
        store.stats().bytes_read - meta.len().min(rcop_sst::DEFAULT_OPEN_READ_SIZE),
        u64::from(h.len)
    );
    assert!(blocks.iter().all(|b| b.len() == blocks[0].len()));
    // A hit does no I/O.
    reader.block(&meta, h).await.unwrap();
    assert_eq!(store.stats().gets, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_failures_are_shared_and_not_cached() {
    let (store, reader, _, _) = setup(ReaderOptions::default()).await;
    let opens = (0..8).map(|_| reader.open(FileId(999), None));
    for r in futures::future::join_all(opens).await {
        assert!(matches!(r, Err(Error::NotFound { file_id: FileId(999), .. })));
    }
    let gets = store.stats().gets;
    assert!(gets >= 1);
    // Errors are not cached: a later open asks again.
    assert!(reader.open(FileId(999), None).await.is_err());
    assert_eq!(store.stats().gets, gets + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefetch_coalesces_reports_bytes_and_fetches_each_block_once() {
    let (store, reader, id, file) =
        setup(ReaderOptions::default().with_max_read_size(8 << 10).with_max_concurrent_reads(2))
            .await;
    let meta = reader.open(id, None).await.unwrap();
    let ranges: [(&[u8], &[u8]); 2] = [(b"k000100", b"k000400"), (b"k001500", b"")];
    let plan = reader.plan_prefetch(&meta, &ranges, false);
    // Exact block set: the blocks overlapping each range, merged when adjacent.
    let mut want = Vec::new();
    for (s, e) in ranges {
        want.extend(meta.blocks_for_range(Section::Data, s, e));
    }
    want.sort();
    want.dedup();
    assert_eq!(plan.num_blocks(), want.len());
    let stored: u64 =
        want.iter().map(|&i| u64::from(meta.block_handle(Section::Data, i).len)).sum();
    assert_eq!(plan.bytes_to_fetch(), stored);
    assert_eq!(plan.bytes_needed(), stored);
    for r in plan.reads() {
        assert!(r.range.end - r.range.start <= 8 << 10 || r.blocks.len() == 1);
        let sum: u64 = r.blocks.iter().map(|h| u64::from(h.len)).sum();
        assert_eq!(sum, r.range.end - r.range.start, "reads cover adjacent blocks only");
    }
    // Two identical prefetches at once: each read happens once. The first claims every
    // block before it awaits anything, so the second waits for those blocks.
    let gets = store.stats().gets;
    let reads = plan.reads().len() as u64;
    let (a, b) = tokio::join!(biased; reader.prefetch(plan.clone()), reader.prefetch(plan));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.len(), want.len());
    assert_eq!(b.len(), want.len());
    assert_eq!(store.stats().gets - gets, reads);

    // Scanning over the pinned blocks equals scanning the whole file.
    let pinned = Table::new(meta.clone(), a);
    let local = Table::open_in_memory(id, file).unwrap();
    let mut it = pinned.iter();
    let mut want_it = local.iter();
    it.seek(b"k001500").unwrap();
    want_it.seek(b"k001500").unwrap();
    let mut n = 0;
    while want_it.valid() {
        assert!(it.valid());
        assert_eq!(it.key(), want_it.key());
        assert_eq!(it.value(), want_it.value());
        it.next().unwrap();
        want_it.next().unwrap();
        n += 1;
    }
    assert!(!it.valid());
    assert_eq!(n, 500);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_cache_is_weighted_by_bytes() {
    let store = Arc::new(SstStore::from_config(&memory()).unwrap());
    let id = FileId(12);
    store.put(id, table(id, 4000)).await.unwrap();
    let capacity = 64 << 10;
    let reader = SstReader::new(
        store,
        BlockCache::new(capacity),
        MetaCache::new(1 << 20),
        ReaderOptions::default(),
    );
    let meta = reader.open(id, None).await.unwrap();
    let n = meta.num_blocks(Section::Data);
    let mut decompressed = 0u64;
    for i in 0..n {
        decompressed +=
            reader.block(&meta, meta.block_handle(Section::Data, i)).await.unwrap().size() as u64;
    }
    assert!(decompressed > 4 * capacity);
    assert!(reader.block_cache().weighted_size() <= capacity);
    assert!(reader.block_cache().entry_count() < n as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l0_files_are_read_whole_from_the_store() {
    let store = Arc::new(SstStore::from_config(&memory()).unwrap());
    let mut b = rcop_sst::L0Builder::new(FileId(21), 555, BuilderOptions::default());
    for i in 0..50u32 {
        let v = NewValue { meta: 0, version: 10, user_meta: &[], value: b"w" };
        b.add(rcop_sst::CF_WRITE, format!("w{i:03}").as_bytes(), &v).unwrap();
    }
    store.put(FileId(21), b.finish().unwrap()).await.unwrap();
    let reader = SstReader::new(
        store.clone(),
        BlockCache::new(1 << 20),
        MetaCache::new(1 << 20),
        ReaderOptions::default(),
    );
    let l0 = reader.open_l0(FileId(21)).await.unwrap();
    assert_eq!(l0.snap_version(), 555);
    assert!(l0.cf(rcop_sst::CF_LOCK).is_none());
    let w = l0.cf(rcop_sst::CF_WRITE).unwrap();
    assert_eq!(w.get(b"w049", 10).unwrap().unwrap().value.as_ref(), b"w");
    assert_eq!(store.stats().gets, 1);
    assert!(matches!(reader.open_l0(FileId(22)).await, Err(Error::NotFound { .. })));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prefetch_with_old_versions_serves_reads_at_old_timestamps() {
    let store = Arc::new(SstStore::from_config(&memory()).unwrap());
    let id = FileId(31);
    let mut b = TableBuilder::new(id, BuilderOptions::default().with_block_size(512));
    for i in 0..400u32 {
        for version in [30u64, 20, 10] {
            let value = format!("{i}@{version}");
            let v = NewValue { meta: 0, version, user_meta: &[], value: value.as_bytes() };
            b.add(format!("key{i:04}").as_bytes(), &v).unwrap();
        }
    }
    store.put(id, b.finish().unwrap()).await.unwrap();
    let reader = SstReader::new(
        store,
        BlockCache::new(16 << 20),
        MetaCache::new(1 << 20),
        ReaderOptions::default(),
    );
    let meta = reader.open(id, None).await.unwrap();
    assert!(meta.num_blocks(Section::Old) > 4);
    let range: [(&[u8], &[u8]); 1] = [(b"key0100", b"key0200")];

    // Latest versions only: reads at an old timestamp need blocks that were not prefetched.
    let latest = Table::new(
        meta.clone(),
        reader.prefetch(reader.plan_prefetch(&meta, &range, false)).await.unwrap(),
    );
    assert_eq!(latest.get(b"key0150", 40).unwrap().unwrap().value.as_ref(), b"150@30");
    assert!(matches!(latest.get(b"key0150", 25), Err(Error::NotPrefetched { .. })));

    // With old versions, every key of the range reads correctly at every timestamp.
    let all = Table::new(
        meta.clone(),
        reader.prefetch(reader.plan_prefetch(&meta, &range, true)).await.unwrap(),
    );
    for i in 100..200u32 {
        let key = format!("key{i:04}");
        for (ts, want) in
            [(35u64, Some(30u64)), (29, Some(20)), (20, Some(20)), (15, Some(10)), (9, None)]
        {
            let got = all.get(key.as_bytes(), ts).unwrap();
            assert_eq!(got.as_ref().map(|v| v.version), want, "{key}@{ts}");
            if let (Some(v), Some(w)) = (got, want) {
                assert_eq!(v.value.as_ref(), format!("{i}@{w}").as_bytes());
            }
        }
    }
}

/// A remote cache serving `file`'s bytes, optionally corrupted or cut, counting its answers.
#[derive(Debug)]
struct FakeRemote {
    file: Bytes,
    mode: &'static str,
    answers: std::sync::atomic::AtomicU64,
}

impl rcop_sst::RemoteCache for FakeRemote {
    fn read(
        &self,
        _id: FileId,
        start: u64,
        end: Option<u64>,
    ) -> futures::future::BoxFuture<'static, Option<Bytes>> {
        self.answers.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let end = end.unwrap_or(self.file.len() as u64) as usize;
        let mut bytes = self.file[start as usize..end].to_vec();
        match self.mode {
            "flip" => {
                let mid = bytes.len() / 2;
                bytes[mid] ^= 0x10;
            }
            "short" => {
                bytes.pop();
            }
            "none" => return Box::pin(async { None }),
            _ => {}
        }
        Box::pin(async move { Some(Bytes::from(bytes)) })
    }
}

/// Blocks and metadata come from the remote cache when it answers exactly; a corrupt, short
/// or absent answer falls back to the object store, and the blocks are the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_cache_answers_first_and_bad_answers_fall_back_to_the_store() {
    let ranges: [(&[u8], &[u8]); 1] = [(b"k000100", b"k000900")];
    let (store0, plain, id, file) = setup(ReaderOptions::default()).await;
    let meta0 = plain.open(id, None).await.unwrap();
    let values = |t: &Table<rcop_sst::Prefetched>| -> Vec<Vec<u8>> {
        (100..900u32)
            .map(|i| t.get(format!("k{i:06}").as_bytes(), 9).unwrap().unwrap().value.to_vec())
            .collect()
    };
    let want = values(&Table::new(
        meta0.clone(),
        plain.prefetch(plain.plan_prefetch(&meta0, &ranges, false)).await.unwrap(),
    ));
    let _ = store0;
    for mode in ["good", "flip", "short", "none"] {
        let (store, reader, id, _) = setup(ReaderOptions::default()).await;
        let remote = Arc::new(FakeRemote {
            file: file.clone(),
            mode,
            answers: std::sync::atomic::AtomicU64::new(0),
        });
        let reader = reader.with_remote_cache(remote.clone());
        let meta = reader.open(id, Some(meta0.meta_offset())).await.unwrap();
        let before = store.stats().gets;
        let got = values(&Table::new(
            meta.clone(),
            reader.prefetch(reader.plan_prefetch(&meta, &ranges, false)).await.unwrap(),
        ));
        assert_eq!(got, want, "{mode}");
        let store_reads = store.stats().gets - before;
        assert!(remote.answers.load(std::sync::atomic::Ordering::Relaxed) > 0, "{mode}");
        match mode {
            "good" => {
                assert_eq!(store.stats().gets, 0, "metadata and blocks from the remote cache");
            }
            _ => assert!(store_reads > 0, "{mode}: the store served the blocks"),
        }
    }
}

/// Scans each range over the blocks `p` pinned and over the whole file: the same entries.
fn assert_pins(
    meta: &Arc<rcop_sst::TableMeta>,
    p: rcop_sst::Prefetched,
    file: &Bytes,
    ranges: &[(&[u8], &[u8])],
) {
    let pinned = Table::new(meta.clone(), p);
    let local = Table::open_in_memory(meta.file_id(), file.clone()).unwrap();
    for (start, end) in ranges {
        let (mut it, mut want) = (pinned.iter(), local.iter());
        it.seek(start).unwrap();
        want.seek(start).unwrap();
        let mut n = 0;
        while want.valid() && (end.is_empty() || want.key() < *end) {
            assert!(it.valid());
            assert_eq!((it.key(), it.value()), (want.key(), want.value()));
            it.next().unwrap();
            want.next().unwrap();
            n += 1;
        }
        assert!(n > 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefetch_whose_read_fails_lets_the_waiting_one_load_its_blocks() {
    // A read a block.
    let (store, reader, id, file) = setup(ReaderOptions::default().with_max_read_size(1)).await;
    let meta = reader.open(id, None).await.unwrap();
    let ranges: [(&[u8], &[u8]); 1] = [(b"k000300", b"k000900")];
    let plan = reader.plan_prefetch(&meta, &ranges, false);
    let want: Vec<usize> = meta.blocks_for_range(Section::Data, b"k000300", b"k000900").collect();
    assert!(plan.reads().len() > 1);
    // The first refuses every decompressed byte: its read fails after it claimed every
    // block, and the second, waiting for those claims, must load them itself.
    let refusing = plan.clone().with_budget(Arc::new(|_| false));
    let gets = store.stats().gets;
    // `biased`: the first is polled first, so it claims every block before the second asks;
    // a claim left behind would hang the second, hence the timeout.
    let both =
        async { tokio::join!(biased; reader.prefetch(refusing), reader.prefetch(plan.clone())) };
    let (a, b) = tokio::time::timeout(std::time::Duration::from_secs(30), both).await.unwrap();
    assert!(matches!(a, Err(Error::OverBudget { file_id, .. }) if file_id == id), "{a:?}");
    let b = b.unwrap();
    assert_eq!(b.len(), want.len());
    // The second reads each range once; the first, failing at its first read, stops the
    // others, which may or may not have been sent.
    let reads = plan.reads().len() as u64;
    let extra = store.stats().gets - gets;
    assert!(extra > reads && extra <= 2 * reads, "{extra} vs {reads}");
    assert_pins(&meta, b, &file, &ranges);
    // The failed claims left nothing behind: a third prefetch finds every block cached.
    let gets = store.stats().gets;
    let c = reader.prefetch(reader.plan_prefetch(&meta, &ranges, false)).await.unwrap();
    assert_eq!(c.len(), want.len());
    assert_eq!(store.stats().gets, gets);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlapping_prefetches_at_once_pin_every_block_of_their_ranges() {
    let (store, reader, id, file) = setup(ReaderOptions::default().with_max_read_size(1)).await;
    let meta = reader.open(id, None).await.unwrap();
    let ra: [(&[u8], &[u8]); 1] = [(b"k000200", b"k001200")];
    let rb: [(&[u8], &[u8]); 2] = [(b"k000100", b"k000500"), (b"k000900", b"k001600")];
    let (pa, pb) =
        (reader.plan_prefetch(&meta, &ra, false), reader.plan_prefetch(&meta, &rb, false));
    let blocks = |r: &[(&[u8], &[u8])]| {
        let mut v: Vec<usize> =
            r.iter().flat_map(|(s, e)| meta.blocks_for_range(Section::Data, s, e)).collect();
        v.sort();
        v.dedup();
        v
    };
    let (wa, wb) = (blocks(&ra), blocks(&rb));
    let mut union = wa.clone();
    union.extend(&wb);
    union.sort();
    union.dedup();
    assert!(union.len() < wa.len() + wb.len(), "the ranges share blocks");
    // A read a block, the first polled first: it claims all its blocks, and the second reads
    // only the blocks the first does not, waiting for the shared ones.
    let gets = store.stats().gets;
    let both = async { tokio::join!(biased; reader.prefetch(pa), reader.prefetch(pb)) };
    let (a, b) = tokio::time::timeout(std::time::Duration::from_secs(30), both).await.unwrap();
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!((a.len(), b.len()), (wa.len(), wb.len()));
    assert_eq!(store.stats().gets - gets, union.len() as u64);
    assert_pins(&meta, a, &file, &ra);
    assert_pins(&meta, b, &file, &rb);
}
