//! Model check: random MVCC writes, locks, flushes and compactions; then, at random read
//! timestamps and ranges, the shard's own scan, its point gets, and export → rebuild → scan
//! on the worker side all equal a `BTreeMap` MVCC model.
#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "the model driver outside #[test] fns unwraps and panics on a mismatch"
)]

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;
use rcop_proto::coprocessor::KeyRange;
use rcop_snap::{
    Error, FileIds, KvSink, Lock, LockCheck, LockType, PairBuf, RebuildRequest, ScanStatus, Shard,
    ShardConfig, plan_rebuild,
};
use rcop_sst::{Backend, BlockCache, MetaCache, ReaderOptions, SstReader, SstStore, StoreConfig};
use rcop_wire::{MemData, MemDataFormat, MemDataWriter};

const PREFIX: &[u8] = b"x\0\0\x01";
const END: &[u8] = b"x\0\0\x02";

fn key(i: u8) -> Vec<u8> {
    let mut k = PREFIX.to_vec();
    k.extend_from_slice(b"key");
    k.push(i);
    k
}

#[derive(Debug, Clone)]
enum Op {
    Put { k: u8, commit_ts: u64, value: Vec<u8> },
    Delete { k: u8, commit_ts: u64 },
    Lock { k: u8, put: bool, ts: u64, min_commit_ts: u64, in_cf: bool },
    Unlock { k: u8 },
    Flush,
    Compact(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u8..24, 1u64..200, proptest::collection::vec(any::<u8>(), 1..12))
            .prop_map(|(k, commit_ts, value)| Op::Put { k, commit_ts, value }),
        2 => (0u8..24, 1u64..200).prop_map(|(k, commit_ts)| Op::Delete { k, commit_ts }),
        1 => (0u8..24, any::<bool>(), 1u64..200, 0u64..220, any::<bool>())
            .prop_map(|(k, put, ts, min_commit_ts, in_cf)| Op::Lock { k, put, ts, min_commit_ts, in_cf }),
        1 => (0u8..24).prop_map(|k| Op::Unlock { k }),
        2 => Just(Op::Flush),
        2 => (0u32..2).prop_map(Op::Compact),
    ]
}

#[derive(Debug, Clone)]
struct Read {
    ts: u64,
    ranges: Vec<(u8, u8)>,
    full: bool,
}

fn read() -> impl Strategy<Value = Read> {
    (0u64..230, proptest::collection::vec((0u8..26, 0u8..26), 1..4), proptest::bool::weighted(0.2))
        .prop_map(|(ts, rs, full)| {
            let mut ranges: Vec<(u8, u8)> =
                rs.into_iter().map(|(a, b)| (a.min(b), a.max(b))).collect();
            ranges.sort();
            // Non-overlapping, as request ranges are.
            let mut out: Vec<(u8, u8)> = Vec::new();
            for (a, b) in ranges {
                match out.last_mut() {
                    Some(last) if a <= last.1 => last.1 = last.1.max(b),
                    _ => out.push((a, b)),
                }
            }
            Read { ts, ranges: out, full }
        })
}

#[derive(Default)]
struct Model {
    /// (key, commit_ts) → value (empty = delete).
    versions: BTreeMap<(Vec<u8>, u64), Vec<u8>>,
    /// Locks: key → lock (and whether it lives in the lock CF or the host table).
    locks: BTreeMap<Vec<u8>, (Lock, bool)>,
}

impl Model {
    fn get(&self, k: &[u8], ts: u64) -> Option<Vec<u8>> {
        self.versions
            .range((k.to_vec(), 0)..=(k.to_vec(), ts))
            .next_back()
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    }

    fn scan(&self, start: &[u8], end: &[u8], ts: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut keys: Vec<&Vec<u8>> = self
            .versions
            .keys()
            .map(|(k, _)| k)
            .filter(|k| k.as_slice() >= start && (end.is_empty() || k.as_slice() < end))
            .collect();
        keys.dedup();
        keys.into_iter().filter_map(|k| self.get(k, ts).map(|v| (k.clone(), v))).collect()
    }

    fn blocking_lock(&self, ranges: &[(Vec<u8>, Vec<u8>)], ts: u64) -> Option<u64> {
        self.locks
            .iter()
            .filter(|(k, _)| {
                ranges
                    .iter()
                    .any(|(s, e)| k.as_slice() >= s.as_slice() && k.as_slice() < e.as_slice())
            })
            .find(|(_, (l, _))| {
                matches!(l.lock_type, LockType::Put | LockType::Delete)
                    && l.ts <= ts
                    && l.min_commit_ts <= ts
            })
            .map(|(_, (l, _))| l.ts)
    }
}

fn scan_all<S: rcop_sst::BlockSource>(
    snap: &rcop_snap::Snapshot<S>,
    ts: u64,
    start: &[u8],
    end: &[u8],
    desc: bool,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut scanner = snap.scanner(ts);
    scanner.start(start, end, desc).unwrap();
    let mut out = Vec::new();
    let mut buf = PairBuf::new();
    let mut in_place = InPlace::default();
    loop {
        buf.clear();
        // Small batches exercise resumption, larger ones runs across blocks and tables;
        // every other batch goes to a sink that keeps values in their blocks.
        let max = [3, 1, 50, 7][in_place.batches % 4];
        let status = if in_place.batches % 2 == 0 {
            in_place.batches += 1;
            let status = scanner.next_batch(max, &mut in_place).unwrap();
            in_place.flush();
            out.append(&mut in_place.pairs);
            status
        } else {
            in_place.batches += 1;
            let status = scanner.next_batch(max, &mut buf).unwrap();
            out.extend(buf.iter().map(|(k, v)| (k.to_vec(), v.to_vec())));
            status
        };
        if status == ScanStatus::Done {
            break;
        }
    }
    IN_PLACE.with(|n| n.set(n.get() + in_place.in_place));
    if desc {
        out.reverse();
    }
    out
}

thread_local! {
    /// Values handed in place by the scans of this test thread.
    static IN_PLACE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A sink that checks the scanner's promise for in-place values: each lies inside the
/// buffer handed with it, and reads back after the scanner moved on.
#[derive(Default)]
struct InPlace {
    batches: usize,
    in_place: usize,
    held: Vec<(Vec<u8>, bytes::Bytes, usize, usize)>,
    pairs: Vec<(Vec<u8>, Vec<u8>)>,
}

impl KvSink for InPlace {
    fn push(&mut self, key: &[u8], value: &[u8]) {
        self.flush();
        self.pairs.push((key.to_vec(), value.to_vec()));
    }

    fn push_in(&mut self, key: &[u8], value: &[u8], owner: &bytes::Bytes) {
        let at = (value.as_ptr() as usize).checked_sub(owner.as_ptr() as usize);
        let Some(at) = at else { panic!("an in-place value starts inside its buffer") };
        assert!(at + value.len() <= owner.len(), "an in-place value ends inside its buffer");
        self.in_place += 1;
        self.held.push((key.to_vec(), owner.clone(), at, at + value.len()));
    }
}

impl InPlace {
    /// Moves the held values (read from their buffers now) to `pairs`, in order.
    fn flush(&mut self) {
        for (k, b, s, e) in self.held.drain(..) {
            self.pairs.push((k, b[s..e].to_vec()));
        }
    }
}

fn run(ops: Vec<Op>, reads: Vec<Read>) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async move {
        let store = Arc::new(
            SstStore::from_config(&StoreConfig::default().with_backend(Backend::Memory)).unwrap(),
        );
        let mut cfg = ShardConfig::new(9, PREFIX, END, 4).unwrap();
        // Tiny blocks and tables: many blocks, several tables per level, old-version sections.
        cfg.block_size = 64;
        cfg.max_table_size = 300;
        let shard = Shard::with_store(cfg, store.clone(), FileIds::starting_at(100)).unwrap();
        let reader = SstReader::new(
            store,
            BlockCache::new(1 << 20),
            MetaCache::new(1 << 20),
            ReaderOptions::default(),
        );
        let mut model = Model::default();
        let mut host_locks: BTreeMap<Vec<u8>, Lock> = BTreeMap::new();
        let mut start_ts = 1000;
        for op in ops {
            match op {
                Op::Put { k, commit_ts, value } => {
                    if model.versions.contains_key(&(key(k), commit_ts)) {
                        continue;
                    }
                    start_ts += 1;
                    shard.put(&key(k), start_ts, commit_ts, &value).unwrap();
                    model.versions.insert((key(k), commit_ts), value);
                }
                Op::Delete { k, commit_ts } => {
                    if model.versions.contains_key(&(key(k), commit_ts)) {
                        continue;
                    }
                    start_ts += 1;
                    shard.delete(&key(k), start_ts, commit_ts).unwrap();
                    model.versions.insert((key(k), commit_ts), Vec::new());
                }
                Op::Lock { k, put, ts, min_commit_ts, in_cf } => {
                    let ty = if put { LockType::Put } else { LockType::Lock };
                    let mut lock = Lock::new(ty, key(0), ts, 3000);
                    lock.min_commit_ts = min_commit_ts;
                    // One lock per key, in one place.
                    shard.remove_lock(&key(k)).unwrap();
                    host_locks.remove(&key(k));
                    if in_cf {
                        shard.put_lock(&key(k), &lock).unwrap();
                    } else {
                        host_locks.insert(key(k), lock.clone());
                    }
                    model.locks.insert(key(k), (lock, in_cf));
                }
                Op::Unlock { k } => {
                    shard.remove_lock(&key(k)).unwrap();
                    host_locks.remove(&key(k));
                    model.locks.remove(&key(k));
                }
                Op::Flush => {
                    shard.flush().await.unwrap();
                }
                Op::Compact(level) => {
                    shard.compact(level).await.unwrap();
                }
            }
        }
        for r in reads {
            let ranges: Vec<(Vec<u8>, Vec<u8>)> = if r.full {
                vec![(PREFIX.to_vec(), END.to_vec())]
            } else {
                r.ranges.iter().map(|&(a, b)| (key(a), key(b))).collect()
            };
            let snap = shard.snapshot();
            for (s, e) in &ranges {
                let want = model.scan(s, e, r.ts);
                assert_eq!(
                    scan_all(&snap, r.ts, s, e, false),
                    want,
                    "shard forward {s:?}..{e:?} @{}",
                    r.ts
                );
                assert_eq!(scan_all(&snap, r.ts, s, e, true), want, "shard reverse @{}", r.ts);
            }
            for k in 0..26 {
                assert_eq!(
                    snap.get(&key(k), r.ts).unwrap().map(|b| b.to_vec()),
                    model.get(&key(k), r.ts),
                    "get {k} @{}",
                    r.ts
                );
            }

            let kr: Vec<KeyRange> = ranges
                .iter()
                .map(|(s, e)| KeyRange { start: s.clone().into(), end: e.clone().into() })
                .collect();
            let mut mem = Vec::new();
            let mut w = MemDataWriter::new(&mut mem, MemDataFormat::V2);
            let exported = shard.export(&kr, &LockCheck::si(r.ts), &host_locks, &mut w);
            let blocking = model.blocking_lock(&ranges, r.ts);
            let change_set = match (exported, blocking) {
                (Err(Error::Locked(info)), Some(_)) => {
                    let (l, _) = &model.locks[&info.key.to_vec()];
                    assert_eq!(info.lock_version, l.ts);
                    continue;
                }
                (Ok(cs), None) => cs,
                (res, want) => panic!("export {res:?}, blocking lock expected: {want:?}"),
            };
            w.finish().unwrap();
            let mem_data = MemData::decode(Bytes::from(mem)).unwrap();
            // Every shipped row lies in the ranges, one per key (read ts < u64::MAX).
            for row in mem_data.rows().iter() {
                assert!(
                    ranges.iter().any(|(s, e)| row.key >= s.as_slice() && row.key < e.as_slice())
                );
                assert!(row.commit_ts <= r.ts);
            }
            let plan = plan_rebuild(
                &reader,
                RebuildRequest {
                    mem_data: &mem_data,
                    change_set: &change_set,
                    ranges: &kr,
                    read_ts: r.ts,
                },
            )
            .await
            .unwrap();
            assert!(plan.bytes_needed() >= plan.bytes_to_fetch());
            let rebuilt = plan.fetch().await.unwrap();
            for (s, e) in &ranges {
                let want = model.scan(s, e, r.ts);
                assert_eq!(scan_all(&rebuilt, r.ts, s, e, false), want, "worker forward @{}", r.ts);
                assert_eq!(scan_all(&rebuilt, r.ts, s, e, true), want, "worker reverse @{}", r.ts);
                for (k, v) in &want {
                    assert_eq!(rebuilt.get(k, r.ts).unwrap().as_deref(), Some(v.as_slice()));
                }
            }
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn export_rebuild_scan_matches_model(
        ops in proptest::collection::vec(op(), 10..150),
        reads in proptest::collection::vec(read(), 1..5),
    ) {
        run(ops, reads);
    }
}

#[test]
fn fixed_scenario_with_all_layers() {
    let mut ops = Vec::new();
    for i in 0..20u8 {
        ops.push(Op::Put { k: i, commit_ts: 10 + u64::from(i), value: vec![i; 20] });
    }
    ops.push(Op::Flush);
    ops.push(Op::Compact(0));
    ops.push(Op::Compact(1));
    for i in (0..20u8).step_by(2) {
        ops.push(Op::Put { k: i, commit_ts: 50 + u64::from(i), value: vec![i + 1; 30] });
    }
    ops.push(Op::Flush);
    ops.push(Op::Compact(0));
    for i in (0..20u8).step_by(3) {
        ops.push(Op::Delete { k: i, commit_ts: 80 + u64::from(i) });
    }
    ops.push(Op::Flush);
    for i in (1..20u8).step_by(4) {
        ops.push(Op::Put { k: i, commit_ts: 120 + u64::from(i), value: vec![7; 5] });
    }
    let reads = [5, 15, 40, 60, 90, 110, 150, 500]
        .into_iter()
        .flat_map(|ts| {
            [
                Read { ts, ranges: vec![(0, 26)], full: true },
                Read { ts, ranges: vec![(1, 4), (6, 13), (15, 16)], full: false },
            ]
        })
        .collect();
    run(ops, reads);
    // Values read from the tables' blocks went to the in-place sink without a copy.
    assert!(IN_PLACE.with(|n| n.get()) > 0, "no value was handed in place");
}
