//! A conformance kit for a host's [`SnapshotSource`]: load [`Fixture::standard`] into a
//! fresh shard of your storage engine (every write in the memtable, the locks in your lock
//! table or lock CF), then [`check_source`] runs a battery of exports over it and compares
//! each with what the worker validates and with a model of the export contract
//! (see `rcop_wire`'s export module docs): visibility at `start_ts`, deletes shipped as
//! empty values, every version at `u64::MAX`, order, ranges, TiKV's lock rules (blocking
//! locks, `resolved_locks`, `committed_locks` read through, RC), region errors outside the
//! shard and a well-formed change set. Run it in the host's CI.
//!
//! ```
//! use rcop_offload::conformance::{Fixture, check_source};
//! use rcop_offload::ShardSource;
//! use rcop_snap::{Shard, ShardConfig};
//!
//! // Our own shard passes; a host loads the same fixture into its engine instead.
//! let f = Fixture::standard();
//! let shard = Shard::new(ShardConfig::new(1, f.shard_start.clone(), f.shard_end.clone(), 4)?)?;
//! for w in &f.writes {
//!     match &w.value {
//!         Some(v) => shard.put(&w.key, w.start_ts, w.commit_ts, v)?,
//!         None => shard.delete(&w.key, w.start_ts, w.commit_ts)?,
//!     }
//! }
//! for (key, lock) in &f.locks {
//!     shard.put_lock(key, lock)?;
//! }
//! let report = check_source(&f, &ShardSource::new(&shard)).map_err(|v| v.to_string())?;
//! assert!(report.cases > 20);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;

use bytes::Bytes;
use rcop_proto::coprocessor::{KeyRange, Request};
use rcop_proto::kvrpcpb::Context;
use rcop_snap::{Lock, LockCheck, LockType};
use rcop_wire::{MemData, MemDataFormat, MemDataWriter};

use crate::error::SourceError;
use crate::source::SnapshotSource;

/// One committed write of the fixture: `value` `None` is an MVCC delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureWrite {
    /// Outer key.
    pub key: Bytes,
    /// The transaction's start ts.
    pub start_ts: u64,
    /// Its commit ts.
    pub commit_ts: u64,
    /// The value; `None` for a delete.
    pub value: Option<Bytes>,
}

/// The data a host loads before [`check_source`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Fixture {
    /// Outer start of the shard (keyspace 1 under API v2).
    pub shard_start: Bytes,
    /// Outer end of the shard.
    pub shard_end: Bytes,
    /// Committed writes, to keep in the memtable.
    pub writes: Vec<FixtureWrite>,
    /// Locks (outer key, lock), to keep in the host's lock table or lock CF.
    pub locks: Vec<(Bytes, Lock)>,
}

const PREFIX: &[u8] = b"x\0\0\x01";

fn key(i: u32) -> Bytes {
    let mut k = PREFIX.to_vec();
    k.extend_from_slice(format!("t{i:03}").as_bytes());
    Bytes::from(k)
}

impl Fixture {
    /// 40 keys of keyspace 1 with one to three versions each (commit ts 10..=60), some
    /// deleted, plus locks of every kind at ts 25, 35, 45 and 55 on their own keys.
    pub fn standard() -> Fixture {
        let mut writes = Vec::new();
        for i in 0..40u32 {
            let versions = 1 + i % 3;
            for v in 0..versions {
                let commit_ts = 10 + u64::from(i % 5) + 20 * u64::from(v);
                let deleted = i % 7 == 3 && v + 1 == versions;
                writes.push(FixtureWrite {
                    key: key(i),
                    start_ts: commit_ts - 1,
                    commit_ts,
                    value: (!deleted).then(|| Bytes::from(format!("v{i}.{v}"))),
                });
            }
        }
        let lock = |t: LockType, ts: u64, value: Option<&'static str>| {
            let mut l = Lock::new(t, key(0), ts, 3000);
            l.short_value = value.map(|v: &'static str| Bytes::from_static(v.as_bytes()));
            l
        };
        let locks = vec![
            (key(41), lock(LockType::Put, 25, Some("p25"))),
            (key(43), lock(LockType::Delete, 35, None)),
            (key(45), lock(LockType::Lock, 45, None)),
            (key(47), lock(LockType::Pessimistic, 55, None)),
        ];
        Fixture {
            shard_start: Bytes::from_static(PREFIX),
            shard_end: Bytes::from_static(b"x\0\0\x02"),
            writes,
            locks,
        }
    }
}

/// What [`check_source`] checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// Requests exported and compared.
    pub cases: usize,
    /// Rows compared in all.
    pub rows: usize,
}

/// Every difference found, each naming the case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violations(pub Vec<String>);

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} conformance violation(s):", self.0.len())?;
        for v in &self.0 {
            writeln!(f, "- {v}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Violations {}

/// A row as shipped: (key, commit ts, value).
type ModelRow = (Bytes, u64, Bytes);

struct Case {
    name: String,
    request: Request,
}

fn range(a: Bytes, b: Bytes) -> KeyRange {
    KeyRange { start: a, end: b }
}

fn cases(f: &Fixture) -> Vec<Case> {
    let whole = vec![range(f.shard_start.clone(), f.shard_end.clone())];
    let all = vec![range(key(0), key(40))];
    let some = vec![range(key(2), key(9)), range(key(20), key(21)), range(key(30), key(44))];
    let locked = vec![range(key(40), key(48))];
    let mut out = Vec::new();
    let mut add = |name: String, ranges: Vec<KeyRange>, ts: u64, ctx: Context| {
        let request = Request {
            context: Some(Context { region_id: 1, keyspace_id: Some(1), ..ctx }),
            tp: rcop_proto::REQ_TYPE_DAG,
            start_ts: ts,
            ranges,
            ..Request::default()
        };
        out.push(Case { name, request });
    };
    for ts in [5, 12, 30, 40, 50, 70, u64::MAX] {
        for (rname, ranges) in [("every data key", &all), ("three ranges", &some)] {
            add(format!("{rname} at {ts}"), ranges.clone(), ts, Context::default());
        }
    }
    for ts in [20, 30, 60] {
        add(format!("whole shard at {ts}"), whole.clone(), ts, Context::default());
    }
    for ts in [20, 30, 40, 50, 60] {
        add(format!("locked keys at {ts}"), locked.clone(), ts, Context::default());
        add(
            format!("locked keys at {ts}, read committed"),
            locked.clone(),
            ts,
            Context { isolation_level: 1, ..Context::default() },
        );
        add(
            format!("locked keys at {ts}, locks 25 and 35 resolved"),
            locked.clone(),
            ts,
            Context { resolved_locks: vec![25, 35], ..Context::default() },
        );
        add(
            format!("locked keys at {ts}, locks 25 and 35 committed"),
            locked.clone(),
            ts,
            Context { committed_locks: vec![25, 35], ..Context::default() },
        );
    }
    out
}

/// What the model says an export of `request` gives.
enum Expect {
    Locked(Vec<(Bytes, u64)>),
    Rows(Vec<ModelRow>),
}

fn in_ranges(k: &[u8], ranges: &[KeyRange]) -> bool {
    ranges.iter().any(|r| k >= r.start.as_ref() && (r.end.is_empty() || k < r.end.as_ref()))
}

fn model(f: &Fixture, request: &Request) -> Result<Expect, String> {
    let ctx = request.context.clone().unwrap_or_default();
    let check = LockCheck::from_request(request.start_ts, &ctx);
    let mut blocking = Vec::new();
    let mut committed = BTreeMap::new();
    for (k, lock) in &f.locks {
        if !in_ranges(k, &request.ranges) {
            continue;
        }
        match check.check(k, lock) {
            Ok(None) => {}
            Ok(Some(read)) => {
                committed.insert(read.key.clone(), (read.ts, read.value.clone()));
            }
            Err(rcop_snap::Error::Locked(_)) => blocking.push((k.clone(), lock.ts)),
            Err(e) => return Err(format!("the model's lock check failed: {e}")),
        }
    }
    if !blocking.is_empty() {
        return Ok(Expect::Locked(blocking));
    }
    // Newest first per key.
    let mut versions: BTreeMap<Bytes, Vec<(u64, Bytes)>> = BTreeMap::new();
    for w in &f.writes {
        if in_ranges(&w.key, &request.ranges) {
            versions
                .entry(w.key.clone())
                .or_default()
                .push((w.commit_ts, w.value.clone().unwrap_or_default()));
        }
    }
    for (k, (ts, v)) in &committed {
        versions.entry(k.clone()).or_default().push((*ts, v.clone()));
    }
    let mut rows = Vec::new();
    for (k, mut vs) in versions {
        vs.sort_by_key(|v| std::cmp::Reverse(v.0));
        let read_through = committed.get(&k).map(|(ts, _)| *ts);
        if request.start_ts == u64::MAX {
            rows.extend(vs.into_iter().map(|(ts, v)| (k.clone(), ts, v)));
        } else if let Some((ts, v)) =
            vs.into_iter().find(|(ts, _)| *ts <= request.start_ts || Some(*ts) == read_through)
        {
            rows.push((k, ts, v));
        }
    }
    Ok(Expect::Rows(rows))
}

/// Exports every case of [`Fixture::standard`]-shaped `fixture` through `source` and
/// compares each with the model and with the worker's validation of the parts.
///
/// # Errors
///
/// Every difference found.
pub fn check_source<S: SnapshotSource + ?Sized>(
    fixture: &Fixture,
    source: &S,
) -> Result<Report, Violations> {
    let mut bad = Vec::new();
    let mut report = Report { cases: 0, rows: 0 };
    for case in cases(fixture) {
        report.cases += 1;
        let name = &case.name;
        let expect = match model(fixture, &case.request) {
            Ok(e) => e,
            Err(e) => {
                bad.push(format!("{name}: {e}"));
                continue;
            }
        };
        let mut buf = Vec::new();
        let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
        let exported = source.export(&case.request, &mut w);
        let finished = w.finish();
        match (exported, expect) {
            (Err(SourceError::Locked(info)), Expect::Locked(blocking)) => {
                let found = blocking
                    .iter()
                    .any(|(k, ts)| k.as_ref() == info.key.as_ref() && *ts == info.lock_version);
                if !found {
                    bad.push(format!(
                        "{name}: reported lock ts {} on {:?}, not one of the blocking locks {blocking:?}",
                        info.lock_version, info.key
                    ));
                }
            }
            (Ok(_), Expect::Locked(blocking)) => {
                bad.push(format!("{name}: exported although {blocking:?} block the read"));
            }
            (Err(e), Expect::Rows(_)) => bad.push(format!("{name}: export failed: {e}")),
            (Err(e), Expect::Locked(_)) => {
                bad.push(format!("{name}: expected a lock, got another error: {e}"));
            }
            (Ok(change_set), Expect::Rows(want)) => {
                if let Err(e) = finished {
                    bad.push(format!("{name}: mem-data does not finish: {e}"));
                    continue;
                }
                // What the worker does with the parts.
                let got = match MemData::decode(Bytes::from(buf)) {
                    Ok(m) => m
                        .rows()
                        .iter()
                        .map(|r| {
                            (
                                Bytes::copy_from_slice(r.key),
                                r.commit_ts,
                                Bytes::copy_from_slice(r.value),
                            )
                        })
                        .collect::<Vec<_>>(),
                    Err(e) => {
                        bad.push(format!("{name}: the worker cannot decode the mem-data: {e}"));
                        continue;
                    }
                };
                report.rows += want.len();
                if got != want {
                    bad.push(format!(
                        "{name}: rows differ from the model\n   got {got:?}\n  want {want:?}"
                    ));
                }
                check_change_set(name, fixture, &case.request, &change_set, &mut bad);
            }
        }
    }
    // Outside the shard: a region error from both the estimate and the export.
    let outside = Request {
        start_ts: 100,
        ranges: vec![range(Bytes::from_static(b"x\0\0\x02a"), Bytes::from_static(b"x\0\0\x02b"))],
        ..Request::default()
    };
    report.cases += 1;
    if !matches!(source.estimated_range_blocks_size(&outside.ranges), Err(SourceError::Region(_))) {
        bad.push("estimate outside the shard: expected a region error".into());
    }
    let mut buf = Vec::new();
    let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
    if !matches!(source.export(&outside, &mut w), Err(SourceError::Region(_))) {
        bad.push("export outside the shard: expected a region error".into());
    }
    if let Err(e) = source.estimated_range_blocks_size(&[range(
        fixture.shard_start.clone(),
        fixture.shard_end.clone(),
    )]) {
        bad.push(format!("estimate of the whole shard failed: {e}"));
    }
    if bad.is_empty() { Ok(report) } else { Err(Violations(bad)) }
}

fn check_change_set(
    name: &str,
    f: &Fixture,
    request: &Request,
    cs: &rcop_proto::enginepb::ChangeSet,
    bad: &mut Vec<String>,
) {
    let Some(snap) = &cs.snapshot else {
        bad.push(format!("{name}: the change set has no snapshot"));
        return;
    };
    if snap.outer_start != f.shard_start || snap.outer_end != f.shard_end {
        bad.push(format!("{name}: the snapshot's range is not the shard's"));
    }
    for r in &request.ranges {
        let inside = r.start.as_ref() >= snap.outer_start.as_ref()
            && (snap.outer_end.is_empty()
                || (!r.end.is_empty() && r.end.as_ref() <= snap.outer_end.as_ref()));
        if !inside {
            bad.push(format!("{name}: the snapshot does not cover range {r:?}"));
        }
    }
    if snap.inner_key_off as usize > f.shard_start.len() {
        bad.push(format!(
            "{name}: inner_key_off {} is longer than the shard's keys",
            snap.inner_key_off
        ));
    }
    for l0 in &snap.l0_creates {
        if l0.smallest > l0.biggest {
            bad.push(format!("{name}: L0 file {} has smallest > biggest", l0.id));
        }
    }
    for t in &snap.table_creates {
        if t.smallest > t.biggest || t.cf != 0 || !(1..=rcop_wire::CF_LEVELS[0]).contains(&t.level)
        {
            bad.push(format!(
                "{name}: table {} has bad bounds, level {} or CF {} (a DAG snapshot ships write-CF L1-L3 tables)",
                t.id, t.level, t.cf
            ));
        }
    }
}
