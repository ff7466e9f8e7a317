//! Mem-data v2 with transaction-file references: the worker reads the chunks from object
//! storage and layers them over the shipped rows and the SSTs, as upstream's memtable does.
#![expect(clippy::unwrap_used, reason = "test setup")]

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use rcop_proto::coprocessor::KeyRange;
use rcop_proto::enginepb::{TxnFileRef, TxnFileRefs};
use rcop_snap::{
    FileIds, LockCheck, NoLocks, PairBuf, RebuildRequest, ScanStatus, Shard, ShardConfig,
    plan_rebuild,
};
use rcop_sst::txn::{OP_CHECK_NOT_EXISTS, OP_DELETE, OP_INSERT, OP_LOCK, OP_PUT, TxnChunkBuilder};
use rcop_sst::{Backend, BlockCache, MetaCache, ReaderOptions, SstReader, SstStore, StoreConfig};
use rcop_wire::{MemData, MemDataFormat, MemDataWriter};

const PREFIX: &[u8] = b"x\0\0\x07";
const END: &[u8] = b"x\0\0\x08";

fn inner(i: u32) -> Vec<u8> {
    format!("t{i:06}").into_bytes()
}

fn key(i: u32) -> Vec<u8> {
    [PREFIX, &inner(i)].concat()
}

fn user_meta(start_ts: u64, commit_ts: u64) -> Bytes {
    let mut m = vec![1u8];
    m.extend_from_slice(&start_ts.to_le_bytes());
    m.extend_from_slice(&commit_ts.to_le_bytes());
    m.into()
}

/// Uploads a chunk of `entries` (inner key index, op, value) as `id`.
async fn chunk(store: &SstStore, id: u64, entries: &[(u32, u8, Vec<u8>)]) {
    let mut b = TxnChunkBuilder::new(512);
    for (i, op, v) in entries {
        b.add(&inner(*i), *op, v).unwrap();
    }
    store.put_txn_chunk(id, Bytes::from(b.finish().unwrap())).await.unwrap();
}

struct Fixture {
    shard: Shard,
    reader: SstReader,
    refs: TxnFileRefs,
    /// key index → (commit ts, value; empty = deleted) of every version, newest first.
    versions: BTreeMap<u32, Vec<(u64, Vec<u8>)>>,
}

async fn fixture() -> Fixture {
    let store = Arc::new(
        SstStore::from_config(&StoreConfig::default().with_backend(Backend::Memory)).unwrap(),
    );
    let mut cfg = ShardConfig::new(11, PREFIX, END, 4).unwrap();
    cfg.block_size = 1 << 10;
    let shard = Shard::with_store(cfg, Arc::clone(&store), FileIds::starting_at(1 << 40)).unwrap();
    let mut versions: BTreeMap<u32, Vec<(u64, Vec<u8>)>> = BTreeMap::new();
    let mut record =
        |i: u32, ts: u64, v: Vec<u8>| versions.entry(i).or_default().insert(0, (ts, v));
    for i in 0..1000 {
        let v = format!("sst-{i}").into_bytes();
        shard.put(&key(i), 10, 11, &v).unwrap();
        record(i, 11, v);
    }
    shard.flush().await.unwrap();
    shard.compact(0).await.unwrap();
    for i in [5, 6, 7, 700] {
        let v = format!("mem-{i}").into_bytes();
        shard.put(&key(i), 19, 20, &v).unwrap();
        record(i, 20, v);
    }
    // File A, committed at 30 (user meta), in two chunks: every op kind.
    let op_of =
        |i: u32| [OP_PUT, OP_DELETE, OP_LOCK, OP_CHECK_NOT_EXISTS, OP_INSERT][(i % 5) as usize];
    let a = |range: std::ops::Range<u32>| -> Vec<(u32, u8, Vec<u8>)> {
        range.map(|i| (i, op_of(i), format!("A-{i}").into_bytes())).collect()
    };
    chunk(&store, 101, &a(0..100)).await;
    chunk(&store, 102, &a(100..200)).await;
    for i in 0..200 {
        match op_of(i) {
            OP_PUT | OP_INSERT => record(i, 30, format!("A-{i}").into_bytes()),
            OP_DELETE => record(i, 30, Vec::new()),
            _ => {}
        }
    }
    // File B, committed at 50: new keys past the SSTs and overwrites.
    chunk(
        &store,
        103,
        &(990..1010).map(|i| (i, OP_PUT, format!("B-{i}").into_bytes())).collect::<Vec<_>>(),
    )
    .await;
    for i in 990..1010 {
        record(i, 50, format!("B-{i}").into_bytes());
    }
    // File C, committed at 35, clipped to [t000450, t000460) by its bounds.
    chunk(
        &store,
        104,
        &(400..500).map(|i| (i, OP_PUT, format!("C-{i}").into_bytes())).collect::<Vec<_>>(),
    )
    .await;
    for i in 450..460 {
        record(i, 35, format!("C-{i}").into_bytes());
    }
    let refs = TxnFileRefs {
        txn_file_refs: vec![
            TxnFileRef {
                start_ts: 25,
                chunk_ids: vec![102, 101],
                version: 999,
                user_meta: user_meta(25, 30),
                ..Default::default()
            },
            TxnFileRef { start_ts: 45, chunk_ids: vec![103], version: 50, ..Default::default() },
            TxnFileRef {
                start_ts: 33,
                chunk_ids: vec![104],
                version: 35,
                inner_lower_bound: inner(450).into(),
                inner_upper_bound: inner(460).into(),
                ..Default::default()
            },
        ],
    };
    let reader = SstReader::new(
        store,
        BlockCache::new(8 << 20),
        MetaCache::new(8 << 20),
        ReaderOptions::default(),
    );
    Fixture { shard, reader, refs, versions }
}

fn expected(f: &Fixture, ts: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    f.versions
        .iter()
        .filter_map(|(i, vs)| {
            let (_, v) = vs.iter().find(|(c, _)| *c <= ts)?;
            (!v.is_empty()).then(|| (key(*i), v.clone()))
        })
        .collect()
}

async fn rebuild_and_scan(
    f: &Fixture,
    refs: &TxnFileRefs,
    ts: u64,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>, rcop_snap::Error> {
    let range = KeyRange { start: PREFIX.to_vec().into(), end: END.to_vec().into() };
    let mut buf = Vec::new();
    let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
    let cs =
        f.shard.export(std::slice::from_ref(&range), &LockCheck::si(ts), &NoLocks, &mut w).unwrap();
    w.finish_with_txn_file_refs(refs).unwrap();
    let mem = MemData::decode(Bytes::from(buf)).unwrap();
    let req = RebuildRequest {
        mem_data: &mem,
        change_set: &cs,
        ranges: std::slice::from_ref(&range),
        read_ts: ts,
    };
    let plan = plan_rebuild(&f.reader, req).await?;
    let snap = plan.fetch().await?;
    let mut sc = snap.scanner(ts);
    sc.start(&range.start, &range.end, false)?;
    let mut out = PairBuf::new();
    while sc.next_batch(97, &mut out)? == ScanStatus::More {}
    Ok(out.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn txn_files_layer_over_rows_and_ssts_by_commit_ts() {
    let f = fixture().await;
    for ts in [15, 25, 32, 40, 60] {
        let got = rebuild_and_scan(&f, &f.refs, ts).await.unwrap();
        assert_eq!(got, expected(&f, ts), "read ts {ts}");
    }
    // Spot checks of the rules, at ts 40: A's delete of key 6 hides the memtable row (30 > 20),
    // A's lock on key 7 and constraint on key 8 are invisible, B (50) is not yet visible,
    // C applies inside its bounds only.
    let at40: BTreeMap<Vec<u8>, Vec<u8>> =
        rebuild_and_scan(&f, &f.refs, 40).await.unwrap().into_iter().collect();
    assert!(!at40.contains_key(&key(6)));
    assert_eq!(at40[&key(7)], b"mem-7");
    assert_eq!(at40[&key(8)], b"sst-8");
    assert_eq!(at40[&key(995)], b"sst-995");
    assert!(!at40.contains_key(&key(1005)));
    assert_eq!(at40[&key(450)], b"C-450");
    assert_eq!(at40[&key(449)], b"sst-449");
    assert_eq!(at40[&key(460)], b"sst-460");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_references_are_typed_errors() {
    let f = fixture().await;
    let with = |r: TxnFileRef| TxnFileRefs { txn_file_refs: vec![r] };
    // A chunk that is not in the store.
    let missing = with(TxnFileRef { chunk_ids: vec![777], version: 30, ..Default::default() });
    let e = rebuild_and_scan(&f, &missing, 40).await.unwrap_err();
    assert!(matches!(e, rcop_snap::Error::Sst(rcop_sst::Error::NotFound { .. })), "{e}");
    // Two chunks of one file that overlap (A's first chunk twice under another id).
    let a1 = f.reader.store().get_txn_chunk(101, |_| Ok(())).await.unwrap();
    f.reader.store().put_txn_chunk(105, a1).await.unwrap();
    let overlapping =
        with(TxnFileRef { chunk_ids: vec![101, 105], version: 30, ..Default::default() });
    let e = rebuild_and_scan(&f, &overlapping, 40).await.unwrap_err();
    assert!(matches!(e, rcop_snap::Error::TxnFile { .. }), "{e}");
    assert!(e.is_corrupt_input());
    // A corrupted chunk.
    let mut bad = f.reader.store().get_txn_chunk(103, |_| Ok(())).await.unwrap().to_vec();
    bad[10] ^= 0x40;
    f.reader.store().put_txn_chunk(106, Bytes::from(bad)).await.unwrap();
    let corrupt = with(TxnFileRef { chunk_ids: vec![106], version: 30, ..Default::default() });
    let e = rebuild_and_scan(&f, &corrupt, 40).await.unwrap_err();
    assert!(e.is_corrupt_input(), "{e}");
    // A bad user meta.
    let meta = with(TxnFileRef {
        chunk_ids: vec![101],
        user_meta: vec![9; 17].into(),
        ..Default::default()
    });
    assert!(matches!(rebuild_and_scan(&f, &meta, 40).await, Err(rcop_snap::Error::TxnFile { .. })));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunks_are_asked_of_the_budget_before_they_are_read() {
    let f = fixture().await;
    let range = KeyRange { start: PREFIX.to_vec().into(), end: END.to_vec().into() };
    let mut buf = Vec::new();
    let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
    let cs =
        f.shard.export(std::slice::from_ref(&range), &LockCheck::si(40), &NoLocks, &mut w).unwrap();
    w.finish_with_txn_file_refs(&f.refs).unwrap();
    let mem = MemData::decode(Bytes::from(buf)).unwrap();
    let req = RebuildRequest {
        mem_data: &mem,
        change_set: &cs,
        ranges: std::slice::from_ref(&range),
        read_ts: 40,
    };
    let asked = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let a = Arc::clone(&asked);
    let plan = plan_rebuild(&f.reader, req).await.unwrap();
    assert_eq!(plan.num_txn_chunks(), 4);
    let refuse_chunks = plan.with_block_budget(Arc::new(move |bytes| {
        a.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
        bytes < 1024 // blocks' extra bytes pass; a chunk (≥ 1 KiB twice over) does not
    }));
    let e = refuse_chunks.fetch().await.unwrap_err();
    assert!(matches!(e, rcop_snap::Error::Sst(rcop_sst::Error::OverBudget { .. })), "{e}");
    assert!(asked.load(std::sync::atomic::Ordering::Relaxed) >= 1024);
}
