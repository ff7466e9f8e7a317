//! Lazy remote patterns (upstream `RemoteContext::extract` / `RemotePatternStats`): requests
//! that stay local by default but are offloaded once their recent local runs proved heavy.

use std::collections::{HashMap, VecDeque};
use std::fmt::{self, Write as _};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rcop_proto::coprocessor::Request;
use rcop_proto::tipb::{DagRequest, ExecType, Executor, Expr, ExprType};

/// Samples kept per pattern (upstream: the last 5).
pub const PATTERN_SAMPLES: usize = 5;
/// Samples a pattern needs before its history can offload it (upstream: 2).
pub const PATTERN_MIN_SAMPLES: usize = 2;
/// Patterns tracked at most; a new pattern beyond this evicts an arbitrary old one so the
/// map cannot grow without bound (upstream's map is unbounded).
pub const MAX_PATTERNS: usize = 4096;

/// The digest of a request shape, e.g. `k1t1c1c2c3r` or `k1t3i2c1c2c3sc1c2`.
///
/// * `k{keyspace}` then the scan: `t{table}` (table scan) or `t{table}i{index}` (index scan),
///   then `c{column id}` per scanned column;
/// * `r` when the request has at least `remote-coprocessor-num-ranges` ranges; otherwise,
///   for a DAG of at least three executors ending in Selection → Limit, `s` then
///   `c{offset}` for every column reference in the selection's conditions (depth first).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RemotePattern(Box<str>);

impl RemotePattern {
    /// Extracts the pattern of a DAG request; `None` when it has none (then a final Limit
    /// keeps the request local).
    pub fn extract(request: &Request, dag: &DagRequest, num_ranges: usize) -> Option<Self> {
        let keyspace = request.context.as_ref().and_then(|c| c.keyspace_id).unwrap_or(0);
        let many_ranges = request.ranges.len() >= num_ranges;
        let execs = &dag.executors;
        let selection = if many_ranges {
            None
        } else {
            match execs.as_slice() {
                [_, .., sel, last]
                    if last.tp() == ExecType::TypeLimit && sel.tp() == ExecType::TypeSelection =>
                {
                    Some(sel)
                }
                _ => return None,
            }
        };
        let mut s = String::with_capacity(32);
        // Writing to a String cannot fail.
        let _ = write!(s, "k{keyspace}");
        scan_digest(execs.first()?, &mut s)?;
        match selection {
            None => s.push('r'),
            Some(sel) => {
                s.push('s');
                for cond in &sel.selection.as_ref()?.conditions {
                    column_refs(cond, &mut s)?;
                }
            }
        }
        Some(RemotePattern(s.into_boxed_str()))
    }

    /// The digest text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RemotePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn scan_digest(first: &Executor, s: &mut String) -> Option<()> {
    match first.tp() {
        ExecType::TypeTableScan => {
            let scan = first.tbl_scan.as_ref()?;
            let _ = write!(s, "t{}", scan.table_id());
            for c in &scan.columns {
                let _ = write!(s, "c{}", c.column_id());
            }
        }
        ExecType::TypeIndexScan => {
            let scan = first.idx_scan.as_ref()?;
            let _ = write!(s, "t{}i{}", scan.table_id(), scan.index_id());
            for c in &scan.columns {
                let _ = write!(s, "c{}", c.column_id());
            }
        }
        _ => return None,
    }
    Some(())
}

/// Appends `c{offset}` for every column reference under `expr`, depth first; `None` for a
/// malformed reference (then the request has no pattern). Depth is bounded by the decoder's
/// recursion limit.
fn column_refs(expr: &Expr, s: &mut String) -> Option<()> {
    if expr.tp() == ExprType::ColumnRef {
        let val: [u8; 8] = expr.val.as_deref()?.try_into().ok()?;
        // Comparable i64: big-endian with the sign bit flipped.
        let offset = (u64::from_be_bytes(val) ^ (1 << 63)) as i64;
        let _ = write!(s, "c{offset}");
    }
    for child in &expr.children {
        column_refs(child, s)?;
    }
    Some(())
}

/// One local execution of a pattern request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// Bytes processed (the scan's processed size).
    pub processed_size: u64,
    /// Time spent processing.
    pub duration: Duration,
}

/// The last [`PATTERN_SAMPLES`] samples of each pattern. Thread-safe.
#[derive(Debug, Default)]
pub struct PatternStats {
    samples: Mutex<HashMap<RemotePattern, VecDeque<Sample>>>,
}

impl PatternStats {
    /// An empty history.
    pub fn new() -> Self {
        PatternStats::default()
    }

    /// Records a local execution of `pattern`.
    pub fn record(&self, pattern: &RemotePattern, sample: Sample) {
        let mut map = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
        if !map.contains_key(pattern) && map.len() >= MAX_PATTERNS {
            let victim = map.keys().next().cloned();
            if let Some(victim) = victim {
                map.remove(&victim);
            }
        }
        let q = map.entry(pattern.clone()).or_default();
        if q.len() >= PATTERN_SAMPLES {
            q.pop_front();
        }
        q.push_back(sample);
    }

    /// Upstream's `should_offload`: at least [`PATTERN_MIN_SAMPLES`] samples and an average
    /// size above `min_blocks_size` or an average duration above `min_process_duration`.
    pub fn should_offload(
        &self,
        pattern: &RemotePattern,
        min_blocks_size: u64,
        min_process_duration: Duration,
    ) -> bool {
        let map = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(q) = map.get(pattern) else { return false };
        if q.len() < PATTERN_MIN_SAMPLES {
            return false;
        }
        let n = q.len() as u128;
        let size: u128 = q.iter().map(|s| u128::from(s.processed_size)).sum();
        let nanos: u128 = q.iter().map(|s| s.duration.as_nanos()).sum();
        size / n > u128::from(min_blocks_size) || nanos / n > min_process_duration.as_nanos()
    }

    /// Samples currently held for `pattern`.
    pub fn sample_count(&self, pattern: &RemotePattern) -> usize {
        let map = self.samples.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(pattern).map_or(0, VecDeque::len)
    }
}
