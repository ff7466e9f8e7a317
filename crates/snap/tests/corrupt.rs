//! Corrupt or inconsistent mem-data, change sets, files and lock records give typed errors,
//! never a panic.
#![expect(clippy::unwrap_used, reason = "test helpers outside #[test] fns unwrap known-good setup")]

use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;
use rcop_proto::coprocessor::KeyRange;
use rcop_proto::enginepb::{ChangeSet, TableCreate, TxnFileRef, TxnFileRefs};
use rcop_snap::{
    Error, FileIds, LockCheck, NoLocks, PairBuf, RebuildRequest, Shard, ShardConfig, plan_rebuild,
};
use rcop_sst::{
    Backend, BlockCache, FileId, MetaCache, ReaderOptions, SstReader, SstStore, StoreConfig,
};
use rcop_wire::{MemData, MemDataFormat, MemDataWriter, RowsWriter};

const PREFIX: &[u8] = b"x\0\0\x01";
const END: &[u8] = b"x\0\0\x02";

fn key(i: u32) -> Vec<u8> {
    let mut k = PREFIX.to_vec();
    k.extend_from_slice(format!("k{i:04}").as_bytes());
    k
}

fn full() -> Vec<KeyRange> {
    vec![KeyRange { start: PREFIX.to_vec().into(), end: END.to_vec().into() }]
}

struct Fixture {
    rt: tokio::runtime::Runtime,
    store: Arc<SstStore>,
    reader: SstReader,
    shard: Shard,
}

/// A shard with two levels, an L0 file and memtable rows, in a memory store.
fn fixture() -> Fixture {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let store = Arc::new(
        SstStore::from_config(&StoreConfig::default().with_backend(Backend::Memory)).unwrap(),
    );
    let mut cfg = ShardConfig::new(3, PREFIX, END, 4).unwrap();
    cfg.block_size = 128;
    cfg.max_table_size = 512;
    let shard = Shard::with_store(cfg, store.clone(), FileIds::starting_at(500)).unwrap();
    rt.block_on(async {
        for i in 0..100 {
            shard.put(&key(i), 5, 10, format!("v{i}").as_bytes()).unwrap();
        }
        shard.flush().await.unwrap();
        shard.compact(0).await.unwrap();
        shard.compact(1).await.unwrap();
        for i in (0..100).step_by(3) {
            shard.put(&key(i), 15, 20, b"second").unwrap();
        }
        shard.flush().await.unwrap();
        shard.compact(0).await.unwrap();
        for i in (0..100).step_by(5) {
            shard.put(&key(i), 25, 30, b"third").unwrap();
        }
        shard.flush().await.unwrap();
        for i in (0..100).step_by(7) {
            shard.delete(&key(i), 35, 40).unwrap();
        }
    });
    let stats = shard.stats();
    assert!(
        stats.l0_files == 1 && stats.level_tables[0] > 1 && stats.level_tables[1] > 1,
        "{stats:?}"
    );
    let reader = SstReader::new(
        store.clone(),
        BlockCache::new(1 << 20),
        MetaCache::new(1 << 20),
        ReaderOptions::default(),
    );
    Fixture { rt, store, reader, shard }
}

impl Fixture {
    fn export(&self, ts: u64) -> (MemData, ChangeSet) {
        let mut buf = Vec::new();
        let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
        let cs = self.shard.export(&full(), &LockCheck::si(ts), &NoLocks, &mut w).unwrap();
        w.finish().unwrap();
        (MemData::decode(Bytes::from(buf)).unwrap(), cs)
    }

    /// Plan, fetch and scan everything; the scan's pairs or the first error.
    fn rebuild(&self, mem: &MemData, cs: &ChangeSet, ranges: &[KeyRange]) -> Result<Pairs, Error> {
        self.rebuild_with(&self.reader, mem, cs, ranges)
    }

    /// As [`rebuild`](Self::rebuild) with empty caches.
    fn rebuild_cold(
        &self,
        mem: &MemData,
        cs: &ChangeSet,
        ranges: &[KeyRange],
    ) -> Result<Pairs, Error> {
        let reader = SstReader::new(
            self.store.clone(),
            BlockCache::new(1 << 20),
            MetaCache::new(1 << 20),
            ReaderOptions::default(),
        );
        self.rebuild_with(&reader, mem, cs, ranges)
    }

    fn rebuild_with(
        &self,
        reader: &SstReader,
        mem: &MemData,
        cs: &ChangeSet,
        ranges: &[KeyRange],
    ) -> Result<Pairs, Error> {
        self.rt.block_on(async {
            let req = RebuildRequest { mem_data: mem, change_set: cs, ranges, read_ts: 100 };
            let snap = plan_rebuild(reader, req).await?.fetch().await?;
            let mut out = Vec::new();
            for r in ranges {
                let mut s = snap.scanner(100);
                s.start(&r.start, &r.end, false)?;
                let mut buf = PairBuf::new();
                while s.next_batch(64, &mut buf)? == rcop_snap::ScanStatus::More {}
                out.extend(buf.iter().map(|(k, v)| (k.to_vec(), v.to_vec())));
            }
            Ok(out)
        })
    }
}

type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

fn snapshot_mut(cs: &mut ChangeSet) -> &mut rcop_proto::enginepb::Snapshot {
    cs.snapshot.as_mut().unwrap()
}

fn tables(cs: &mut ChangeSet) -> &mut Vec<TableCreate> {
    &mut snapshot_mut(cs).table_creates
}

#[test]
fn valid_export_rebuilds() {
    let f = fixture();
    let (mem, cs) = f.export(100);
    let got = f.rebuild(&mem, &cs, &full()).unwrap();
    // 100 keys, 15 deleted (multiples of 7).
    assert_eq!(got.len(), 100 - 15);
    assert_eq!(got[0], (key(1), b"v1".to_vec()));
    assert_eq!(got[2], (key(3), b"second".to_vec()));
    assert_eq!(got[4], (key(5), b"third".to_vec()));
    assert!(!got.iter().any(|(k, _)| k == &key(7)));
    // The change set of the whole shard lists exactly the shard's files, at their levels.
    let files = f.shard.files();
    let snap = cs.snapshot.as_ref().unwrap();
    let mut listed: Vec<(u32, FileId)> =
        snap.l0_creates.iter().map(|l| (0, FileId(l.id))).collect();
    listed.extend(snap.table_creates.iter().map(|t| (t.level, FileId(t.id))));
    assert_eq!(listed, files);
    let mut ids: Vec<FileId> = files.iter().map(|f| f.1).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), files.len(), "file ids are unique");
}

#[test]
fn inconsistent_change_sets() {
    let f = fixture();
    let (mem, cs) = f.export(100);
    let corrupt = |reason: &str, edit: &dyn Fn(&mut ChangeSet)| {
        let mut bad = cs.clone();
        edit(&mut bad);
        match f.rebuild_cold(&mem, &bad, &full()) {
            Err(e) => assert!(e.is_corrupt_input(), "{reason}: {e}"),
            Ok(_) => panic!("{reason}: accepted"),
        }
    };
    corrupt("no snapshot", &|c| c.snapshot = None);
    corrupt("reversed shard range", &|c| {
        let s = snapshot_mut(c);
        std::mem::swap(&mut s.outer_start, &mut s.outer_end);
    });
    corrupt("duplicate id", &|c| {
        let t = tables(c)[0].clone();
        tables(c).push(t);
    });
    corrupt("level 0 table", &|c| tables(c)[0].level = 0);
    corrupt("level 4 table", &|c| tables(c)[0].level = 4);
    corrupt("level 9 table", &|c| tables(c)[0].level = 9);
    // A flipped level tag turns `level = 1` into `cf = 1`: the table becomes a lock-CF table
    // that the rebuild would have skipped.
    corrupt("lock CF table", &|c| tables(c)[0].cf = 1);
    corrupt("extra CF table", &|c| tables(c)[0].cf = 2);
    corrupt("CF out of range", &|c| tables(c)[0].cf = 7);
    // With `inner_key_off` read as 0 the outer shard range is taken for inner keys, so every
    // table would fall outside every range and be dropped.
    corrupt("inner_key_off 0", &|c| snapshot_mut(c).inner_key_off = 0);
    corrupt("inner_key_off 3", &|c| snapshot_mut(c).inner_key_off = 3);
    corrupt("table below the shard", &|c| tables(c)[0].smallest = Bytes::from_static(b"\0"));
    corrupt("L0 past the shard", &|c| {
        snapshot_mut(c).l0_creates[0].biggest = Bytes::from_static(b"\xff\xff");
    });
    corrupt("reversed table", &|c| {
        let t = &mut tables(c)[0];
        std::mem::swap(&mut t.smallest, &mut t.biggest);
    });
    corrupt("overlapping tables", &|c| {
        let biggest = tables(c)[1].biggest.clone();
        tables(c)[0].biggest = biggest;
    });
    corrupt("table key range differs from the file", &|c| {
        tables(c)[0].smallest = Bytes::from_static(b"");
    });
    corrupt("wrong meta offset", &|c| tables(c)[0].meta_offset += 3);
    corrupt("L0 size", &|c| snapshot_mut(c).l0_creates[0].size += 1);
    // With the metadata cached, the declared size must still cover the write CF.
    f.rebuild(&mem, &cs, &full()).unwrap();
    let mut small = cs.clone();
    snapshot_mut(&mut small).l0_creates[0].size = 40;
    assert!(matches!(f.rebuild(&mem, &small, &full()), Err(Error::FileMismatch { .. })));
    corrupt("L0 key range", &|c| snapshot_mut(c).l0_creates[0].smallest = Bytes::from_static(b""));
    corrupt("L0 reversed", &|c| {
        let l = &mut snapshot_mut(c).l0_creates[0];
        std::mem::swap(&mut l.smallest, &mut l.biggest);
    });
}

/// Every file shipped overlaps a request range (the sender filters so): a file whose bounds
/// overlap none claims bounds that are not its own, and is refused rather than dropped.
#[test]
fn files_outside_every_request_range_are_refused() {
    let f = fixture();
    let (mem, cs) = f.export(100);
    let first = vec![KeyRange { start: key(1).into(), end: key(2).into() }];
    let e = f.rebuild(&mem, &cs, &first).unwrap_err();
    assert!(
        matches!(e, Error::ChangeSet { reason, .. } if reason.contains("overlap no request range")),
        "{e}"
    );
    // The same narrow range with the files the sender would ship rebuilds.
    let mut buf = Vec::new();
    let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
    let narrow = f.shard.export(&first, &LockCheck::si(100), &NoLocks, &mut w).unwrap();
    w.finish().unwrap();
    let narrow_mem = MemData::decode(Bytes::from(buf)).unwrap();
    assert_eq!(f.rebuild(&narrow_mem, &narrow, &first).unwrap(), vec![(key(1), b"v1".to_vec())]);
}

#[test]
fn missing_files_are_not_found() {
    let f = fixture();
    let (mem, cs) = f.export(100);
    let mut bad = cs.clone();
    tables(&mut bad)[0].id = 9999;
    let e = f.rebuild(&mem, &bad, &full()).unwrap_err();
    assert!(
        matches!(e, Error::Sst(rcop_sst::Error::NotFound { file_id: FileId(9999), .. })),
        "{e}"
    );
    let mut bad = cs.clone();
    snapshot_mut(&mut bad).l0_creates[0].id = 9998;
    let e = f.rebuild(&mem, &bad, &full()).unwrap_err();
    assert!(
        matches!(e, Error::Sst(rcop_sst::Error::NotFound { file_id: FileId(9998), .. })),
        "{e}"
    );
    assert!(!e.is_retryable());
}

#[test]
fn corrupt_file_bytes() {
    let f = fixture();
    let (mem, cs) = f.export(100);
    let id = FileId(tables(&mut cs.clone())[0].id);
    let good = f.rt.block_on(f.store.get_all(id)).unwrap();
    // Flip one byte in each of several places of the first data block and the metadata.
    for pos in [6usize, 40, good.len() / 2, good.len() - 40] {
        let mut bytes = good.to_vec();
        bytes[pos] ^= 0x5a;
        f.rt.block_on(f.store.put(id, Bytes::from(bytes))).unwrap();
        // A fresh reader, so nothing comes from the caches.
        let reader = SstReader::new(
            f.store.clone(),
            BlockCache::new(1 << 20),
            MetaCache::new(1 << 20),
            ReaderOptions::default(),
        );
        let fx = Fixture {
            rt: tokio::runtime::Runtime::new().unwrap(),
            store: f.store.clone(),
            reader,
            shard: Shard::new(ShardConfig::new(1, &b""[..], &b""[..], 0).unwrap()).unwrap(),
        };
        let e = fx.rebuild(&mem, &cs, &full()).unwrap_err();
        assert!(matches!(e, Error::Sst(_) | Error::FileMismatch { .. }), "byte {pos}: {e}");
    }
    f.rt.block_on(f.store.put(id, good)).unwrap();
}

fn rows(rs: &[(&[u8], u64, &[u8])]) -> MemData {
    let mut buf = Vec::new();
    let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
    for (k, c, v) in rs {
        w.push(k, 1, *c, v);
    }
    w.finish().unwrap();
    MemData::decode(Bytes::from(buf)).unwrap()
}

#[test]
fn bad_mem_rows() {
    let f = fixture();
    let (_, cs) = f.export(100);
    let (a, b) = (key(1), key(2));
    for (what, mem) in [
        ("keys out of order", rows(&[(&b, 5, b"x"), (&a, 5, b"y")])),
        ("duplicate version", rows(&[(&a, 5, b"x"), (&a, 5, b"y")])),
        ("versions ascending", rows(&[(&a, 5, b"x"), (&a, 6, b"y")])),
        ("outside the shard", rows(&[(b"x\0\0\x02k", 5, b"x")])),
        ("before the shard", rows(&[(b"a", 5, b"x")])),
    ] {
        let e = f.rebuild(&mem, &cs, &full()).unwrap_err();
        assert!(matches!(e, Error::MemRow { .. }), "{what}: {e}");
    }
    // Truncated mem-data never decodes into something the rebuild trusts.
    let mut buf = Vec::new();
    let mut w = RowsWriter::new(&mut buf);
    w.push(&a, 1, 2, b"value");
    w.finish();
    let mut v2 = vec![2, 0, 0, 0];
    v2.extend_from_slice(&(buf.len() as u64).to_le_bytes());
    v2.extend_from_slice(&buf);
    v2.extend_from_slice(&0u32.to_le_bytes());
    assert!(MemData::decode(Bytes::from(v2.clone())).is_ok());
    for cut in 1..v2.len() {
        let e = MemData::decode(Bytes::from(v2[..cut].to_vec())).map_err(Error::from).unwrap_err();
        assert!(e.is_corrupt_input());
    }
    // A transaction file reference with a malformed user meta is refused, not ignored
    // (`tests/txn_files.rs` covers the rest).
    let refs = TxnFileRefs {
        txn_file_refs: vec![TxnFileRef {
            start_ts: 1,
            chunk_ids: vec![7],
            user_meta: vec![1, 2, 3].into(),
            ..Default::default()
        }],
    };
    let mut buf = Vec::new();
    MemDataWriter::new(&mut buf, MemDataFormat::V2).finish_with_txn_file_refs(&refs).unwrap();
    let mem = MemData::decode(Bytes::from(buf)).unwrap();
    assert!(matches!(f.rebuild(&mem, &cs, &full()), Err(Error::TxnFile { .. })));
}

#[test]
fn ranges_outside_the_shard() {
    let f = fixture();
    let (mem, cs) = f.export(100);
    for (s, e) in [
        (&b"x\0\0\x00"[..], &b"x\0\0\x01k"[..]),
        (b"x\0\0\x01k", b"x\0\0\x03"),
        (b"x\0\0\x01k", b""),
    ] {
        let r = vec![KeyRange { start: s.to_vec().into(), end: e.to_vec().into() }];
        assert!(matches!(f.rebuild(&mem, &cs, &r), Err(Error::RangeOutOfShard { .. })));
        let mut w_buf = Vec::new();
        let mut w = MemDataWriter::new(&mut w_buf, MemDataFormat::V2);
        assert!(matches!(
            f.shard.export(&r, &LockCheck::si(1), &NoLocks, &mut w),
            Err(Error::RangeOutOfShard { .. })
        ));
    }
    // A reversed range is invalid rather than out of the shard.
    let r = vec![KeyRange { start: key(5).into(), end: key(2).into() }];
    assert!(matches!(f.rebuild(&mem, &cs, &r), Err(Error::InvalidRange { .. })));
}

#[test]
fn corrupt_lock_record_fails_the_export() {
    let f = fixture();
    f.shard.put_lock_record(&key(3), b"P\x04pk\xff").unwrap();
    let mut buf = Vec::new();
    let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
    let e = f.shard.export(&full(), &LockCheck::si(100), &NoLocks, &mut w).unwrap_err();
    assert!(matches!(e, Error::LockRecord { .. }), "{e}");
    drop(w);
    assert!(buf.is_empty(), "a failed export leaves no partial mem-data");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random edits of ids, levels, keys, offsets and sizes: an error or a snapshot, never a
    /// panic; and whatever rebuilds scans without panicking.
    #[test]
    fn random_change_set_edits_never_panic(
        edits in proptest::collection::vec((0usize..8, any::<u64>(), proptest::collection::vec(any::<u8>(), 0..6)), 1..5),
    ) {
        let fx = fixture();
        let (mem, mut cs) = fx.export(100);
        for (what, n, bytes) in edits {
            let s = snapshot_mut(&mut cs);
            let nt = s.table_creates.len().max(1);
            let i = (n as usize) % nt;
            match (what, s.table_creates.get_mut(i)) {
                (0, Some(t)) => t.id = n % 600,
                (1, Some(t)) => t.level = (n % 5) as u32,
                (2, Some(t)) => t.smallest = Bytes::from(bytes),
                (3, Some(t)) => t.biggest = Bytes::from(bytes),
                (4, Some(t)) => t.meta_offset = n as u32,
                (5, _) => if let Some(l) = s.l0_creates.first_mut() { l.size = n as u32 },
                (6, _) => s.inner_key_off = (n % 6) as u32,
                (7, _) => s.outer_start = Bytes::from(bytes),
                _ => {}
            }
        }
        let _ = fx.rebuild(&mem, &cs, &full());
    }
}
