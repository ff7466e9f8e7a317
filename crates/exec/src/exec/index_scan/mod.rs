//! IndexScan: reads index entries through the scan source, as TiKV's
//! `BatchIndexScanExecutor` does.
//!
//! The columns come in TiKV's fixed order: the index columns, then the handle (one
//! `pk_handle` int column, or the `primary_column_ids.len()` common-handle columns), then
//! the partition id (`-2`) and physical table id (`-3`) columns when asked for. Index and
//! common-handle columns stay raw until read ([`decode`] keeps, per entry, where each value
//! is: a key datum, a value datum, a restored row v2 value); the handle and id columns are
//! decoded as entries are read.
//!
//! A `unique` scan reads a point range `[k, prefix_next(k))` as a point get of `k` alone, as
//! TiKV does; any other range is scanned whole.

mod decode;

use std::sync::Arc;
use std::time::Instant;

use rcop_datum::key;
use rcop_proto::tipb;

pub(crate) use decode::IndexRows;
use decode::{Cell, Eager, HandleKind, Layout, RawCol, restore_kind};

use crate::batch::{Batch, LazyCol};
use crate::ctx::EvalConfig;
use crate::error::{Error, Feature, Result};
use crate::exec::table_scan::{EXTRA_PARTITION_ID, EXTRA_PHYSICAL_TABLE_ID, RangeWalk, ScanCol};
use crate::exec::{BatchResult, ExecEnv, ExecStats, Executor, RawRows, ScanCounters};
use crate::scan::{KeyRange, KvBatch};
use crate::types::{EvalType, FieldType};

/// TiDB's `_tidb_commit_ts` column, which needs the MVCC commit ts the scan source does not
/// give.
const EXTRA_COMMIT_TS: i64 = -5;

/// The IndexScan executor.
#[derive(Debug)]
pub struct IndexScanExecutor {
    schema: Vec<FieldType>,
    layout: Arc<Layout>,
    counters: ScanCounters,
    walk: RangeWalk,
    /// Point ranges are point gets.
    unique: bool,
    /// The index value version, from the first value read.
    version: Option<u8>,
    /// The last batch's pairs and cells, reused when no batch refers to them any more.
    spare: Option<(Arc<KvBatch>, Arc<Vec<Cell>>)>,
    stats: ExecStats,
}

fn int_column(ft: &FieldType, what: &str) -> Result<()> {
    if ft.eval_type()? != EvalType::Int {
        return Err(Error::invalid(format!("IndexScan {what} column is not an integer")));
    }
    Ok(())
}

impl IndexScanExecutor {
    /// Builds a scan over `ranges` (request order, ascending) for the tipb IndexScan.
    pub fn new(is: &tipb::IndexScan, ranges: Vec<KeyRange>, cfg: &EvalConfig) -> Result<Self> {
        let cols = &is.columns;
        let fts: Vec<FieldType> = cols.iter().map(FieldType::from_column).collect();
        let id = |i: usize| cols.get(i).and_then(|c| c.column_id).unwrap_or(0);
        // Special columns, looked for from the end in TiKV's order.
        let mut end = cols.len();
        if end > 0 && id(end - 1) == EXTRA_COMMIT_TS {
            return Err(Error::unsupported(
                Feature::Executor,
                "IndexScan reading _tidb_commit_ts (-5)",
            ));
        }
        let ptid = end > 0 && id(end - 1) == EXTRA_PHYSICAL_TABLE_ID;
        end -= usize::from(ptid);
        let pid = end > 0 && id(end - 1) == EXTRA_PARTITION_ID;
        end -= usize::from(pid);
        let int_handle = end > 0 && cols.get(end - 1).and_then(|c| c.pk_handle) == Some(true);
        let n_common = is.primary_column_ids.len();
        let handle = match (int_handle, n_common > 0) {
            (false, false) => HandleKind::None,
            (true, false) => HandleKind::Int,
            (false, true) => HandleKind::Common(n_common),
            (true, true) => {
                return Err(Error::invalid("IndexScan asks for both an int and a common handle"));
            }
        };
        let n_handle = match handle {
            HandleKind::None => 0,
            HandleKind::Int => 1,
            HandleKind::Common(n) => n,
        };
        let n_index = end
            .checked_sub(n_handle)
            .ok_or_else(|| Error::invalid("IndexScan has more handle columns than columns"))?;
        let n_raw = if handle == HandleKind::Int { n_index } else { end };
        let mut raw = Vec::with_capacity(n_raw);
        for (i, ft) in fts.iter().enumerate() {
            if i < n_raw {
                let elems = cols.get(i).map(|c| c.elems.clone()).unwrap_or_default();
                let col = ScanCol::plain(id(i), *ft, elems)?;
                let et = ft.eval_type()?;
                raw.push(RawCol { col, et, id: id(i), restore: restore_kind(ft, et)? });
            } else if i < end {
                int_column(ft, "handle")?;
            } else {
                int_column(ft, "partition or table id")?;
            }
        }
        let desc = is.desc == Some(true);
        let n = ranges.len();
        Ok(IndexScanExecutor {
            schema: fts,
            layout: Arc::new(Layout { raw, n_index, handle, pid, ptid, tz: cfg.tz.clone() }),
            counters: ScanCounters {
                counts: vec![0; n],
                ranges,
                last_key: None,
                drained: n == 0,
                desc,
                scanned_bytes: 0,
            },
            walk: RangeWalk::new(n, desc),
            unique: is.unique == Some(true),
            version: None,
            spare: None,
            stats: ExecStats::default(),
        })
    }

    /// What the source scans for request range `r`: a point range of a unique scan is its
    /// start key alone.
    /// The range the source scans for `r`: a `unique` point range is a point get of its key.
    fn point_get(unique: bool, r: &KeyRange) -> Option<KeyRange> {
        if unique && key::is_point(&r.start, &r.end) {
            let mut end = r.start.clone();
            end.push(0);
            Some(KeyRange { start: r.start.clone(), end })
        } else {
            None
        }
    }
}

impl Executor for IndexScanExecutor {
    fn schema(&self) -> &[FieldType] {
        &self.schema
    }

    fn next_batch(&mut self, hint: usize, env: &mut ExecEnv<'_>) -> Result<BatchResult> {
        // Every batch read passes here, whichever executor consumes it: the limits are
        // checked once per batch scanned.
        env.ctx.check_limits()?;
        let start = Instant::now();
        let hint = hint.max(1);
        let (kv, cells) = match self.spare.take() {
            Some((kv, cells)) => (Arc::try_unwrap(kv).ok(), Arc::try_unwrap(cells).ok()),
            None => (None, None),
        };
        let mut kv = match kv {
            Some(mut kv) => {
                kv.clear();
                kv
            }
            None => self.walk.arena(hint),
        };
        let mut cells = cells.unwrap_or_default();
        cells.clear();
        let unique = self.unique;
        self.walk
            .fill(&mut self.counters, &mut kv, hint, env.source, |r| Self::point_get(unique, r))?;
        let drained = self.counters.drained;
        let n = kv.len();
        let layout = Arc::clone(&self.layout);
        cells.reserve(n * layout.raw.len());
        let mut eager = Eager::new(n);
        for (k, v) in kv.iter() {
            layout.process(k, v, &mut self.version, &mut cells, &mut eager)?;
        }
        let mut cols: Vec<LazyCol> = vec![LazyCol::Raw; layout.raw.len()];
        if layout.handle == HandleKind::Int {
            cols.push(LazyCol::Decoded(eager.handle));
        }
        if layout.pid {
            cols.push(LazyCol::Decoded(eager.pid));
        }
        if layout.ptid {
            cols.push(LazyCol::Decoded(eager.ptid));
        }
        let kv = Arc::new(kv);
        let cells = Arc::new(cells);
        let batch = Batch {
            cols,
            logical: (0..n as u32).collect(),
            physical_len: n,
            raw: Some(RawRows::index(IndexRows {
                kv: Arc::clone(&kv),
                cells: Arc::clone(&cells),
                layout,
            })),
        };
        self.spare = Some((kv, cells));
        self.stats.record(start, n);
        Ok(BatchResult { batch, drained })
    }

    fn collect_stats(&self, sink: &mut Vec<ExecStats>) {
        sink.push(self.stats);
    }

    fn scan_counters(&self) -> &ScanCounters {
        &self.counters
    }
}
