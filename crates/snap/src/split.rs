//! Split keys: where to cut a request's ranges so each part reads about the same bytes,
//! from what the snapshot knows without reading any block — the first keys and stored sizes
//! of the SST blocks in the ranges (block indexes of L0 tables and levels) and the memtable
//! rows. The worker runs one heavy request's parts on several cores (`rcop-exec`'s
//! `Engine::plan_split`).

use rcop_proto::coprocessor;
use rcop_sst::{BlockSource, Section, Table};

use crate::error::Result;
use crate::memtable::MemTable;
use crate::range::InnerRange;
use crate::snapshot::{MemSource, Snapshot};

/// Memtable bytes gathered into one candidate split key: memtable rows weigh in at about
/// the granularity of an SST block.
const MEM_GROUP_BYTES: u64 = 64 << 10;

/// Where to cut ranges into parts, and the bytes the cut is about.
///
/// Non-exhaustive: returned by [`Snapshot::split_keys`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RangeSplit {
    /// At most `parts - 1` outer keys, ascending; each starts a part.
    pub keys: Vec<Vec<u8>>,
    /// Bytes the ranges cover: the stored bytes of the SST data blocks (every L0 table and
    /// level) they overlap plus the key and value bytes of the memtable versions in them.
    /// A block a range only grazes counts whole.
    pub bytes: u64,
}

impl<S: BlockSource> Snapshot<S> {
    /// Split keys that cut `ranges` (outer keys, sorted as a request's) into at most `parts`
    /// parts of about equal bytes, and the bytes the ranges cover (see [`RangeSplit`]).
    ///
    /// The candidates are the first keys of the data blocks the ranges overlap, weighted by
    /// their stored size, and every 64 KiB of memtable versions; overlapping sources add
    /// up (a merge reads all of them). Reads only indexes and memtables: no I/O.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRange`](crate::Error::InvalidRange) or
    /// [`Error::RangeOutOfShard`](crate::Error::RangeOutOfShard) for a range the snapshot
    /// cannot serve (the scan reports it as the request's error).
    pub fn split_keys(&self, ranges: &[coprocessor::KeyRange], parts: usize) -> Result<RangeSplit> {
        let mut candidates: Vec<(Vec<u8>, u64)> = Vec::new();
        for r in ranges {
            let inner = self.inner_range(&r.start, &r.end)?;
            if inner.is_empty() {
                continue;
            }
            for t in self.l0s.iter().chain(self.levels.iter().flat_map(|l| l.tables.iter())) {
                table_candidates(t, &inner, &mut candidates);
            }
            for m in &self.mems {
                mem_candidates(m, &inner, &mut candidates);
            }
        }
        let bytes = candidates.iter().map(|c| c.1).fold(0u64, u64::saturating_add);
        let keys = pick(candidates, parts)
            .into_iter()
            .map(|inner| {
                let mut outer = Vec::new();
                self.range.outer_key_into(&inner, &mut outer);
                outer
            })
            .collect();
        Ok(RangeSplit { keys, bytes })
    }
}

/// The data blocks of `t` in `r`: (first key, clamped to the range start; stored bytes).
fn table_candidates<S: BlockSource>(t: &Table<S>, r: &InnerRange, out: &mut Vec<(Vec<u8>, u64)>) {
    let meta = t.meta();
    let props = meta.properties();
    if !r.overlaps(&props.smallest, &props.biggest) {
        return;
    }
    for b in meta.blocks_for_range(Section::Data, &r.start, &r.end) {
        let mut key = Vec::new();
        meta.block_first_key(Section::Data, b, &mut key);
        if key < r.start {
            key.clone_from(&r.start);
        }
        out.push((key, u64::from(meta.block_handle(Section::Data, b).len)));
    }
}

/// A memtable's versions in `r`, one candidate per [`MEM_GROUP_BYTES`].
fn mem_candidates(m: &MemSource, r: &InnerRange, out: &mut Vec<(Vec<u8>, u64)>) {
    let mut group: Option<(Vec<u8>, u64)> = None;
    let mut add = |key: &[u8], bytes: u64, out: &mut Vec<(Vec<u8>, u64)>| {
        let g = group.get_or_insert_with(|| (key.to_vec(), 0));
        g.1 += bytes;
        if g.1 >= MEM_GROUP_BYTES
            && let Some(g) = group.take()
        {
            out.push(g);
        }
    };
    match m {
        MemSource::Rows(t) => {
            for row in t.rows.get(t.seek(&r.start)..).unwrap_or_default() {
                if !r.before_end(&row.key) {
                    break;
                }
                add(&row.key, (row.key.len() + row.value.len()) as u64, out);
            }
        }
        MemSource::Skip(t) => skip_candidates(t, r, &mut |k, b| add(k, b, out)),
    }
    if let Some(g) = group {
        out.push(g);
    }
}

fn skip_candidates(t: &MemTable, r: &InnerRange, f: &mut dyn FnMut(&[u8], u64)) {
    let mut e = t.seek(&r.start);
    while let Some(entry) = e {
        let key = &entry.key().key;
        if !r.before_end(key) {
            break;
        }
        f(key, (key.len() + entry.value().value.len()) as u64);
        e = entry.next();
    }
}

/// At most `parts - 1` keys that cut the candidates' weight into parts as equal as the
/// candidates allow; each key starts a part, none repeats. (`rcop-exec`'s
/// `pick_split_keys`, which this crate cannot depend on.)
fn pick(mut candidates: Vec<(Vec<u8>, u64)>, parts: usize) -> Vec<Vec<u8>> {
    if parts < 2 || candidates.len() < 2 {
        return Vec::new();
    }
    candidates.sort_by(|a, b| a.0.cmp(&b.0));
    let total = u128::from(candidates.iter().map(|c| c.1).fold(0u64, u64::saturating_add));
    let parts = parts as u128;
    let target = |i: u128| total * i / parts;
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let (mut before, mut next) = (0u128, 1u128);
    for (key, w) in candidates {
        if next < parts && before >= target(next) && before > 0 && keys.last() < Some(&key) {
            keys.push(key);
            while next < parts && before >= target(next) {
                next += 1;
            }
        }
        before += u128::from(w);
    }
    keys
}

#[cfg(test)]
mod tests {
    use rcop_sst::{BuilderOptions, FileId, InMemory, NewValue, TableBuilder};

    use super::*;
    use crate::range::ShardRange;
    use crate::snapshot::Level;
    use crate::{MemTable, Snapshot};

    fn key(i: u32) -> Vec<u8> {
        format!("k{i:05}").into_bytes()
    }

    fn outer(i: u32) -> Vec<u8> {
        let mut k = b"x\0\0\x01".to_vec();
        k.extend(key(i));
        k
    }

    /// A level table of keys `from..to`, 100-byte values, 512-byte blocks.
    fn table(id: u64, from: u32, to: u32) -> Table<InMemory> {
        let mut b =
            TableBuilder::new(FileId(id), BuilderOptions::for_level(1).with_block_size(512));
        for i in from..to {
            let v = NewValue { meta: 0, version: 1, user_meta: &[], value: &[7; 100] };
            b.add(&key(i), &v).unwrap();
        }
        Table::open_in_memory(FileId(id), b.finish().unwrap()).unwrap()
    }

    fn snapshot(mem: &[(u32, usize)]) -> Snapshot<InMemory> {
        let range = ShardRange::new(&b"x\0\0\x01"[..], &b"x\0\0\x02"[..], 4).unwrap();
        let m = MemTable::new();
        for &(i, len) in mem {
            m.put(&key(i), 1, 2, &vec![1; len]);
        }
        let levels =
            vec![Level { level: 1, tables: vec![table(1, 0, 1000), table(2, 1000, 2000)] }];
        Snapshot::new(range, vec![MemSource::Skip(std::sync::Arc::new(m))], vec![], levels)
    }

    fn whole() -> coprocessor::KeyRange {
        coprocessor::KeyRange {
            start: b"x\0\0\x01".to_vec().into(),
            end: b"x\0\0\x02".to_vec().into(),
        }
    }

    #[test]
    fn keys_cut_the_blocks_into_equal_parts() {
        let snap = snapshot(&[]);
        let split = snap.split_keys(&[whole()], 4).unwrap();
        assert_eq!(split.keys.len(), 3);
        assert!(split.keys.windows(2).all(|w| w[0] < w[1]));
        // Every key is an outer key of the shard, near the quarters of the 2000 keys.
        for (k, want) in split.keys.iter().zip([500u32, 1000, 1500]) {
            let i: u32 = std::str::from_utf8(&k[5..]).unwrap().parse().unwrap();
            assert!(i.abs_diff(want) < 30, "{i} vs {want}");
        }
        let blocks: u64 =
            snap.levels()[0].tables.iter().map(|t| t.meta().range_blocks_size(&[], &[])).sum();
        assert_eq!(split.bytes, blocks);
        // One part, or nothing in the ranges: no keys.
        assert!(snap.split_keys(&[whole()], 1).unwrap().keys.is_empty());
        let gap = coprocessor::KeyRange { start: outer(5000).into(), end: outer(6000).into() };
        assert_eq!(snap.split_keys(&[gap], 4).unwrap(), RangeSplit::default());
    }

    #[test]
    fn memtable_rows_weigh_in_and_ranges_bound_the_keys() {
        // 4 MiB of memtable versions on the keys 0..100: the first part ends within them.
        let mem: Vec<(u32, usize)> = (0..100).map(|i| (i, 40 << 10)).collect();
        let snap = snapshot(&mem);
        let split = snap.split_keys(&[whole()], 2).unwrap();
        let i: u32 = std::str::from_utf8(&split.keys[0][5..]).unwrap().parse().unwrap();
        assert!(i < 100, "split at {i}");
        // A sub-range: keys inside it only.
        let r = coprocessor::KeyRange { start: outer(1200).into(), end: outer(1800).into() };
        let split = snap.split_keys(&[r], 3).unwrap();
        assert_eq!(split.keys.len(), 2);
        assert!(split.keys.iter().all(|k| k > &outer(1200) && k < &outer(1800)));
        // A range outside the shard is the scan's error.
        let bad =
            coprocessor::KeyRange { start: b"x\0\0\x00".to_vec().into(), end: outer(1).into() };
        assert!(snap.split_keys(&[bad], 2).is_err());
    }
}
