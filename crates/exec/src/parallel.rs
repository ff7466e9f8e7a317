//! One request on many cores: a DAG request's key ranges cut into parts, each part executed
//! on its own (on any thread, over its own [`ScanSource`]), and the parts' answers combined
//! into the one `coprocessor.Response` TiKV would give.
//!
//! What splits and how the parts combine: [`SplitPlan`].

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use bytes::Bytes;
use prost::Message;
use rcop_proto::{REQ_TYPE_DAG, coprocessor, tipb};

use crate::batch::Batch;
use crate::ctx::{EvalConfig, EvalContext};
use crate::encode;
use crate::engine::{
    BATCH_GROW_FACTOR, BATCH_INITIAL_SIZE, BATCH_MAX_SIZE, Engine, PageLimits, build_executors,
    by_items, error_response, execution_summaries, output_offsets, scan_error_response,
    unserved_field,
};
use crate::error::{Error, Result};
use crate::exec::{
    BatchResult, ExecEnv, ExecStats, Executor, LimitExecutor, ScanCounters, TopNExecutor,
};
use crate::limits::{Abort, ExecLimits, MemoryBudget};
use crate::scan::{KeyRange, KvBatch, MemStore, ScanError, ScanSource, ScanStatus};
use crate::types::FieldType;

/// Paging requests whose pages are smaller than this many rows run whole: a page ends at
/// the first part that fills it, so the other parts' work would mostly be thrown away. The
/// storage node forwards offloaded DAGs with `paging_size = u32::MAX`; TiDB's own pages grow
/// from 128 to 50,000 rows. Upstream's `REMOTE_MIN_PAGING_SIZE` (a page this small is not
/// worth a worker) is the same number.
pub const MIN_SPLIT_PAGING_SIZE: u64 = 4096;

/// Pairs per candidate split key in [`scan_split_keys`]: the split points fall on a grid of
/// this many pairs.
const SCAN_SPLIT_GROUP: usize = 64;

/// How the parts' answers are combined (see [`SplitPlan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Combine {
    /// The parts' chunks in scan order (scans, selections, projections, aggregations with
    /// GROUP BY).
    Concat,
    /// An aggregation without GROUP BY: the partial rows of the parts that saw input.
    SimpleAgg,
    /// A TopN: the parts' top rows merged by the same order and cut to the limit.
    TopN,
    /// A Limit: the parts' rows in scan order cut to the limit.
    Limit,
}

/// Why a request runs whole, on one thread.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Whole {
    /// Not a DAG request (analyze, checksum, other types), or one with fields the
    /// Coprocessor path does not serve.
    #[error("not a DAG request this engine splits")]
    NotDag,
    /// The DAG does not decode or does not build: the whole run answers the error.
    #[error("malformed DAG: {0}")]
    Malformed(String),
    /// The executors' shape has no correct combination of parts.
    #[error("unsplittable shape: {0}")]
    Shape(&'static str),
    /// The request's page limits (see [`SplitPlan`]).
    #[error("paging: {0}")]
    Paging(&'static str),
    /// The ranges are unsorted or overlap.
    #[error("ranges unsorted or overlapping")]
    Ranges,
    /// The split keys leave fewer than two non-empty parts.
    #[error("fewer than two parts")]
    OnePart,
}

/// A request cut into parts: what [`Engine::execute_part`] runs and
/// [`Engine::combine_parts`] joins. Built by [`Engine::plan_split`].
///
/// The three steps are separate so a host can run the parts on its own pool:
/// [`Engine::plan_split`] says whether and how a request splits ([`SplitPlan`], or [`Whole`]
/// with the reason it runs on one thread), [`Engine::execute_part`] runs one part, and
/// [`Engine::combine_parts`] joins the parts' answers. [`Engine::handle_split`] does all three
/// on scoped threads.
///
/// What splits, and how the parts combine (the DAG's executors after its scan):
///
/// | shape | combination |
/// |---|---|
/// | Selection / Projection only | the parts' chunks in scan order |
/// | … then a hash or stream aggregation with GROUP BY | the parts' partial rows concatenated in scan order (TiDB's final aggregation merges them; a stream aggregation's groups stay ordered, a group cut by a split point gives two adjacent partial rows, as one cut by a region boundary) |
/// | … then an aggregation without GROUP BY | the partial row of every part whose aggregation saw a row (TiKV answers one row even over no input: such rows would be merged as NULL first rows, so they are dropped; if every part is empty, the first part's row, which is the serial answer) |
/// | … then a TopN | the parts' top rows fed, in scan order, to a TopN of the same order and limit (stable: earlier rows win ties, so the rows equal the serial answer's) |
/// | … then a Limit | the parts' rows in scan order, cut to the limit |
///
/// Everything else runs whole ([`Whole`]): other request types (analyze, checksum), partition
/// TopN and partition Limit, a rank Limit, any executor after an aggregation, TopN or Limit,
/// requests with `max_keys_read` or `paging_size_bytes`, paging requests whose pages are
/// smaller than [`MIN_SPLIT_PAGING_SIZE`], and a TopN or Limit whose limit is larger than the
/// page (TiKV passes such a TopN's rows through unsorted).
///
/// Paging: a page is a prefix of the ranges in scan order. The parts run with the request's
/// page limits; their answers are taken in scan order while the rows and bytes taken so far
/// stay within the page (`paging_size`, the engine's `max_response_bytes`), up to the first
/// part that ended its own page early. The response's `range` is then the interval those
/// parts scanned: forward `[first range start, where the last part taken stopped)`, backward
/// `[where it stopped, last range end)`, exactly as TiDB reads it to ask for the next page.
/// Parts past the page are wasted work, which is why small pages run whole.
///
/// A Limit's parts stop early: once the parts before one in scan order have finished with
/// the limit's rows between them, that part (and every later one) is no longer needed — it
/// stops at its next batch, or does not start, and answers nothing
/// ([`PartOutput::skipped`]). The parts of one plan share what they found for this, so a
/// plan is for one run of its request.
///
/// Responses: chunks in scan order (TypeDefault or TypeChunk, as asked); `output_counts`
/// summed back onto the request's ranges (the rows the parts taken scanned); execution
/// summaries per executor with the rows and iterations summed and the time the longest
/// part's (the parts run at once), the top executor's rows those of the combined answer;
/// warnings concatenated in scan order up to `max_warning_count`, their count summed. An
/// error answers as the first part in scan order that the serial run would have reached
/// with an error.
#[derive(Debug, Clone)]
pub struct SplitPlan {
    /// The DAG each part runs (the request's, with execution summaries collected).
    dag: Arc<tipb::DagRequest>,
    /// Whether the request asked for execution summaries.
    summaries: bool,
    /// Number of request ranges.
    ranges: usize,
    /// The request's first range start and last range end.
    first_start: Vec<u8>,
    last_end: Vec<u8>,
    /// The parts, in key order.
    parts: Vec<Part>,
    combine: Combine,
    /// Index of the TopN or Limit (or aggregation) executor the combination is about.
    top: usize,
    /// The TopN's or Limit's limit.
    limit: u64,
    desc: bool,
    page: PageLimits,
    /// What the parts found so far (a Limit's parts stop on it).
    progress: Arc<Progress>,
}

/// What the parts of a Limit plan found so far, shared by them: the rows each finished part
/// answers, and a stop flag per part that the parts before it made unneeded.
#[derive(Debug)]
struct Progress {
    /// Per part (plan order): the rows of its answer once it finished, else [`RUNNING`].
    rows: Vec<AtomicU64>,
    /// Per part (plan order): set once the part is no longer needed.
    stop: Vec<Arc<AtomicBool>>,
}

/// [`Progress::rows`] of a part that has not finished (or failed).
const RUNNING: u64 = u64::MAX;

impl Progress {
    fn new(parts: usize) -> Progress {
        Progress {
            rows: (0..parts).map(|_| AtomicU64::new(RUNNING)).collect(),
            stop: (0..parts).map(|_| Arc::new(AtomicBool::new(false))).collect(),
        }
    }

    /// Records that `part` finished with `rows` rows, then stops every part after the
    /// finished scan-order prefix that holds `limit` rows (as [`Engine::combine_parts`]
    /// takes them: the first part always, later ones while fewer than `limit` rows are
    /// taken).
    fn finish(&self, part: usize, rows: u64, limit: u64, order: &[usize]) {
        if let Some(r) = self.rows.get(part) {
            r.store(rows.min(RUNNING - 1), Ordering::Release);
        }
        let mut taken = 0u64;
        let mut stopping = false;
        for (n, &i) in order.iter().enumerate() {
            stopping = stopping || (n > 0 && taken >= limit);
            if stopping {
                if let Some(f) = self.stop.get(i) {
                    f.store(true, Ordering::Relaxed);
                }
                continue;
            }
            match self.rows.get(i).map(|r| r.load(Ordering::Acquire)) {
                Some(r) if r != RUNNING => taken = taken.saturating_add(r),
                _ => return,
            }
        }
    }

    fn stopped(&self, part: usize) -> bool {
        self.stop.get(part).is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

#[derive(Debug, Clone)]
struct Part {
    ranges: Vec<KeyRange>,
    /// Per range: the index of the request range it is cut from.
    origin: Vec<usize>,
}

impl SplitPlan {
    /// Number of parts (at least two).
    pub fn parts(&self) -> usize {
        self.parts.len()
    }

    /// The ranges of part `i`, in key order (empty when `i` is out of range).
    pub fn part_ranges(&self, i: usize) -> &[KeyRange] {
        self.parts.get(i).map_or(&[], |p| p.ranges.as_slice())
    }

    /// How the parts combine.
    pub fn combine(&self) -> Combine {
        self.combine
    }

    /// Whether the scan runs backwards (parts then combine from the last to the first).
    pub fn desc(&self) -> bool {
        self.desc
    }

    /// The part indexes in scan order.
    fn scan_order(&self) -> Vec<usize> {
        let n = self.parts.len();
        if self.desc { (0..n).rev().collect() } else { (0..n).collect() }
    }
}

/// What one part answered, for [`Engine::combine_parts`]. Holds its bytes of the request's
/// memory budget until dropped.
#[derive(Debug)]
pub struct PartOutput {
    part: usize,
    result: PartResult,
    _held: Held,
}

impl PartOutput {
    /// The part this is the answer of.
    pub fn part(&self) -> usize {
        self.part
    }

    /// Whether the part stopped (or never started) because the parts before it already
    /// answer the request (a Limit's rows): it answers nothing.
    pub fn skipped(&self) -> bool {
        matches!(self.result, PartResult::Skipped)
    }
}

#[derive(Debug)]
enum PartResult {
    /// The part's own response (concatenated modes).
    Encoded {
        response: tipb::SelectResponse,
        scanned_range: Option<KeyRange>,
        /// Output rows (counted only when paging needs them).
        rows: u64,
        bytes: usize,
    },
    /// The part's rows, for a final TopN or Limit.
    Rows {
        schema: Vec<FieldType>,
        batches: Vec<Batch>,
        rows: u64,
        stats: Vec<ExecStats>,
        counts: Vec<i64>,
        warnings: Vec<tipb::Error>,
        warning_count: usize,
    },
    /// The part's error, as the whole request would answer it.
    Failed(Box<coprocessor::Response>),
    /// Not needed: the parts before it answer the request.
    Skipped,
}

/// Bytes of a memory budget held for a part's answer, given back on drop.
#[derive(Debug, Default)]
struct Held {
    budget: Option<Arc<dyn MemoryBudget>>,
    bytes: usize,
}

impl Held {
    fn grow(limits: &ExecLimits, bytes: usize) -> std::result::Result<Held, Abort> {
        match &limits.memory {
            Some(b) if bytes > 0 => {
                if b.try_grow(bytes) {
                    Ok(Held { budget: Some(Arc::clone(b)), bytes })
                } else {
                    Err(Abort::OverBudget { requested: bytes, held: 0 })
                }
            }
            _ => Ok(Held::default()),
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.shrink(self.bytes);
        }
    }
}

/// Sorted, non-overlapping ranges (a range may end where the next starts).
fn ranges_sorted(ranges: &[KeyRange]) -> bool {
    ranges.windows(2).all(|w| match w {
        [a, b] => !a.end.is_empty() && a.end <= b.start,
        _ => true,
    })
}

/// Cuts `ranges` at `keys` (sorted, distinct) into parts; parts without a non-empty range
/// are dropped.
fn cut(ranges: &[KeyRange], keys: &[Vec<u8>]) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut cur = Part { ranges: Vec::new(), origin: Vec::new() };
    // Index of the next split key: the current part ends before keys[k].
    let mut k = 0;
    for (i, r) in ranges.iter().enumerate() {
        let mut start = r.start.clone();
        loop {
            // Split keys at or before the piece's start close the current part.
            while let Some(key) = keys.get(k)
                && key.as_slice() <= start.as_slice()
            {
                if !cur.ranges.is_empty() {
                    parts.push(std::mem::replace(
                        &mut cur,
                        Part { ranges: Vec::new(), origin: Vec::new() },
                    ));
                }
                k += 1;
            }
            match keys.get(k) {
                Some(key) if r.end.is_empty() || key.as_slice() < r.end.as_slice() => {
                    cur.ranges.push(KeyRange { start, end: key.clone() });
                    cur.origin.push(i);
                    start = key.clone();
                }
                _ => {
                    let piece = KeyRange { start, end: r.end.clone() };
                    if piece.end.is_empty() || piece.start < piece.end {
                        cur.ranges.push(piece);
                        cur.origin.push(i);
                    }
                    break;
                }
            }
        }
    }
    if !cur.ranges.is_empty() {
        parts.push(cur);
    }
    parts
}

impl Engine {
    /// Plans `req` as parts cut at `split_keys` (raw keys, any order; keys outside the
    /// ranges only decide which ranges go together), or says why it runs whole.
    ///
    /// Split keys come from whoever knows the data: `rcop-snap`'s snapshot offers keys
    /// that cut its blocks and rows into parts of about equal bytes,
    /// [`MemStore::split_keys`] and [`scan_split_keys`] cut any source by its pairs.
    ///
    /// # Errors
    ///
    /// [`Whole`] with the reason the request runs on one thread.
    pub fn plan_split(
        &self,
        req: &coprocessor::Request,
        split_keys: &[Vec<u8>],
    ) -> std::result::Result<SplitPlan, Whole> {
        if req.tp != REQ_TYPE_DAG || unserved_field(req).is_some() {
            return Err(Whole::NotDag);
        }
        let page = PageLimits::of(req);
        if page.max_keys_read > 0 {
            return Err(Whole::Paging("max_keys_read stops the scan at a key count"));
        }
        if page.paging_size > 0 {
            if page.paging_size < MIN_SPLIT_PAGING_SIZE {
                return Err(Whole::Paging("pages too small to split"));
            }
            if page.paging_size_bytes > 0 {
                return Err(Whole::Paging("paging_size_bytes ends pages by scanned bytes"));
            }
        }
        let mut dag = tipb::DagRequest::decode(req.data.clone())
            .map_err(|e| Whole::Malformed(format!("undecodable DAGRequest: {e}")))?;
        self.check_dag(&dag).map_err(|e| Whole::Malformed(e.to_string()))?;
        let (combine, top, limit, desc) = shape(&dag, page.paging_size)?;
        let ranges: Vec<KeyRange> = req
            .ranges
            .iter()
            .map(|r| KeyRange { start: r.start.to_vec(), end: r.end.to_vec() })
            .collect();
        if !ranges_sorted(&ranges) {
            return Err(Whole::Ranges);
        }
        let mut keys: Vec<Vec<u8>> = split_keys.to_vec();
        keys.sort_unstable();
        keys.dedup();
        let parts = cut(&ranges, &keys);
        if parts.len() < 2 {
            return Err(Whole::OnePart);
        }
        let summaries = dag.collect_execution_summaries == Some(true);
        dag.collect_execution_summaries = Some(true);
        let progress = Arc::new(Progress::new(parts.len()));
        Ok(SplitPlan {
            dag: Arc::new(dag),
            summaries,
            ranges: ranges.len(),
            first_start: ranges.first().map(|r| r.start.clone()).unwrap_or_default(),
            last_end: ranges.last().map(|r| r.end.clone()).unwrap_or_default(),
            parts,
            combine,
            top,
            limit,
            desc,
            page,
            progress,
        })
    }

    /// Runs part `part` of `plan` reading through `source` (a scanner of the same snapshot
    /// as every other part's), under the request's limits: the part's state is accounted
    /// against the same budget and its answer stays accounted until the [`PartOutput`] is
    /// dropped; the deadline and the cancel flag stop it as they stop a whole request.
    ///
    /// # Errors
    ///
    /// [`Abort`] when a limit stops the part (the request then stops: drop the other
    /// parts' outputs). Request and scan errors are part of the output, answered by
    /// [`combine_parts`](Self::combine_parts) where the serial run would have met them.
    pub fn execute_part(
        &self,
        plan: &SplitPlan,
        part: usize,
        source: &mut dyn ScanSource,
        limits: &ExecLimits,
    ) -> std::result::Result<PartOutput, Abort> {
        let Some(p) = plan.parts.get(part) else {
            let resp = coprocessor::Response {
                other_error: format!("part {part} of a plan of {} parts", plan.parts.len()),
                ..Default::default()
            };
            return Ok(PartOutput {
                part,
                result: PartResult::Failed(Box::new(resp)),
                _held: Held::default(),
            });
        };
        let stop = plan.progress.stop.get(part).filter(|_| plan.combine == Combine::Limit);
        if plan.progress.stopped(part) {
            return Ok(PartOutput { part, result: PartResult::Skipped, _held: Held::default() });
        }
        let part_limits;
        let limits = match stop {
            Some(flag) => {
                part_limits = limits.clone().with_part_stop(Arc::clone(flag));
                &part_limits
            }
            None => limits,
        };
        let result = match plan.combine {
            Combine::Concat | Combine::SimpleAgg => self
                .execute_dag_limited(&plan.dag, &p.ranges, &plan.page, limits, source)
                .and_then(|out| {
                    let bytes = out
                        .response
                        .chunks
                        .iter()
                        .map(|c| c.rows_data.as_ref().map_or(0, Bytes::len))
                        .sum();
                    let rows = if plan.page.paging_size > 0 {
                        encode::count_rows(&out.response, plan.dag.output_offsets.len())?
                    } else {
                        0
                    };
                    Ok(PartResult::Encoded {
                        response: out.response,
                        scanned_range: out.scanned_range,
                        rows,
                        bytes,
                    })
                }),
            Combine::TopN | Combine::Limit => self.collect_rows(plan, p, source, limits),
        };
        if let (Ok(PartResult::Rows { rows, .. }), Some(_)) = (&result, stop) {
            plan.progress.finish(part, *rows, plan.limit, &plan.scan_order());
        }
        let result = match result {
            Ok(r) => r,
            // Stopped by its own flag, not the request's: the parts before it answer.
            Err(Error::Aborted(Abort::Cancelled))
                if plan.progress.stopped(part)
                    && !limits.cancelled.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) =>
            {
                PartResult::Skipped
            }
            Err(Error::Aborted(a)) => return Err(a),
            Err(Error::Scan(e)) => PartResult::Failed(Box::new(scan_error_response(e))),
            Err(e) => PartResult::Failed(Box::new(coprocessor::Response {
                data: Bytes::from(error_response(&e).encode_to_vec()),
                ..Default::default()
            })),
        };
        let bytes = match &result {
            PartResult::Encoded { response, .. } => response.encoded_len(),
            PartResult::Rows { .. } | PartResult::Failed(_) | PartResult::Skipped => 0,
        };
        let held = match &result {
            PartResult::Rows { batches, .. } => Held::grow(limits, rows_bytes(batches))?,
            _ => Held::grow(limits, bytes)?,
        };
        Ok(PartOutput { part, result, _held: held })
    }

    /// Runs a part's executors and keeps their output rows (for a final TopN or Limit).
    fn collect_rows(
        &self,
        plan: &SplitPlan,
        p: &Part,
        source: &mut dyn ScanSource,
        limits: &ExecLimits,
    ) -> Result<PartResult> {
        let paging_size = plan.page.paging_size;
        let mut cfg = EvalConfig::from_dag(&plan.dag)?;
        cfg.paging_size = (paging_size > 0).then_some(paging_size);
        let mut root = build_executors(&plan.dag, &p.ranges, &cfg, self.config().max_expr_depth)?;
        let schema = root.schema().to_vec();
        let all: Vec<usize> = (0..schema.len()).collect();
        let mut ctx = EvalContext::new(cfg).with_limits(limits);
        ctx.check_limits()?;
        let mut env = ExecEnv { ctx: &mut ctx, source };
        let mut batches = Vec::new();
        let (mut rows, mut accounted) = (0u64, 0usize);
        let mut hint = BATCH_INITIAL_SIZE;
        loop {
            env.ctx.check_limits()?;
            let BatchResult { mut batch, drained } = root.next_batch(hint, &mut env)?;
            if !batch.is_empty() {
                // Decoded and compacted: the scan's raw pairs are not kept alive.
                batch.ensure_compact(&all, env.ctx)?;
                // Every column is decoded: a batch that needed no compaction drops its
                // pairs here.
                batch.raw = None;
                rows += batch.len() as u64;
                batches.push(batch);
                env.ctx.account(&mut accounted, rows_bytes(&batches))?;
            }
            if drained {
                break;
            }
            hint = (hint * BATCH_GROW_FACTOR).min(BATCH_MAX_SIZE);
        }
        let mut stats = Vec::new();
        root.collect_stats(&mut stats);
        let counts = root.scan_counters().counts.clone();
        let (warnings, warning_count) = ctx.take_warnings();
        ctx.release_memory();
        Ok(PartResult::Rows { schema, batches, rows, stats, counts, warnings, warning_count })
    }

    /// Joins the parts' outputs (one per part of `plan`, any order) into the response the
    /// whole request would have given (see [`SplitPlan`]).
    ///
    /// `Ok(None)` when the parts cannot answer as the whole request would: a Limit's rows
    /// reach the page's byte cap, where TiKV ends the page at a key the parts did not keep,
    /// or a part after the first failed where the serial run might have stopped before the
    /// failing row (a Limit, a page). Run the request whole then.
    ///
    /// # Errors
    ///
    /// [`Abort`] when a limit stops the final TopN or Limit.
    pub fn combine_parts(
        &self,
        plan: &SplitPlan,
        outputs: Vec<PartOutput>,
        limits: &ExecLimits,
    ) -> std::result::Result<Option<coprocessor::Response>, Abort> {
        let mut slots: Vec<Option<PartOutput>> = (0..plan.parts.len()).map(|_| None).collect();
        for o in outputs {
            if let Some(slot) = slots.get_mut(o.part) {
                *slot = Some(o);
            }
        }
        if let Some(missing) = slots.iter().position(Option::is_none) {
            return Ok(Some(coprocessor::Response {
                other_error: format!("part {missing} of the split request has no answer"),
                ..Default::default()
            }));
        }
        let ordered: Vec<PartOutput> =
            plan.scan_order().into_iter().filter_map(|i| slots.get_mut(i)?.take()).collect();
        match plan.combine {
            Combine::Concat | Combine::SimpleAgg => Ok(self.combine_encoded(plan, ordered)),
            Combine::TopN | Combine::Limit => self.combine_rows(plan, ordered, limits),
        }
    }

    fn combine_encoded(
        &self,
        plan: &SplitPlan,
        ordered: Vec<PartOutput>,
    ) -> Option<coprocessor::Response> {
        let paging = plan.page.paging_size;
        let byte_cap = if paging > 0 { self.config().max_response_bytes } else { usize::MAX };
        let mut taken: Vec<(usize, tipb::SelectResponse)> = Vec::new();
        let (mut rows_total, mut bytes_total) = (0u64, 0usize);
        let mut range: Option<KeyRange> = None;
        for (n, out) in ordered.into_iter().enumerate() {
            let part = out.part;
            let PartOutput { result, _held, .. } = out;
            match result {
                PartResult::Failed(resp) => {
                    if n > 0 && paging > 0 {
                        if rows_total >= paging || bytes_total >= byte_cap {
                            range = Some(plan.boundary_before(part));
                            break;
                        }
                        // The page might have ended before the failing row: only a whole
                        // run knows.
                        return None;
                    }
                    return Some(*resp);
                }
                PartResult::Encoded { response, scanned_range, rows, bytes } => {
                    // A page ends before a later part that would fill it past its caps, or
                    // that ended its own page early (its rows are not all of its range's).
                    if n > 0
                        && paging > 0
                        && (rows_total.saturating_add(rows) > paging
                            || bytes_total.saturating_add(bytes) > byte_cap)
                    {
                        range = Some(plan.boundary_before(part));
                        break;
                    }
                    rows_total += rows;
                    bytes_total += bytes;
                    taken.push((part, response));
                    if let Some(r) = scanned_range {
                        range = Some(plan.combined_range(r));
                        break;
                    }
                }
                PartResult::Rows { .. } | PartResult::Skipped => {
                    return Some(coprocessor::Response {
                        other_error: "a TopN or Limit part in a concatenated plan".into(),
                        ..Default::default()
                    });
                }
            }
        }
        // Which parts' rows are kept: all, or for an aggregation without GROUP BY those
        // whose aggregation saw a row (the first when none did).
        let keep: Vec<bool> = match plan.combine {
            Combine::SimpleAgg => {
                let input = plan.top.checked_sub(1);
                let saw: Vec<bool> = taken
                    .iter()
                    .map(|(_, r)| {
                        input
                            .and_then(|i| r.execution_summaries.get(i))
                            .is_none_or(|s| s.num_produced_rows.unwrap_or(0) > 0)
                    })
                    .collect();
                if saw.iter().any(|&s| s) {
                    saw
                } else {
                    (0..taken.len()).map(|i| i == 0).collect()
                }
            }
            _ => vec![true; taken.len()],
        };
        let mut counts = vec![0i64; plan.ranges];
        let mut stats: Vec<ExecStats> = Vec::new();
        let mut warnings = Warnings::new(&plan.dag);
        let mut chunks = Vec::new();
        let mut top_rows = 0u64;
        for ((part, resp), keep) in taken.into_iter().zip(keep) {
            plan.add_counts(part, &resp.output_counts, &mut counts);
            let part_stats: Vec<ExecStats> = resp
                .execution_summaries
                .iter()
                .map(|s| ExecStats {
                    time_processed_ns: s.time_processed_ns.unwrap_or(0),
                    num_produced_rows: s.num_produced_rows.unwrap_or(0),
                    num_iterations: s.num_iterations.unwrap_or(0),
                })
                .collect();
            merge_stats(&mut stats, &part_stats);
            warnings.add(resp.warnings, resp.warning_count.unwrap_or(0));
            if keep {
                top_rows += part_stats.last().map_or(0, |s| s.num_produced_rows);
                chunks.extend(resp.chunks);
            }
        }
        if let Some(top) = stats.last_mut() {
            top.num_produced_rows = top_rows;
        }
        Some(plan.response(chunks, counts, &stats, warnings, range))
    }

    fn combine_rows(
        &self,
        plan: &SplitPlan,
        ordered: Vec<PartOutput>,
        limits: &ExecLimits,
    ) -> std::result::Result<Option<coprocessor::Response>, Abort> {
        let mut counts = vec![0i64; plan.ranges];
        let mut stats: Vec<ExecStats> = Vec::new();
        let mut warnings = Warnings::new(&plan.dag);
        let mut feed: VecDeque<Batch> = VecDeque::new();
        let mut schema: Option<Vec<FieldType>> = None;
        let mut rows_total = 0u64;
        // Held until the final executor has read the rows.
        let mut held = Vec::new();
        for (n, out) in ordered.into_iter().enumerate() {
            // A Limit met by the parts before this one: the serial run stops there.
            if n > 0 && plan.combine == Combine::Limit && rows_total >= plan.limit {
                break;
            }
            let part = out.part;
            let PartOutput { result, _held, .. } = out;
            held.push(_held);
            match result {
                // A Limit's later part reads up to the whole limit, past the row where the
                // serial run would have stopped: only a whole run knows whether it fails.
                PartResult::Failed(_) if plan.combine == Combine::Limit && n > 0 => {
                    return Ok(None);
                }
                PartResult::Failed(resp) => return Ok(Some(*resp)),
                // Only a part after the Limit's rows stops, and the loop ended before it.
                PartResult::Skipped => return Ok(None),
                PartResult::Encoded { .. } => {
                    return Ok(Some(coprocessor::Response {
                        other_error: "a concatenated part in a TopN or Limit plan".into(),
                        ..Default::default()
                    }));
                }
                PartResult::Rows {
                    schema: s,
                    batches,
                    rows,
                    stats: part_stats,
                    counts: part_counts,
                    warnings: w,
                    warning_count,
                } => {
                    schema.get_or_insert(s);
                    plan.add_counts(part, &part_counts, &mut counts);
                    merge_stats(&mut stats, &part_stats);
                    warnings.add(w, i64::try_from(warning_count).unwrap_or(i64::MAX));
                    rows_total += rows;
                    feed.extend(batches);
                }
            }
        }
        let schema = schema.unwrap_or_default();
        let result = self.final_rows(plan, schema, feed, limits);
        drop(held);
        let (chunks, final_stats, final_warnings, over_cap) = match result {
            Ok(r) => r,
            Err(Error::Aborted(a)) => return Err(a),
            Err(Error::Scan(e)) => return Ok(Some(scan_error_response(e))),
            Err(e) => {
                return Ok(Some(coprocessor::Response {
                    data: Bytes::from(error_response(&e).encode_to_vec()),
                    ..Default::default()
                }));
            }
        };
        if over_cap {
            return Ok(None);
        }
        warnings.add(final_warnings.0, i64::try_from(final_warnings.1).unwrap_or(i64::MAX));
        if let (Some(top), Some(f)) = (stats.last_mut(), final_stats.last()) {
            top.num_produced_rows = f.num_produced_rows;
            top.num_iterations += f.num_iterations;
            top.time_processed_ns += f.time_processed_ns;
        }
        Ok(Some(plan.response(chunks, counts, &stats, warnings, None)))
    }

    /// The final TopN or Limit over the parts' rows, encoded as the engine encodes. The
    /// flag is true when a paging request's answer reached the byte cap with rows left.
    #[expect(clippy::type_complexity, reason = "a private tuple of the final run's parts")]
    fn final_rows(
        &self,
        plan: &SplitPlan,
        schema: Vec<FieldType>,
        feed: VecDeque<Batch>,
        limits: &ExecLimits,
    ) -> Result<(Vec<tipb::Chunk>, Vec<ExecStats>, (Vec<tipb::Error>, usize), bool)> {
        let cfg = EvalConfig::from_dag(&plan.dag)?;
        // An empty answer still has the schema's columns (the final executor reads them).
        let empty = schema
            .iter()
            .map(|ft| Ok(crate::column::VecCol::new(ft.eval_type()?, 0)))
            .collect::<Result<Vec<_>>>()?;
        let replay = Box::new(Replay::new(schema.clone(), feed, Batch::from_cols(empty)));
        let mut root: Box<dyn Executor> = match plan.combine {
            Combine::TopN => {
                let order_by = plan
                    .dag
                    .executors
                    .get(plan.top)
                    .and_then(|e| e.top_n.as_ref())
                    .map(|t| t.order_by.as_slice())
                    .unwrap_or_default();
                let order = by_items(order_by, &schema, &cfg, self.config().max_expr_depth)?;
                Box::new(TopNExecutor::new(replay, order, plan.limit))
            }
            _ => Box::new(LimitExecutor::new(replay, plan.limit)),
        };
        let offsets = output_offsets(&plan.dag, &schema)?;
        let chunked = plan.dag.encode_type() == tipb::EncodeType::TypeChunk;
        let byte_cap =
            if plan.page.paging_size > 0 { self.config().max_response_bytes } else { usize::MAX };
        let tz = cfg.tz.clone();
        let mut ctx = EvalContext::new(cfg).with_limits(limits);
        let empty = MemStore::default();
        let mut source = empty.scanner();
        let mut env = ExecEnv { ctx: &mut ctx, source: &mut source };
        let (mut chunks, mut bytes, mut accounted) = (Vec::new(), 0usize, 0usize);
        let mut hint = BATCH_INITIAL_SIZE;
        loop {
            env.ctx.check_limits()?;
            let mut r = root.next_batch(hint, &mut env)?;
            if !r.batch.is_empty() {
                r.batch.ensure(&offsets, env.ctx)?;
                let data = encode::encode_rows(&r.batch, &offsets, &schema, &tz, chunked)?;
                bytes += data.len();
                env.ctx.account(&mut accounted, bytes)?;
                chunks.push(tipb::Chunk {
                    rows_data: Some(Bytes::from(data)),
                    rows_meta: Vec::new(),
                });
            }
            // The whole run ends a page once its answer reaches the byte cap, at a batch
            // boundary the parts do not share: an answer that reaches it is the whole
            // run's to give (a TopN never ends a page early; only a Limit can get here).
            if bytes >= byte_cap && plan.combine == Combine::Limit {
                return Ok((chunks, Vec::new(), (Vec::new(), 0), true));
            }
            if r.drained {
                break;
            }
            hint = (hint * BATCH_GROW_FACTOR).min(BATCH_MAX_SIZE);
        }
        let mut stats = Vec::new();
        root.collect_stats(&mut stats);
        let warnings = ctx.take_warnings();
        ctx.release_memory();
        Ok((chunks, stats, warnings, false))
    }

    /// Runs `req` split at `split_keys`, one scoped thread per part, each reading through a
    /// source of its own from `make_source`; a request that does not split (see
    /// [`plan_split`](Self::plan_split)) runs whole on this thread, as
    /// [`handle_limited`](Self::handle_limited). For tests and simple hosts: a server runs
    /// the parts as jobs of its own pool ([`execute_part`](Self::execute_part),
    /// [`combine_parts`](Self::combine_parts)).
    ///
    /// # Errors
    ///
    /// [`Abort`] when a limit stops the request.
    pub fn handle_split<S, F>(
        &self,
        req: &coprocessor::Request,
        split_keys: &[Vec<u8>],
        make_source: F,
        limits: &ExecLimits,
    ) -> std::result::Result<coprocessor::Response, Abort>
    where
        S: ScanSource,
        F: Fn() -> S + Sync,
    {
        let plan = match self.plan_split(req, split_keys) {
            Ok(plan) => plan,
            Err(_) => return self.handle_limited(req, &mut make_source(), limits),
        };
        let results: Vec<Option<std::result::Result<PartOutput, Abort>>> =
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..plan.parts())
                    .map(|i| {
                        let (plan, make_source) = (&plan, &make_source);
                        s.spawn(move || self.execute_part(plan, i, &mut make_source(), limits))
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().ok()).collect()
            });
        let mut outputs = Vec::with_capacity(results.len());
        for r in results {
            match r {
                Some(r) => outputs.push(r?),
                None => {
                    return Ok(coprocessor::Response {
                        other_error: "a part of the split request panicked".into(),
                        ..Default::default()
                    });
                }
            }
        }
        match self.combine_parts(&plan, outputs, limits)? {
            Some(resp) => Ok(resp),
            None => self.handle_limited(req, &mut make_source(), limits),
        }
    }
}

/// The combination and the top executor's index (and limit) of a DAG, or why it does not
/// split.
fn shape(
    dag: &tipb::DagRequest,
    paging_size: u64,
) -> std::result::Result<(Combine, usize, u64, bool), Whole> {
    let mut it = dag.executors.iter().enumerate();
    let desc = match it.next() {
        Some((_, e)) if e.tp == Some(tipb::ExecType::TypeTableScan as i32) => {
            e.tbl_scan.as_ref().is_some_and(|t| t.desc == Some(true))
        }
        Some((_, e)) if e.tp == Some(tipb::ExecType::TypeIndexScan as i32) => {
            e.idx_scan.as_ref().is_some_and(|t| t.desc == Some(true))
        }
        _ => return Err(Whole::Shape("the first executor is not a table or index scan")),
    };
    let mut found: Option<(Combine, usize, u64)> = None;
    for (i, e) in it {
        if found.is_some() {
            return Err(Whole::Shape("an executor after an aggregation, TopN or Limit"));
        }
        let tp = e.tp.unwrap_or(-1);
        found = match tp {
            t if t == tipb::ExecType::TypeSelection as i32
                || t == tipb::ExecType::TypeProjection as i32 =>
            {
                None
            }
            t if t == tipb::ExecType::TypeAggregation as i32
                || t == tipb::ExecType::TypeStreamAgg as i32 =>
            {
                let grouped = e.aggregation.as_ref().is_some_and(|a| !a.group_by.is_empty());
                Some((if grouped { Combine::Concat } else { Combine::SimpleAgg }, i, 0))
            }
            t if t == tipb::ExecType::TypeTopN as i32 => {
                let t = e.top_n.as_ref().ok_or(Whole::Shape("TopN without its body"))?;
                if !t.partition_by.is_empty() {
                    return Err(Whole::Shape("partition TopN"));
                }
                let limit = t.limit.unwrap_or(0);
                if paging_size > 0 && limit > paging_size {
                    return Err(Whole::Paging("a TopN larger than the page passes rows through"));
                }
                Some((Combine::TopN, i, limit))
            }
            t if t == tipb::ExecType::TypeLimit as i32 => {
                let l = e.limit.as_ref().ok_or(Whole::Shape("Limit without its body"))?;
                if !l.partition_by.is_empty() {
                    return Err(Whole::Shape("partition Limit"));
                }
                if !l.truncate_key_expr.is_empty() {
                    return Err(Whole::Shape("rank Limit"));
                }
                let limit = l.limit.unwrap_or(0);
                if paging_size > 0 && limit > paging_size {
                    return Err(Whole::Paging("a Limit larger than the page"));
                }
                Some((Combine::Limit, i, limit))
            }
            _ => return Err(Whole::Shape("an executor the parts cannot combine")),
        };
    }
    let (combine, top, limit) =
        found.unwrap_or((Combine::Concat, dag.executors.len().saturating_sub(1), 0));
    Ok((combine, top, limit, desc))
}

impl SplitPlan {
    /// The paging range of an answer that ends just before part `part` (in scan order).
    fn boundary_before(&self, part: usize) -> KeyRange {
        let p = self.parts.get(part);
        if self.desc {
            let start = p.and_then(|p| p.ranges.last()).map(|r| r.end.clone()).unwrap_or_default();
            KeyRange { start, end: self.last_end.clone() }
        } else {
            let end = p.and_then(|p| p.ranges.first()).map(|r| r.start.clone()).unwrap_or_default();
            KeyRange { start: self.first_start.clone(), end }
        }
    }

    /// The paging range of an answer whose last part taken stopped at `scanned` (that
    /// part's own paging range).
    fn combined_range(&self, scanned: KeyRange) -> KeyRange {
        if self.desc {
            KeyRange { start: scanned.start, end: self.last_end.clone() }
        } else {
            KeyRange { start: self.first_start.clone(), end: scanned.end }
        }
    }

    /// Adds part `part`'s per-range counts to the request's ranges.
    fn add_counts(&self, part: usize, part_counts: &[i64], counts: &mut [i64]) {
        let Some(p) = self.parts.get(part) else { return };
        for (&origin, &c) in p.origin.iter().zip(part_counts) {
            if let Some(slot) = counts.get_mut(origin) {
                *slot += c;
            }
        }
    }

    /// The combined response.
    fn response(
        &self,
        chunks: Vec<tipb::Chunk>,
        counts: Vec<i64>,
        stats: &[ExecStats],
        warnings: Warnings,
        range: Option<KeyRange>,
    ) -> coprocessor::Response {
        let mut response = tipb::SelectResponse {
            chunks,
            encode_type: Some(self.dag.encode_type() as i32),
            output_counts: counts,
            ..Default::default()
        };
        if self.summaries {
            response.execution_summaries = execution_summaries(stats, &self.dag.executors);
        }
        response.warnings = warnings.kept;
        response.warning_count = Some(warnings.count);
        coprocessor::Response {
            data: Bytes::from(response.encode_to_vec()),
            range: range.map(|r| coprocessor::KeyRange {
                start: Bytes::from(r.start),
                end: Bytes::from(r.end),
            }),
            ..Default::default()
        }
    }
}

/// Warnings of the parts in scan order, up to the request's `max_warning_count`.
#[derive(Debug)]
struct Warnings {
    kept: Vec<tipb::Error>,
    count: i64,
    max: usize,
}

impl Warnings {
    fn new(dag: &tipb::DagRequest) -> Warnings {
        let max = EvalConfig::from_dag(dag).map_or(0, |c| c.max_warning_count);
        Warnings { kept: Vec::new(), count: 0, max }
    }

    fn add(&mut self, warnings: Vec<tipb::Error>, count: i64) {
        let room = self.max.saturating_sub(self.kept.len());
        self.kept.extend(warnings.into_iter().take(room));
        self.count = self.count.saturating_add(count);
    }
}

/// Adds a part's executor statistics: rows and iterations summed, the time of the longest
/// part (the parts run at once).
fn merge_stats(into: &mut Vec<ExecStats>, part: &[ExecStats]) {
    if into.len() < part.len() {
        into.resize(part.len(), ExecStats::default());
    }
    for (a, b) in into.iter_mut().zip(part) {
        a.time_processed_ns = a.time_processed_ns.max(b.time_processed_ns);
        a.num_produced_rows += b.num_produced_rows;
        a.num_iterations += b.num_iterations;
    }
}

/// Bytes a part's kept rows hold, as the engine accounts TopN rows: a slot per value plus
/// the bytes of variable-length values.
fn rows_bytes(batches: &[Batch]) -> usize {
    batches
        .iter()
        .map(|b| {
            let slots = b.len() * b.cols.len() * std::mem::size_of::<crate::column::Scalar>();
            let heap: usize = b
                .cols
                .iter()
                .map(|c| match c {
                    crate::batch::LazyCol::Decoded(v) => col_heap_bytes(v),
                    crate::batch::LazyCol::Raw => 0,
                })
                .sum();
            slots + heap
        })
        .sum()
}

/// The bytes a column's variable-length values hold.
fn col_heap_bytes(v: &crate::column::VecCol) -> usize {
    use crate::column::ColData;
    match &v.data {
        ColData::Bytes(b) | ColData::Json(b) | ColData::Enum(b) | ColData::Vector(b) => {
            (0..b.len()).map(|i| b.get(i).len() + std::mem::size_of::<usize>()).sum()
        }
        _ => 0,
    }
}

/// An executor that replays batches (the parts' rows) to a final TopN or Limit.
#[derive(Debug)]
struct Replay {
    schema: Vec<FieldType>,
    batches: VecDeque<Batch>,
    /// What an exhausted replay returns: no rows, the schema's columns.
    empty: Batch,
    counters: ScanCounters,
    stats: ExecStats,
}

impl Replay {
    fn new(schema: Vec<FieldType>, batches: VecDeque<Batch>, empty: Batch) -> Replay {
        let counters = ScanCounters { drained: true, ..Default::default() };
        Replay { schema, batches, empty, counters, stats: ExecStats::default() }
    }
}

impl Executor for Replay {
    fn schema(&self) -> &[FieldType] {
        &self.schema
    }

    fn next_batch(&mut self, _hint: usize, _env: &mut ExecEnv<'_>) -> Result<BatchResult> {
        let start = Instant::now();
        let batch = self.batches.pop_front().unwrap_or_else(|| self.empty.clone());
        self.stats.record(start, batch.len());
        Ok(BatchResult { batch, drained: self.batches.is_empty() })
    }

    fn collect_stats(&self, _sink: &mut Vec<ExecStats>) {
        // The parts' executors below the final one report for themselves.
    }

    fn scan_counters(&self) -> &ScanCounters {
        &self.counters
    }
}

/// Split keys that cut `ranges` of `source` into at most `parts` parts of about equal key
/// and value bytes, found by reading the ranges once: a fallback for any [`ScanSource`]
/// (a source that knows its layout, like `rcop-snap`'s snapshot, offers keys without a
/// scan). The keys fall on a grid of 64 pairs.
///
/// # Errors
///
/// The source's [`ScanError`].
pub fn scan_split_keys(
    source: &mut dyn ScanSource,
    ranges: &[KeyRange],
    parts: usize,
) -> std::result::Result<Vec<Vec<u8>>, ScanError> {
    let mut candidates: Vec<(Vec<u8>, u64)> = Vec::new();
    let mut batch = KvBatch::new();
    let (mut in_group, mut weight) = (0usize, 0u64);
    for r in ranges {
        source.start(r, false)?;
        loop {
            batch.clear();
            let status = source.next_batch(BATCH_MAX_SIZE, &mut batch)?;
            for (k, v) in batch.iter() {
                if in_group == 0 {
                    candidates.push((k.to_vec(), 0));
                }
                weight += (k.len() + v.len()) as u64;
                in_group += 1;
                if in_group == SCAN_SPLIT_GROUP {
                    if let Some(last) = candidates.last_mut() {
                        last.1 = weight;
                    }
                    in_group = 0;
                    weight = 0;
                }
            }
            if status == ScanStatus::Done {
                break;
            }
        }
    }
    if let Some(last) = candidates.last_mut()
        && in_group > 0
    {
        last.1 = weight;
    }
    Ok(pick_split_keys(candidates, parts))
}

/// At most `parts - 1` split keys from `(key, weight)` candidates (any order; the weight is
/// that of the data from the key to the next candidate) that cut the weight into parts as
/// equal as the candidates allow. Each key starts a part; none repeats.
pub fn pick_split_keys(mut candidates: Vec<(Vec<u8>, u64)>, parts: usize) -> Vec<Vec<u8>> {
    if parts < 2 || candidates.len() < 2 {
        return Vec::new();
    }
    candidates.sort_by(|a, b| a.0.cmp(&b.0));
    let total: u64 = candidates.iter().map(|c| c.1).fold(0u64, u64::saturating_add);
    let parts_u = parts as u64;
    let mut keys: Vec<Vec<u8>> = Vec::with_capacity(parts - 1);
    let mut before = 0u64;
    let mut next = 1u64;
    for (i, (key, w)) in candidates.iter().enumerate() {
        // `before` is the weight of everything before `key`.
        if i > 0 && next < parts_u {
            let target = (u128::from(total) * u128::from(next) / u128::from(parts_u)) as u64;
            if before >= target && keys.last().is_none_or(|k| k < key) {
                keys.push(key.clone());
                while next < parts_u
                    && before >= (u128::from(total) * u128::from(next) / u128::from(parts_u)) as u64
                {
                    next += 1;
                }
            }
        }
        before = before.saturating_add(*w);
    }
    keys
}

impl MemStore {
    /// Split keys that cut `ranges` of this store into at most `parts` parts of about
    /// equal bytes (see [`scan_split_keys`]).
    pub fn split_keys(&self, ranges: &[KeyRange], parts: usize) -> Vec<Vec<u8>> {
        scan_split_keys(&mut self.scanner(), ranges, parts).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kr(s: &str, e: &str) -> KeyRange {
        KeyRange::new(s.as_bytes().to_vec(), e.as_bytes().to_vec())
    }

    #[test]
    fn cut_splits_ranges_at_keys_and_drops_empty_parts() {
        let keys: Vec<Vec<u8>> =
            ["b", "d", "d2", "x"].iter().map(|k| k.as_bytes().to_vec()).collect();
        let parts = cut(&[kr("a", "c"), kr("d", "e"), kr("f", "")], &keys);
        let shown: Vec<Vec<(String, String, usize)>> = parts
            .iter()
            .map(|p| {
                p.ranges
                    .iter()
                    .zip(&p.origin)
                    .map(|(r, &o)| {
                        (
                            String::from_utf8(r.start.clone()).unwrap(),
                            String::from_utf8(r.end.clone()).unwrap(),
                            o,
                        )
                    })
                    .collect()
            })
            .collect();
        let s = |a: &str, b: &str, o| (a.to_string(), b.to_string(), o);
        assert_eq!(
            shown,
            vec![
                vec![s("a", "b", 0)],
                vec![s("b", "c", 0)],
                vec![s("d", "d2", 1)],
                vec![s("d2", "e", 1), s("f", "x", 2)],
                vec![s("x", "", 2)],
            ]
        );
        // No keys: one part.
        assert_eq!(cut(&[kr("a", "c"), kr("d", "e")], &[]).len(), 1);
    }

    #[test]
    fn picked_keys_balance_weights() {
        let c: Vec<(Vec<u8>, u64)> = (0u8..100).map(|i| (vec![i], 1)).collect();
        assert_eq!(pick_split_keys(c.clone(), 4), vec![vec![25], vec![50], vec![75]]);
        assert_eq!(pick_split_keys(c.clone(), 1), Vec::<Vec<u8>>::new());
        // One heavy candidate: it gets a part of its own, no key twice.
        let mut heavy = c;
        heavy[10].1 = 1000;
        let keys = pick_split_keys(heavy, 3);
        assert_eq!(keys, vec![vec![11]]);
    }
}
