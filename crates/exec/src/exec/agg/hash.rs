//! Hash aggregation (TiKV's `BatchFastHashAggregationExecutor` and
//! `BatchSlowHashAggregationExecutor`): groups by the encoded key, in first-seen order.
//!
//! Under paging (`EvalConfig::paging_size`), the input ends early once a batch brings the
//! groups to `paging_size`: the groups so far are the page's answer (partial results TiDB
//! merges), and the page resumes after the rows scanned, as TiKV's `PagingDrain`.

use std::collections::HashMap;
use std::time::Instant;

use rcop_proto::tipb;

use crate::batch::{Batch, LazyCol};
use crate::column::{Scalar, VecCol};
use crate::ctx::{EvalConfig, EvalContext};
use crate::error::{Error, Result};
use crate::exec::agg::key::{encode_key, pack_short_key, short_key, short_key_of_bytes};
use crate::exec::agg::{Aggregates, batch_of, build_group_by};
use crate::exec::{BATCH_MAX_SIZE, BatchResult, ExecEnv, ExecStats, Executor, ScanCounters};
use crate::expr::build::NodeKind;
use crate::expr::{Node, eval};
use crate::limits::scalars_bytes;
use crate::types::{Collation, EvalType, FieldType};

/// The bytes a packed key's map entry takes: the `(u128, u32)` slot padded to 32 bytes,
/// its control byte, and the table's spare room (at most half empty after a resize).
const SHORT_ENTRY_BYTES: usize = 2 * 33;

/// The bytes a long key's map entry takes besides the key's own bytes: the `(Vec<u8>, u32)`
/// slot, its control byte, spare room, and the allocation's header.
const LONG_ENTRY_BYTES: usize = 2 * 33 + 16;

/// A direct-mapped cache of packed keys and their groups, looked up before the map: a
/// query with a few groups (TPC-H Q1 has four) finds each row's group with one multiply, one
/// load and one comparison, a branch that always goes the same way, instead of hashing and
/// probing the map. Two keys that share a slot take turns in it (each miss goes to the map).
#[derive(Debug, Clone)]
struct Recent {
    slots: [(u128, u32); RECENT_SLOTS],
}

/// Slots of [`Recent`]: a power of two.
const RECENT_SLOTS: usize = 16;

/// The group id of an empty [`Recent`] slot (a real group with this id is only ever found in
/// the map).
const NO_GROUP: u32 = u32::MAX;

impl Recent {
    fn new() -> Self {
        Recent { slots: [(0, NO_GROUP); RECENT_SLOTS] }
    }

    #[inline(always)]
    fn slot(k: u128) -> usize {
        let x = (k as u64) ^ ((k >> 64) as u64);
        (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - RECENT_SLOTS.trailing_zeros())) as usize
    }

    #[inline(always)]
    fn get(&self, k: u128) -> Option<u32> {
        let &(key, id) = self.slots.get(Self::slot(k))?;
        (key == k && id != NO_GROUP).then_some(id)
    }

    #[inline(always)]
    fn put(&mut self, k: u128, id: u32) {
        if let Some(s) = self.slots.get_mut(Self::slot(k)) {
            *s = (k, id);
        }
    }
}

/// GROUP BY items whose keys can be read from a scan's rows: every one a column of strings
/// under a collation that compares bytes ([`Collation::byte_key`]).
#[derive(Debug)]
struct RowKeys {
    /// The items' column offsets.
    cols: Vec<usize>,
    /// Their collations.
    colls: Vec<Collation>,
}

impl RowKeys {
    fn of(group_by: &[Node], colls: &[Collation]) -> Option<RowKeys> {
        let byte_keys = colls.iter().all(|c| c.byte_key(b"").is_some());
        if group_by.is_empty() || !byte_keys {
            return None;
        }
        let col = |e: &Node| match e.kind {
            NodeKind::Column(o) if e.et == EvalType::Bytes => Some(o),
            _ => None,
        };
        let cols = group_by.iter().map(col).collect::<Option<Vec<_>>>()?;
        Some(RowKeys { cols, colls: colls.to_vec() })
    }
}

/// The hash aggregation executor (with no GROUP BY it computes one group, as simple
/// aggregation does).
#[derive(Debug)]
pub struct AggregationExecutor {
    child: Box<dyn Executor>,
    aggs: Aggregates,
    group_by: Vec<Node>,
    /// Each GROUP BY item's collation (binary for a non-string).
    colls: Vec<Collation>,
    /// The columns the aggregates and the GROUP BY items read.
    refs: Vec<usize>,
    /// The columns the aggregates read.
    agg_refs: Vec<usize>,
    /// How keys are read straight from the scan's rows, while that is tried (see
    /// [`row_group_ids`](Self::row_group_ids)).
    row_keys: Option<RowKeys>,
    schema: Vec<FieldType>,
    /// Groups by encoded key: keys of at most `SHORT_KEY` bytes packed into a `u128` (no
    /// allocation, one-word hashing and comparison), longer ones as byte vectors.
    short: HashMap<u128, u32, foldhash::fast::RandomState>,
    /// The packed keys met last, in front of `short`.
    recent: Recent,
    map: HashMap<Vec<u8>, u32, foldhash::fast::RandomState>,
    group_values: Vec<Vec<Scalar>>,
    groups: usize,
    /// The estimated bytes of the groups: keys in the maps, key values, state slots.
    group_bytes: usize,
    /// The bytes accounted against the request's memory budget.
    accounted: usize,
    /// The state slots of one group, in bytes (see [`Aggregates::bytes_per_group`]).
    per_group: usize,
    output: Option<(Vec<VecCol>, usize)>,
    paging_size: Option<u64>,
    paging_drained: bool,
    stats: ExecStats,
}

impl AggregationExecutor {
    /// Builds the aggregation of tipb `agg` over `child`.
    pub fn new(
        child: Box<dyn Executor>,
        agg: &tipb::Aggregation,
        cfg: &EvalConfig,
        max_depth: usize,
    ) -> Result<Self> {
        let child_schema = child.schema().to_vec();
        let aggs = Aggregates::build(&agg.agg_func, &child_schema, cfg, max_depth)?;
        let group_by = build_group_by(&agg.group_by, &child_schema, cfg, max_depth)?;
        let mut agg_refs = Vec::new();
        aggs.column_refs(&mut agg_refs);
        agg_refs.sort_unstable();
        agg_refs.dedup();
        let mut refs = agg_refs.clone();
        group_by.iter().for_each(|g| g.column_refs(&mut refs));
        refs.sort_unstable();
        refs.dedup();
        let colls: Vec<Collation> =
            group_by.iter().map(|e| e.ft.collation().unwrap_or(Collation::Binary)).collect();
        let row_keys = RowKeys::of(&group_by, &colls);
        let mut schema = Vec::new();
        aggs.out_fts(&mut schema);
        schema.extend(group_by.iter().map(Node::ft_for_output));
        let mut ex = AggregationExecutor {
            child,
            aggs,
            group_by,
            colls,
            refs,
            agg_refs,
            row_keys,
            schema,
            short: HashMap::with_hasher(foldhash::fast::RandomState::default()),
            recent: Recent::new(),
            map: HashMap::with_hasher(foldhash::fast::RandomState::default()),
            group_values: Vec::new(),
            groups: 0,
            group_bytes: 0,
            accounted: 0,
            per_group: 0,
            output: None,
            paging_size: cfg.paging_size,
            paging_drained: false,
            stats: ExecStats::default(),
        };
        ex.per_group = ex.aggs.bytes_per_group();
        if ex.group_by.is_empty() {
            ex.groups = 1;
            ex.aggs.grow(1);
        }
        Ok(ex)
    }

    fn consume_batch(&mut self, batch: &mut Batch, ctx: &mut EvalContext) -> Result<()> {
        let n = batch.len();
        // String keys still raw are grouped from the scan's rows, and never decoded.
        let from_rows = self.row_group_ids(batch)?;
        // Gather the read columns once rather than once per expression reading them (the
        // raw ones decoded for the logical rows only).
        let refs = if from_rows.is_some() { &self.agg_refs } else { &self.refs };
        batch.ensure_compact(refs, ctx)?;
        let g: Vec<u32> = match from_rows {
            Some(g) => g,
            None if self.group_by.is_empty() => vec![0; n],
            None => self.group_ids(batch, ctx)?,
        };
        self.aggs.update(batch, &g, ctx)?;
        // Accounted once per batch: at most a batch of groups past the budget.
        let now = self.group_bytes + self.aggs.heap_bytes();
        ctx.account(&mut self.accounted, now)
    }

    fn group_ids(&mut self, batch: &Batch, ctx: &mut EvalContext) -> Result<Vec<u32>> {
        let n = batch.len();
        let mut keys = Vec::with_capacity(self.group_by.len());
        for e in &self.group_by {
            keys.push(eval(e, batch, ctx)?);
        }
        let mut ids = Vec::with_capacity(n);
        let mut buf = Vec::new();
        let mut scratch = Vec::new();
        for i in 0..n {
            // Short string and integer keys are packed straight into a word; anything
            // else goes through the byte encoding (packed too when short).
            let short = match short_key(&keys, &self.colls, i) {
                Some(k) => Some(k),
                None => {
                    buf.clear();
                    for (k, e) in keys.iter().zip(&self.group_by) {
                        encode_key(k, i, &e.ft, &mut buf, &mut scratch);
                    }
                    pack_short_key(&buf)
                }
            };
            let values = || keys.iter().map(|k| k.scalar_at(i)).collect();
            ids.push(self.group_of(short, &buf, values)?);
        }
        self.aggs.grow(self.groups);
        Ok(ids)
    }

    /// The group ids of the logical rows read straight from the scan's rows, when the GROUP
    /// BY items are string columns with a byte key ([`RowKeys`]) that the batch holds raw and
    /// each row's key packs into a word ([`short_key_of_bytes`]): the groups
    /// [`group_ids`](Self::group_ids) finds, without decoding the key columns. `None`
    /// otherwise; the groups met by then are kept, and `group_ids` finds them again. Once
    /// the rows decline (a key too long, a column missing from a row), later batches are
    /// not tried: their keys would be read twice.
    fn row_group_ids(&mut self, batch: &Batch) -> Result<Option<Vec<u32>>> {
        let Some(raw) = &batch.raw else { return Ok(None) };
        if !self.row_keys.as_ref().is_some_and(|rk| {
            rk.cols.iter().all(|&o| matches!(batch.cols.get(o), Some(LazyCol::Raw)))
        }) {
            return Ok(None);
        }
        // Out of `self` while the groups are found; put back unless the rows declined.
        let Some(rk) = self.row_keys.take() else { return Ok(None) };
        let mut ids = Vec::with_capacity(batch.len());
        let mut failed = None;
        let read = raw.string_cells(&rk.cols, &batch.logical, |parts| {
            let Some(k) = short_key_of_bytes(parts, &rk.colls) else { return false };
            let values = || {
                let value =
                    |p: &Option<&[u8]>| p.map_or(Scalar::Null, |b| Scalar::Bytes(b.to_vec()));
                parts.iter().map(value).collect()
            };
            match self.group_of(Some(k), &[], values) {
                Ok(id) => {
                    ids.push(id);
                    true
                }
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        self.aggs.grow(self.groups);
        if !read {
            return Ok(None);
        }
        self.row_keys = Some(rk);
        Ok(Some(ids))
    }

    /// The group of a row's key, packed (`short`) or else encoded in `buf`; a new group
    /// takes the key's values from `values`.
    #[inline]
    fn group_of(
        &mut self,
        short: Option<u128>,
        buf: &[u8],
        values: impl FnOnce() -> Vec<Scalar>,
    ) -> Result<u32> {
        let known = match short {
            Some(k) => self.recent.get(k).or_else(|| {
                let id = self.short.get(&k).copied();
                if let Some(id) = id {
                    self.recent.put(k, id);
                }
                id
            }),
            None => self.map.get(buf).copied(),
        };
        if let Some(id) = known {
            return Ok(id);
        }
        let id = u32::try_from(self.groups).map_err(|_| Error::Overflow("group count"))?;
        let key_bytes = match short {
            Some(k) => {
                self.short.insert(k, id);
                self.recent.put(k, id);
                SHORT_ENTRY_BYTES
            }
            None => {
                self.map.insert(buf.to_vec(), id);
                LONG_ENTRY_BYTES + buf.len()
            }
        };
        let values: Vec<Scalar> = values();
        self.group_bytes += key_bytes + scalars_bytes(&values) + self.per_group;
        self.group_values.push(values);
        self.groups += 1;
        Ok(id)
    }

    fn finish(&mut self) -> Result<Vec<VecCol>> {
        let mut cols = Vec::with_capacity(self.schema.len());
        self.aggs.finish(0..self.groups, &mut cols)?;
        for (j, e) in self.group_by.iter().enumerate() {
            let mut col = VecCol::new(e.et, self.groups);
            for gv in &self.group_values {
                col.push_scalar(gv.get(j).unwrap_or(&Scalar::Null));
            }
            cols.push(col);
        }
        Ok(cols)
    }
}

impl Executor for AggregationExecutor {
    fn schema(&self) -> &[FieldType] {
        &self.schema
    }

    fn next_batch(&mut self, hint: usize, env: &mut ExecEnv<'_>) -> Result<BatchResult> {
        let start = Instant::now();
        if self.output.is_none() {
            loop {
                let mut r = self.child.next_batch(BATCH_MAX_SIZE, env)?;
                self.consume_batch(&mut r.batch, env.ctx)?;
                if r.drained {
                    self.paging_drained = self.child.paging_drained();
                    break;
                }
                if self.paging_size.is_some_and(|p| self.groups as u64 >= p) {
                    self.paging_drained = true;
                    break;
                }
            }
            self.output = Some((self.finish()?, 0));
        }
        let Some((cols, pos)) = self.output.as_mut() else {
            return Err(Error::invalid("aggregation output missing"));
        };
        // Under paging the groups come out in one batch, as TiKV's: the page may not end
        // between them.
        let take = if self.paging_size.is_some() { usize::MAX } else { hint.max(1) };
        let end = pos.saturating_add(take).min(self.groups);
        let rows: Vec<u32> = (*pos as u32..end as u32).collect();
        let out: Vec<VecCol> = cols.iter().map(|c| c.gather(&rows)).collect();
        *pos = end;
        self.stats.record(start, rows.len());
        Ok(BatchResult { batch: batch_of(out, rows.len()), drained: end >= self.groups })
    }

    fn collect_stats(&self, sink: &mut Vec<ExecStats>) {
        self.child.collect_stats(sink);
        sink.push(self.stats);
    }

    fn scan_counters(&self) -> &ScanCounters {
        self.child.scan_counters()
    }

    fn paging_drained(&self) -> bool {
        self.paging_drained
    }

    fn holds_state(&self) -> bool {
        self.output.as_ref().is_some_and(|(_, pos)| *pos < self.groups)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::{BytesT, Elem};
    use crate::expr::eval::Value;
    use crate::types::EvalType;

    #[test]
    fn recent_keys_find_their_group_and_share_slots_in_turn() {
        let mut r = Recent::new();
        // Empty slots hold key 0 with no group: key 0 is not found until put.
        assert_eq!(r.get(0), None);
        r.put(0, 7);
        assert_eq!(r.get(0), Some(7));
        // Two keys of one slot take turns: the second evicts the first.
        let a = 1u128 << 70;
        let b = (1..).map(|i: u128| a + i).find(|&k| Recent::slot(k) == Recent::slot(a)).unwrap();
        r.put(a, 1);
        assert_eq!((r.get(a), r.get(b)), (Some(1), None));
        r.put(b, 2);
        assert_eq!((r.get(a), r.get(b)), (None, Some(2)));
        // A group numbered like an empty slot is never answered from the cache.
        r.put(a, NO_GROUP);
        assert_eq!(r.get(a), None);
        // Q1's four keys (two CHAR(1) columns, PAD SPACE) land in four slots.
        let (mut f1, mut f2) = (VecCol::new(EvalType::Bytes, 4), VecCol::new(EvalType::Bytes, 4));
        for k in [b"AF", b"NF", b"NO", b"RF"] {
            BytesT::push(&mut f1, Some(&k[..1]));
            BytesT::push(&mut f2, Some(&k[1..]));
        }
        let keys = [Value::Ref(&f1), Value::Ref(&f2)];
        let colls = [Collation::PadSpaceBin; 2];
        let slots: std::collections::HashSet<usize> =
            (0..4).map(|i| Recent::slot(short_key(&keys, &colls, i).unwrap())).collect();
        assert_eq!(slots.len(), 4);
    }
}
