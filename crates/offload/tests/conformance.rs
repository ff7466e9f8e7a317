//! The conformance kit passes our own shard (locks in its lock CF or in a host lock table)
//! and catches sources that break the export contract.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "test setup")]

use std::collections::BTreeMap;

use bytes::Bytes;
use rcop_offload::conformance::{Fixture, check_source};
use rcop_offload::{ShardSource, SnapshotSource, SourceError};
use rcop_proto::coprocessor::{KeyRange, Request};
use rcop_proto::enginepb::ChangeSet;
use rcop_snap::{Shard, ShardConfig};
use rcop_wire::{MemData, MemDataFormat, MemDataWriter};

fn shard(f: &Fixture, locks_in_cf: bool) -> Shard {
    let shard =
        Shard::new(ShardConfig::new(1, f.shard_start.clone(), f.shard_end.clone(), 4).unwrap())
            .unwrap();
    for w in &f.writes {
        match &w.value {
            Some(v) => shard.put(&w.key, w.start_ts, w.commit_ts, v).unwrap(),
            None => shard.delete(&w.key, w.start_ts, w.commit_ts).unwrap(),
        }
    }
    if locks_in_cf {
        for (k, l) in &f.locks {
            shard.put_lock(k, l).unwrap();
        }
    }
    shard
}

#[test]
fn our_shard_conforms_with_locks_in_the_lock_cf_or_the_host_table() {
    let f = Fixture::standard();
    let s = shard(&f, true);
    let report = check_source(&f, &ShardSource::new(&s)).unwrap_or_else(|v| panic!("{v}"));
    assert!(report.cases > 30 && report.rows > 100, "{report:?}");
    let s = shard(&f, false);
    let table: BTreeMap<Vec<u8>, rcop_snap::Lock> =
        f.locks.iter().map(|(k, l)| (k.to_vec(), l.clone())).collect();
    check_source(&f, &ShardSource::with_locks(&s, &table)).unwrap_or_else(|v| panic!("{v}"));
}

/// A source that exports through our shard (honouring locks or not), then lets `mutate`
/// break the rows or the change set.
struct Broken<'a, F> {
    inner: ShardSource<'a>,
    honour_locks: bool,
    mutate: F,
}

type Rows = Vec<(Bytes, u64, u64, Bytes)>;

impl<F> SnapshotSource for Broken<'_, F>
where
    F: Fn(&Request, &mut Rows, &mut ChangeSet),
{
    fn estimated_range_blocks_size(&self, ranges: &[KeyRange]) -> Result<u64, SourceError> {
        self.inner.estimated_range_blocks_size(ranges)
    }

    fn export(
        &self,
        request: &Request,
        out: &mut MemDataWriter<'_>,
    ) -> Result<ChangeSet, SourceError> {
        let mut request = request.clone();
        if !self.honour_locks {
            // Read committed: no lock is looked at.
            request.context.get_or_insert_with(Default::default).isolation_level = 1;
        }
        let mut buf = Vec::new();
        let mut w = MemDataWriter::new(&mut buf, MemDataFormat::V2);
        let mut cs = self.inner.export(&request, &mut w)?;
        w.finish().unwrap();
        let mem = MemData::decode(Bytes::from(buf)).unwrap();
        let mut rows: Rows = mem
            .rows()
            .iter()
            .map(|r| {
                let copy = Bytes::copy_from_slice;
                (copy(r.key), r.start_ts, r.commit_ts, copy(r.value))
            })
            .collect();
        (self.mutate)(&request, &mut rows, &mut cs);
        for (k, s, c, v) in &rows {
            out.push(k, *s, *c, v);
        }
        Ok(cs)
    }
}

fn violations<F>(honour_locks: bool, mutate: F) -> String
where
    F: Fn(&Request, &mut Rows, &mut ChangeSet),
{
    let f = Fixture::standard();
    let s = shard(&f, true);
    let broken = Broken { inner: ShardSource::new(&s), honour_locks, mutate };
    check_source(&f, &broken).expect_err("the kit must catch this").to_string()
}

#[test]
fn the_kit_catches_broken_exports() {
    // Unchanged but honouring locks: conforms (the wrapper itself is sound).
    let f = Fixture::standard();
    let s = shard(&f, true);
    let sound = Broken {
        inner: ShardSource::new(&s),
        honour_locks: true,
        mutate: |_: &Request, _: &mut Rows, _: &mut ChangeSet| {},
    };
    check_source(&f, &sound).unwrap_or_else(|v| panic!("{v}"));
    // Locks ignored.
    let v = violations(false, |_, _, _| {});
    assert!(v.contains("exported although"), "{v}");
    // Deletes dropped instead of shipped as empty values.
    let v = violations(true, |_, rows, _| rows.retain(|r| !r.3.is_empty()));
    assert!(v.contains("rows differ from the model"), "{v}");
    // A wrong snapshot range.
    let v = violations(true, |_, _, cs| {
        if let Some(s) = cs.snapshot.as_mut() {
            s.outer_end = Bytes::from_static(b"x\0\0\x01t010");
        }
    });
    assert!(v.contains("the snapshot's range is not the shard's"), "{v}");
    assert!(v.contains("does not cover range"), "{v}");
    // An older version shipped beside the visible one.
    let v = violations(true, |req, rows, _| {
        if req.start_ts != u64::MAX && !rows.is_empty() {
            let k = rows[0].0.clone();
            rows.insert(1, (k, 1, 2, Bytes::from_static(b"stale")));
        }
    });
    assert!(v.contains("rows differ") || v.contains("cannot decode"), "{v}");
    // Rows outside the request's ranges.
    let v = violations(true, |req, rows, _| {
        if req.ranges.len() == 3 {
            rows.push((Bytes::from_static(b"x\0\0\x01t999"), 1, 2, Bytes::from_static(b"far")));
        }
    });
    assert!(v.contains("rows differ"), "{v}");
}
