//! Lock checks before export: the host's lock table and the lock CF, TiKV's rules, and
//! committed locks read through into the shipped rows.
#![expect(clippy::unwrap_used, reason = "test helpers unwrap known-good setup")]

use std::collections::BTreeMap;

use bytes::Bytes;
use rcop_proto::coprocessor::KeyRange;
use rcop_proto::kvrpcpb::{IsolationLevel, Op};
use rcop_snap::{Error, Lock, LockCheck, LockType, NoLocks, Shard, ShardConfig, TsSet};
use rcop_wire::{MemData, MemDataFormat, MemDataWriter};

const PREFIX: &[u8] = b"x\0\0\x02";
const END: &[u8] = b"x\0\0\x03";

fn key(s: &str) -> Vec<u8> {
    [PREFIX, s.as_bytes()].concat()
}

fn range(a: &str, b: &str) -> Vec<KeyRange> {
    vec![KeyRange { start: key(a).into(), end: key(b).into() }]
}

/// A shipped row: key, start ts, commit ts, value.
type Row = (Vec<u8>, u64, u64, Vec<u8>);

fn shard() -> Shard {
    let s = Shard::new(ShardConfig::new(5, PREFIX, END, 4).unwrap()).unwrap();
    s.put(&key("a"), 1, 2, b"a2").unwrap();
    s.put(&key("b"), 1, 2, b"b2").unwrap();
    s.put(&key("c"), 1, 2, b"c2").unwrap();
    s
}

fn export(
    s: &Shard,
    ranges: &[KeyRange],
    check: &LockCheck,
    host: &dyn rcop_snap::LockTable,
) -> Result<Vec<Row>, Error> {
    let mut buf = Vec::new();
    let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
    s.export(ranges, check, host, &mut w)?;
    w.finish().unwrap();
    let mem = MemData::decode(Bytes::from(buf)).unwrap();
    Ok(mem
        .rows()
        .iter()
        .map(|r| (r.key.to_vec(), r.start_ts, r.commit_ts, r.value.to_vec()))
        .collect())
}

#[test]
fn lock_cf_lock_blocks_with_lock_info() {
    let s = shard();
    let mut lock = Lock::new(LockType::Put, key("a"), 10, 3000);
    lock.txn_size = 2;
    lock.min_commit_ts = 11;
    s.put_lock(&key("b"), &lock).unwrap();
    let Err(Error::Locked(info)) = export(&s, &range("a", "z"), &LockCheck::si(20), &NoLocks)
    else {
        panic!("expected a lock error")
    };
    assert_eq!(info.key.as_ref(), key("b").as_slice(), "LockInfo.key is the outer (raw) key");
    assert_eq!(info.primary_lock.as_ref(), key("a").as_slice());
    assert_eq!(
        (info.lock_version, info.lock_ttl, info.txn_size, info.min_commit_ts),
        (10, 3000, 2, 11)
    );
    assert_eq!(info.lock_type, Op::Put as i32);
    // Outside the lock's reach: an older read, a range without it, a resolved lock, RC.
    assert_eq!(export(&s, &range("a", "z"), &LockCheck::si(9), &NoLocks).unwrap().len(), 3);
    assert_eq!(export(&s, &range("a", "b"), &LockCheck::si(20), &NoLocks).unwrap().len(), 1);
    let resolved = LockCheck { bypass_locks: TsSet::new(vec![10]), ..LockCheck::si(20) };
    assert_eq!(export(&s, &range("a", "z"), &resolved, &NoLocks).unwrap().len(), 3);
    let rc = LockCheck { isolation: IsolationLevel::Rc, ..LockCheck::si(20) };
    assert_eq!(export(&s, &range("a", "z"), &rc, &NoLocks).unwrap().len(), 3);
    // After commit (lock removed) the read goes through.
    assert!(s.remove_lock(&key("b")).unwrap());
    assert_eq!(export(&s, &range("a", "z"), &LockCheck::si(20), &NoLocks).unwrap().len(), 3);
}

#[test]
fn host_lock_table_is_checked() {
    let s = shard();
    let mut host = BTreeMap::new();
    host.insert(key("c"), Lock::new(LockType::Delete, key("c"), 15, 100));
    host.insert(key("a"), Lock::new(LockType::Pessimistic, key("a"), 5, 100));
    let e = export(&s, &range("a", "z"), &LockCheck::si(20), &host).unwrap_err();
    assert!(
        matches!(&e, Error::Locked(info) if info.lock_version == 15 && info.key.as_ref() == key("c").as_slice())
    );
    // The pessimistic lock alone does not block.
    assert_eq!(export(&s, &range("a", "c"), &LockCheck::si(20), &host).unwrap().len(), 2);
    let rcts = LockCheck { isolation: IsolationLevel::RcCheckTs, ..LockCheck::si(20) };
    assert!(matches!(
        export(&s, &range("a", "z"), &rcts, &host),
        Err(Error::WriteConflict { lock_ts: 15, .. })
    ));
}

#[test]
fn committed_locks_are_read_through() {
    let s = shard();
    let mut put = Lock::new(LockType::Put, key("z"), 10, 3000);
    put.short_value = Some(Bytes::from_static(b"b-from-lock"));
    s.put_lock(&key("b"), &put).unwrap();
    s.put_lock(&key("d"), &Lock::new(LockType::Delete, key("b"), 10, 3000)).unwrap();
    let check = LockCheck { committed_locks: TsSet::new(vec![10]), ..LockCheck::si(20) };
    let rows = export(&s, &range("a", "z"), &check, &NoLocks).unwrap();
    assert_eq!(
        rows,
        vec![
            (key("a"), 1, 2, b"a2".to_vec()),
            (key("b"), 10, 10, b"b-from-lock".to_vec()),
            (key("c"), 1, 2, b"c2".to_vec()),
            (key("d"), 10, 10, Vec::new()),
        ]
    );
    // Every version at a max-ts read, with the committed lock on top.
    s.put(&key("a"), 3, 4, b"a4").unwrap();
    let max = LockCheck { committed_locks: TsSet::new(vec![10]), ..LockCheck::si(u64::MAX) };
    let rows = export(&s, &range("a", "c"), &max, &NoLocks).unwrap();
    assert_eq!(
        rows,
        vec![
            (key("a"), 3, 4, b"a4".to_vec()),
            (key("a"), 1, 2, b"a2".to_vec()),
            (key("b"), 10, 10, b"b-from-lock".to_vec()),
            (key("b"), 1, 2, b"b2".to_vec()),
        ]
    );
}
