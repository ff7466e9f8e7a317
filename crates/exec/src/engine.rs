//! The engine: builds executors from a DAG request, runs the batch loop, encodes the
//! response.

use bytes::Bytes;
use prost::Message;
use rcop_proto::{REQ_TYPE_ANALYZE, REQ_TYPE_CHECKSUM, REQ_TYPE_DAG, coprocessor, tipb};

use crate::ctx::{EvalConfig, EvalContext};
use crate::encode;
use crate::error::{Error, Feature, Result};
use crate::exec::{
    AggregationExecutor, ExecEnv, ExecStats, Executor, IndexScanExecutor, LimitExecutor,
    PartitionTopNExecutor, ProjectionExecutor, SelectionExecutor, SimpleAggregationExecutor,
    StreamAggregationExecutor, TableScanExecutor, TopNExecutor,
};
use crate::expr::{self, DEFAULT_MAX_DEPTH};
use crate::limits::{Abort, ExecLimits};
use crate::scan::{KeyRange, ScanError, ScanSource};

/// The bytes a buffered response chunk costs beyond its rows (the `tipb::Chunk` and its
/// `Bytes` handle).
const CHUNK_OVERHEAD: usize = 64;

/// TiKV's first batch size (`BATCH_INITIAL_SIZE`).
pub const BATCH_INITIAL_SIZE: usize = 32;
/// TiKV's batch growth factor (`BATCH_GROW_FACTOR`).
pub const BATCH_GROW_FACTOR: usize = 2;
/// TiKV's largest batch size (`BATCH_MAX_SIZE`).
pub const BATCH_MAX_SIZE: usize = crate::exec::BATCH_MAX_SIZE;

/// Engine settings.
///
/// Non-exhaustive: start from [`EngineConfig::default`] and adjust with the `with_*` setters
/// (or assign the public fields).
///
/// ```
/// use rcop_exec::EngineConfig;
///
/// let config = EngineConfig::default().with_max_response_bytes(1 << 20);
/// assert_eq!(config.max_response_bytes, 1 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct EngineConfig {
    /// Deepest expression nesting accepted (deeper requests get an error).
    pub max_expr_depth: usize,
    /// Encoded chunk bytes after which a streaming request's page ends early (with
    /// `Response.range` set to where to resume).
    pub max_response_bytes: usize,
    /// Seed of the analyze samplers (tp 104). `None` (the default) draws a fresh seed from
    /// the operating system for every request, as TiKV does; a fixed seed makes a request
    /// over the same rows answer the same bytes (tests, differential checks).
    pub analyze_seed: Option<u64>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            max_expr_depth: DEFAULT_MAX_DEPTH,
            max_response_bytes: 64 << 20,
            analyze_seed: None,
        }
    }
}

impl EngineConfig {
    /// Sets [`max_expr_depth`](Self::max_expr_depth).
    #[must_use]
    pub fn with_max_expr_depth(mut self, depth: usize) -> Self {
        self.max_expr_depth = depth;
        self
    }

    /// Sets [`max_response_bytes`](Self::max_response_bytes).
    #[must_use]
    pub fn with_max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Sets [`analyze_seed`](Self::analyze_seed).
    #[must_use]
    pub fn with_analyze_seed(mut self, seed: u64) -> Self {
        self.analyze_seed = Some(seed);
        self
    }
}

/// What [`Engine::execute_dag`] produces.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DagOutput {
    /// The select response.
    pub response: tipb::SelectResponse,
    /// When the page ended before the ranges were exhausted: the interval scanned.
    pub scanned_range: Option<KeyRange>,
}

/// Runs coprocessor DAG requests. Immutable; one engine serves any number of requests.
#[derive(Debug, Clone, Default)]
pub struct Engine {
    config: EngineConfig,
}

/// The request field this engine refuses, if the request sets one: TiCI's versioned ranges
/// (`VersionedCoprocessor` only, as TiKV's `Coprocessor` path refuses them) and full-text
/// shard infos (TiFlash's). Answering such a request over `ranges` alone would be wrong.
pub fn unserved_field(req: &coprocessor::Request) -> Option<&'static str> {
    if !req.versioned_ranges.is_empty() {
        Some("versioned ranges")
    } else if !req.table_shard_infos.is_empty() {
        Some("full-text shard infos")
    } else {
        None
    }
}

/// A checksum request's response: the `ChecksumResponse`, or the error as TiKV answers it
/// (`other_error`; scan errors in their own fields).
fn checksum_response(
    req: &coprocessor::Request,
    ranges: &[KeyRange],
    source: &mut dyn ScanSource,
    limits: &ExecLimits,
) -> std::result::Result<coprocessor::Response, Abort> {
    let result = tipb::ChecksumRequest::decode(req.data.clone())
        .map_err(|e| Error::invalid(format!("undecodable ChecksumRequest: {e}")))
        .and_then(|c| crate::checksum::checksum(&c, ranges, source, limits));
    Ok(match result {
        Ok(out) => {
            coprocessor::Response { data: Bytes::from(out.encode_to_vec()), ..Default::default() }
        }
        Err(Error::Aborted(a)) => return Err(a),
        Err(Error::Scan(e)) => scan_error_response(e),
        Err(e) => coprocessor::Response { other_error: e.to_string(), ..Default::default() },
    })
}

/// An analyze request's response: the encoded analyze response, or the error as TiKV
/// answers it (`other_error`; scan errors in their own fields).
fn analyze_response(
    req: &coprocessor::Request,
    ranges: &[KeyRange],
    source: &mut dyn ScanSource,
    limits: &ExecLimits,
    seed: u64,
) -> std::result::Result<coprocessor::Response, Abort> {
    let result = tipb::AnalyzeReq::decode(req.data.clone())
        .map_err(|e| Error::invalid(format!("undecodable AnalyzeReq: {e}")))
        .and_then(|a| crate::analyze::analyze(&a, ranges, source, limits, seed));
    Ok(match result {
        Ok(data) => coprocessor::Response { data: Bytes::from(data), ..Default::default() },
        Err(Error::Aborted(a)) => return Err(a),
        Err(Error::Scan(e)) => scan_error_response(e),
        // The message names the request type: TiDB logs it beside the region.
        Err(e) => coprocessor::Response {
            other_error: format!("analyze request (tp {REQ_TYPE_ANALYZE}): {e}"),
            ..Default::default()
        },
    })
}

impl Engine {
    /// An engine with the given settings.
    pub fn new(config: EngineConfig) -> Self {
        Engine { config }
    }

    /// The settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Handles a `coprocessor.Request` reading through `source`: a DAG (tp 103), an analyze
    /// (tp 104, [`analyze`](crate::analyze)) or a checksum (tp 105,
    /// [`checksum`](crate::checksum)); other types answer `other_error`. Never panics:
    /// request and evaluation errors come back in `SelectResponse.error`, scan errors in
    /// `locked`, `region_error` or `other_error`.
    pub fn handle(
        &self,
        req: &coprocessor::Request,
        source: &mut dyn ScanSource,
    ) -> coprocessor::Response {
        // Without limits nothing aborts; should it, the reason is an `other_error`.
        self.handle_limited(req, source, &ExecLimits::default()).unwrap_or_else(|a| {
            coprocessor::Response { other_error: a.to_string(), ..Default::default() }
        })
    }

    /// [`handle`](Self::handle) under per-request limits: a deadline, a cancel flag and a
    /// memory budget (see [`ExecLimits`]), checked between batches and inside long kernels.
    /// Everything granted by the budget is given back before this returns.
    ///
    /// # Errors
    ///
    /// [`Abort`] when a limit stops the request; every other failure is in the response,
    /// as for [`handle`](Self::handle).
    pub fn handle_limited(
        &self,
        req: &coprocessor::Request,
        source: &mut dyn ScanSource,
        limits: &ExecLimits,
    ) -> std::result::Result<coprocessor::Response, Abort> {
        if let Some(field) = unserved_field(req) {
            return Ok(coprocessor::Response {
                other_error: format!("{field} are not served on the Coprocessor path"),
                ..Default::default()
            });
        }
        let ranges: Vec<KeyRange> = req
            .ranges
            .iter()
            .map(|r| KeyRange { start: r.start.to_vec(), end: r.end.to_vec() })
            .collect();
        if req.tp == REQ_TYPE_CHECKSUM {
            return checksum_response(req, &ranges, source, limits);
        }
        if req.tp == REQ_TYPE_ANALYZE {
            let seed = self.config.analyze_seed.unwrap_or_else(crate::analyze::os_seed);
            return analyze_response(req, &ranges, source, limits, seed);
        }
        if req.tp != REQ_TYPE_DAG {
            return Ok(coprocessor::Response {
                other_error: format!("unsupported coprocessor request type {}", req.tp),
                ..Default::default()
            });
        }
        let result = tipb::DagRequest::decode(req.data.clone())
            .map_err(|e| Error::invalid(format!("undecodable DAGRequest: {e}")))
            .and_then(|dag| {
                self.execute_dag_limited(&dag, &ranges, &PageLimits::of(req), limits, source)
            });
        Ok(match result {
            Ok(out) => coprocessor::Response {
                data: Bytes::from(out.response.encode_to_vec()),
                range: out.scanned_range.map(|r| coprocessor::KeyRange {
                    start: Bytes::from(r.start),
                    end: Bytes::from(r.end),
                }),
                ..Default::default()
            },
            Err(Error::Aborted(a)) => return Err(a),
            Err(Error::Scan(e)) => scan_error_response(e),
            Err(e) => coprocessor::Response {
                data: Bytes::from(error_response(&e).encode_to_vec()),
                ..Default::default()
            },
        })
    }

    /// Whether this engine can run `dag`: `Ok` when it builds, else the first thing it cannot
    /// run ([`Error::Unsupported`]) or why the DAG is malformed. The check is the engine's
    /// own builder run without data, so it accepts exactly what [`execute_dag`] runs.
    ///
    /// [`execute_dag`]: Self::execute_dag
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] naming the first unsupported executor, function, type,
    /// collation, aggregate or encoding; any other variant for a malformed DAG.
    pub fn check_dag(&self, dag: &tipb::DagRequest) -> Result<()> {
        let cfg = EvalConfig::from_dag(dag)?;
        let root = build_executors(dag, &[], &cfg, self.config.max_expr_depth)?;
        let offsets = output_offsets(dag, root.schema())?;
        if dag.encode_type() == tipb::EncodeType::TypeChunk {
            encode::check_chunk_types(&offsets, root.schema())?;
        }
        Ok(())
    }

    /// Runs a decoded DAG over `ranges`. `paging_size` 0 means no paging: the whole answer
    /// comes back in one response, whatever [`EngineConfig::max_response_bytes`] says.
    pub fn execute_dag(
        &self,
        dag: &tipb::DagRequest,
        ranges: &[KeyRange],
        paging_size: u64,
        source: &mut dyn ScanSource,
    ) -> Result<DagOutput> {
        self.execute_dag_with(
            dag,
            ranges,
            &PageLimits::default().with_paging_size(paging_size),
            source,
        )
    }

    /// Runs a decoded DAG over `ranges` under the request's page limits (see
    /// [`PageLimits`]): a page ends at `paging_size` rows, when a blocking executor has
    /// `paging_size` groups (TiKV's `PagingDrain`), at `paging_size_bytes` scanned bytes or
    /// `max_keys_read` scanned keys, each only where the scan can resume and no executor
    /// holds state the cut would lose; `Response.range` then says where to resume.
    pub fn execute_dag_with(
        &self,
        dag: &tipb::DagRequest,
        ranges: &[KeyRange],
        limits: &PageLimits,
        source: &mut dyn ScanSource,
    ) -> Result<DagOutput> {
        self.execute_dag_limited(dag, ranges, limits, &ExecLimits::default(), source)
    }

    /// [`execute_dag_with`](Self::execute_dag_with) under per-request [`ExecLimits`]. The
    /// buffered response chunks and the executors' state (hash-aggregation groups, TopN
    /// rows) are accounted against the memory budget; all of it is given back before this
    /// returns.
    ///
    /// # Errors
    ///
    /// [`Error::Aborted`] when a limit stops the request; any other error as
    /// [`execute_dag_with`](Self::execute_dag_with).
    pub fn execute_dag_limited(
        &self,
        dag: &tipb::DagRequest,
        ranges: &[KeyRange],
        limits: &PageLimits,
        exec_limits: &ExecLimits,
        source: &mut dyn ScanSource,
    ) -> Result<DagOutput> {
        let paging_size = limits.paging_size;
        let mut cfg = EvalConfig::from_dag(dag)?;
        cfg.paging_size = (paging_size > 0).then_some(paging_size);
        let mut root = build_executors(dag, ranges, &cfg, self.config.max_expr_depth)?;
        let schema = root.schema().to_vec();
        let offsets = output_offsets(dag, &schema)?;
        let chunked = dag.encode_type() == tipb::EncodeType::TypeChunk;
        if chunked {
            encode::check_chunk_types(&offsets, &schema)?;
        }
        // The answer is cut into pages only when the request pages: a non-paging request is
        // answered whole (TiDB reads `Response.range` only when it asked for paging).
        let byte_cap = if paging_size > 0 { self.config.max_response_bytes } else { usize::MAX };
        // TiKV's byte budget is paging only; the key ceiling applies to any request that
        // sets it (the client asked to be stopped there).
        let scanned_bytes_cap = if paging_size > 0 && limits.paging_size_bytes > 0 {
            limits.paging_size_bytes
        } else {
            u64::MAX
        };
        let keys_cap = if limits.max_keys_read > 0 { limits.max_keys_read } else { u64::MAX };
        let tz = cfg.tz.clone();
        let mut ctx = EvalContext::new(cfg).with_limits(exec_limits);
        ctx.check_limits()?;
        let mut env = ExecEnv { ctx: &mut ctx, source };
        let paging = usize::try_from(paging_size).unwrap_or(usize::MAX);
        let mut chunks = Vec::new();
        let (mut rows, mut bytes) = (0usize, 0usize);
        // The encoded chunks held for the response, as accounted against the budget.
        let mut chunks_accounted = 0usize;
        let mut batch_size = BATCH_INITIAL_SIZE;
        let stopped_early;
        loop {
            let mut hint = batch_size;
            if paging > 0 && rows < paging {
                hint = hint.min(paging - rows);
            }
            env.ctx.check_limits()?;
            let mut r = root.next_batch(hint, &mut env)?;
            if !r.batch.is_empty() {
                r.batch.ensure(&offsets, env.ctx)?;
                let data = encode::encode_rows(&r.batch, &offsets, &schema, &tz, chunked)?;
                rows += r.batch.len();
                bytes += data.len();
                env.ctx.account(&mut chunks_accounted, bytes + chunks.len() * CHUNK_OVERHEAD)?;
                chunks.push(tipb::Chunk {
                    rows_data: Some(Bytes::from(data)),
                    rows_meta: Vec::new(),
                });
            }
            if r.drained {
                // An aggregation that ended the page for paging (TiKV's `PagingDrain`)
                // resumes after the rows scanned.
                stopped_early = paging > 0 && root.paging_drained();
                break;
            }
            let counters = root.scan_counters();
            let page_full = (paging > 0 && rows >= paging)
                || bytes >= byte_cap
                || counters.scanned_bytes >= scanned_bytes_cap
                || counters.counts.iter().map(|&c| c.max(0) as u64).sum::<u64>() >= keys_cap;
            // A page can only end where the scan can resume and nothing is held back: never
            // while a blocking executor (aggregation, TopN) is emitting results of an
            // exhausted scan, nor with an open stream-aggregation group or partition.
            if page_full && !root.holds_state() && counters.scanned_range().is_some() {
                stopped_early = true;
                break;
            }
            batch_size = (batch_size * BATCH_GROW_FACTOR).min(BATCH_MAX_SIZE);
        }
        let counters = root.scan_counters();
        let scanned_range = if stopped_early { counters.scanned_range() } else { None };
        let mut response = tipb::SelectResponse {
            chunks,
            // As TiKV: the encoding asked for is echoed; everything but TypeChunk is encoded
            // as datums.
            encode_type: Some(dag.encode_type() as i32),
            output_counts: counters.counts.clone(),
            ..Default::default()
        };
        if dag.collect_execution_summaries == Some(true) {
            let mut stats: Vec<ExecStats> = Vec::new();
            root.collect_stats(&mut stats);
            response.execution_summaries = execution_summaries(&stats, &dag.executors);
        }
        let (warnings, count) = ctx.take_warnings();
        response.warnings = warnings;
        response.warning_count = Some(count as i64);
        // The caller encodes the response: a second copy of the chunks while it does.
        let mut response_accounted = 0;
        ctx.account(&mut response_accounted, response.encoded_len())?;
        ctx.release_memory();
        Ok(DagOutput { response, scanned_range })
    }
}

/// The ByItems' expressions, built, with their `desc` flags. Keys order (and partitions
/// compare) under their collation: one the engine cannot apply is an error.
pub(crate) fn by_items(
    items: &[tipb::ByItem],
    schema: &[crate::types::FieldType],
    cfg: &EvalConfig,
    depth: usize,
) -> Result<Vec<(expr::Node, bool)>> {
    let mut out = Vec::with_capacity(items.len());
    for b in items {
        let ex = b.expr.as_ref().ok_or_else(|| Error::invalid("ByItem without expr"))?;
        let key = expr::build(ex, schema, cfg, depth)?;
        crate::exec::require_collation(&key.ft_for_output())?;
        out.push((key, b.desc == Some(true)));
    }
    Ok(out)
}

/// The page limits of a `coprocessor.Request`.
///
/// Non-exhaustive: start from [`PageLimits::default`] (no paging, no limits) or
/// [`PageLimits::of`] and adjust with the `with_*` setters.
///
/// ```
/// use rcop_exec::PageLimits;
///
/// let limits = PageLimits::default().with_paging_size(128).with_paging_size_bytes(1 << 20);
/// assert_eq!((limits.paging_size, limits.paging_size_bytes, limits.max_keys_read), (128, 1 << 20, 0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PageLimits {
    /// Rows (or groups) per page; 0 disables paging.
    pub paging_size: u64,
    /// Scanned bytes (keys and values read) after which a paging request's page ends; 0
    /// for none. Ignored without paging, as in TiKV.
    pub paging_size_bytes: u64,
    /// Scanned keys after which any request stops with `Response.range` set; 0 for none.
    pub max_keys_read: u64,
}

impl PageLimits {
    /// The limits a request asks for (`paging_size` 10, `max_keys_read` 16,
    /// `paging_size_bytes` 17).
    pub fn of(req: &coprocessor::Request) -> PageLimits {
        PageLimits {
            paging_size: req.paging_size,
            paging_size_bytes: req.paging_size_bytes,
            max_keys_read: req.max_keys_read,
        }
    }

    /// Sets [`paging_size`](Self::paging_size).
    #[must_use]
    pub fn with_paging_size(mut self, rows: u64) -> Self {
        self.paging_size = rows;
        self
    }

    /// Sets [`paging_size_bytes`](Self::paging_size_bytes).
    #[must_use]
    pub fn with_paging_size_bytes(mut self, bytes: u64) -> Self {
        self.paging_size_bytes = bytes;
        self
    }

    /// Sets [`max_keys_read`](Self::max_keys_read).
    #[must_use]
    pub fn with_max_keys_read(mut self, keys: u64) -> Self {
        self.max_keys_read = keys;
        self
    }
}

/// The DAG's output offsets, checked against the root's schema (every output column must
/// have a type the encoders know).
pub(crate) fn output_offsets(
    dag: &tipb::DagRequest,
    schema: &[crate::types::FieldType],
) -> Result<Vec<usize>> {
    dag.output_offsets
        .iter()
        .map(|&o| {
            let o = o as usize;
            match schema.get(o) {
                Some(ft) => ft.eval_type().map(|_| o),
                None => Err(Error::invalid(format!(
                    "output offset {o} out of range (schema has {} columns)",
                    schema.len()
                ))),
            }
        })
        .collect()
}

/// The `SelectResponse` carrying an error.
pub fn error_response(e: &Error) -> tipb::SelectResponse {
    tipb::SelectResponse {
        error: Some(tipb::Error { code: Some(e.code()), msg: Some(e.to_string()) }),
        ..Default::default()
    }
}

/// The `execution_summaries` of a response: one per executor, in the DAG's order.
pub(crate) fn execution_summaries(
    stats: &[ExecStats],
    executors: &[tipb::Executor],
) -> Vec<tipb::ExecutorExecutionSummary> {
    stats
        .iter()
        .zip(executors)
        .map(|(s, e)| tipb::ExecutorExecutionSummary {
            time_processed_ns: Some(s.time_processed_ns),
            num_produced_rows: Some(s.num_produced_rows),
            num_iterations: Some(s.num_iterations),
            executor_id: e.executor_id.clone(),
            ..Default::default()
        })
        .collect()
}

pub(crate) fn scan_error_response(e: ScanError) -> coprocessor::Response {
    match e {
        ScanError::Locked(l) => coprocessor::Response { locked: Some(*l), ..Default::default() },
        ScanError::Region(r) => {
            coprocessor::Response { region_error: Some(*r), ..Default::default() }
        }
        ScanError::Storage(s) => coprocessor::Response { other_error: s, ..Default::default() },
    }
}

/// The column offsets a tipb expression reads (walked without recursion; offsets out of
/// range are ignored here and rejected when the expression is built).
fn tipb_refs(e: &tipb::Expr, out: &mut Vec<usize>) {
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        if x.tp == Some(201) {
            let val = x.val.as_deref().unwrap_or(&[]);
            if let Ok(o) = rcop_datum::codec::decode_i64(&mut rcop_datum::Reader::new(val))
                && let Ok(o) = usize::try_from(o)
            {
                out.push(o);
            }
        }
        stack.extend(x.children.iter());
    }
    out.sort_unstable();
    out.dedup();
}

fn exec_type_name(tp: i32) -> String {
    match tipb::ExecType::try_from(tp) {
        Ok(t) => format!("{} ({tp})", t.as_str_name()),
        Err(_) => format!("{tp}"),
    }
}

fn missing(what: &str) -> Error {
    Error::invalid(format!("executor without its {what} body"))
}

/// Most executors a DAG may chain (TiDB pushes down a handful).
pub const MAX_EXECUTORS: usize = 64;

/// Most columns a scan may read or a response may return (MySQL's table limit is 4096).
pub const MAX_COLUMNS: usize = 4096;

/// The executors the engine builds, by tipb `ExecType`; [`build_executors`] refuses every
/// other type before looking at its body, and the capability listing prints this table.
pub const EXECUTORS: &[tipb::ExecType] = &[
    tipb::ExecType::TypeTableScan,
    tipb::ExecType::TypeIndexScan,
    tipb::ExecType::TypeSelection,
    tipb::ExecType::TypeAggregation,
    tipb::ExecType::TypeStreamAgg,
    tipb::ExecType::TypeTopN,
    tipb::ExecType::TypeLimit,
    tipb::ExecType::TypeProjection,
];

/// The response encodings the engine writes. Any other `encode_type` is answered with
/// datums and echoed back, as TiKV does.
pub const ENCODE_TYPES: &[tipb::EncodeType] =
    &[tipb::EncodeType::TypeDefault, tipb::EncodeType::TypeChunk];

/// The scans (the first executor of a chain) among [`EXECUTORS`].
const SCANS: &[tipb::ExecType] = &[tipb::ExecType::TypeTableScan, tipb::ExecType::TypeIndexScan];

/// Builds the executor chain of a DAG (post-order list: scan first).
pub fn build_executors(
    dag: &tipb::DagRequest,
    ranges: &[KeyRange],
    cfg: &EvalConfig,
    depth: usize,
) -> Result<Box<dyn Executor>> {
    if dag.executors.len() > MAX_EXECUTORS {
        // Executors call into their child: an unbounded chain would overflow the stack.
        return Err(Error::invalid(format!(
            "DAG has {} executors, more than {MAX_EXECUTORS}",
            dag.executors.len()
        )));
    }
    if dag.output_offsets.len() > MAX_COLUMNS {
        return Err(Error::invalid(format!(
            "DAG asks for {} output columns, more than {MAX_COLUMNS}",
            dag.output_offsets.len()
        )));
    }
    for (i, e) in dag.executors.iter().enumerate() {
        let tp = e.tp.unwrap_or(-1);
        let known = |list: &[tipb::ExecType]| list.iter().any(|x| *x as i32 == tp);
        if !known(EXECUTORS) {
            return Err(Error::unsupported(Feature::Executor, exec_type_name(tp)));
        }
        if known(SCANS) != (i == 0) {
            return Err(Error::invalid(format!(
                "a scan must come first and only first, got {} at {i}",
                exec_type_name(tp)
            )));
        }
    }
    let mut it = dag.executors.iter();
    let first = it.next().ok_or_else(|| Error::invalid("DAG has no executors"))?;
    let mut root: Box<dyn Executor> = match first.tp.unwrap_or(-1) {
        0 => {
            let ts = first.tbl_scan.as_ref().ok_or_else(|| missing("tbl_scan"))?;
            if ts.columns.len() > MAX_COLUMNS {
                return Err(Error::invalid(format!(
                    "TableScan reads {} columns, more than {MAX_COLUMNS}",
                    ts.columns.len()
                )));
            }
            Box::new(TableScanExecutor::new(ts, ranges.to_vec(), cfg)?)
        }
        1 => {
            let is = first.idx_scan.as_ref().ok_or_else(|| missing("idx_scan"))?;
            if is.columns.len() > MAX_COLUMNS {
                return Err(Error::invalid(format!(
                    "IndexScan reads {} columns, more than {MAX_COLUMNS}",
                    is.columns.len()
                )));
            }
            Box::new(IndexScanExecutor::new(is, ranges.to_vec(), cfg)?)
        }
        tp => return Err(Error::unsupported(Feature::Executor, exec_type_name(tp))),
    };
    for e in it {
        let schema = root.schema().to_vec();
        root = match e.tp.unwrap_or(-1) {
            2 => {
                let s = e.selection.as_ref().ok_or_else(|| missing("selection"))?;
                let conds = s
                    .conditions
                    .iter()
                    .map(|c| expr::build(c, &schema, cfg, depth))
                    .collect::<Result<_>>()?;
                Box::new(SelectionExecutor::new(root, conds))
            }
            11 => {
                let p = e.projection.as_ref().ok_or_else(|| missing("projection"))?;
                let mut refs = Vec::new();
                p.exprs.iter().for_each(|x| tipb_refs(x, &mut refs));
                root.prefetch_hint(&refs);
                let exprs = p
                    .exprs
                    .iter()
                    .map(|c| expr::build(c, &schema, cfg, depth))
                    .collect::<Result<_>>()?;
                Box::new(ProjectionExecutor::new(root, exprs))
            }
            tp @ (3 | 6) => {
                let a = e.aggregation.as_ref().ok_or_else(|| missing("aggregation"))?;
                // A selection below decodes its own columns ahead, not the aggregation's: the
                // aggregation decodes those for the rows the selection kept, straight into
                // dense columns (`Batch::ensure_compact`), where decoding them for every row
                // ahead would then copy the kept rows together (Q1 under callgrind, dense
                // decoding in both: 1,690 instructions a row with the hint, 1,653 without).
                root.prefetch_hint(&[]);
                // As TiKV: no GROUP BY is simple aggregation whatever the type.
                if a.group_by.is_empty() {
                    Box::new(SimpleAggregationExecutor::new(root, a, cfg, depth)?)
                } else if tp == 6 {
                    Box::new(StreamAggregationExecutor::new(root, a, cfg, depth)?)
                } else {
                    Box::new(AggregationExecutor::new(root, a, cfg, depth)?)
                }
            }
            4 => {
                let t = e.top_n.as_ref().ok_or_else(|| missing("topN"))?;
                if t.order_by.is_empty() {
                    // TiKV: "Missing Top N column".
                    return Err(Error::invalid("TopN without order_by"));
                }
                let order = by_items(&t.order_by, &schema, cfg, depth)?;
                let limit = t.limit.unwrap_or(0);
                if t.partition_by.is_empty() {
                    Box::new(
                        TopNExecutor::new(root, order, limit).with_paging_size(cfg.paging_size),
                    )
                } else {
                    let parts = by_items(&t.partition_by, &schema, cfg, depth)?;
                    let parts = parts.into_iter().map(|(k, _)| k).collect();
                    Box::new(
                        PartitionTopNExecutor::new(root, parts, order, limit)
                            .with_paging_size(cfg.paging_size),
                    )
                }
            }
            5 => {
                let l = e.limit.as_ref().ok_or_else(|| missing("limit"))?;
                if !l.truncate_key_expr.is_empty() {
                    // TiDB's prefix ("rank") limit: rows past the limit that share the last
                    // row's prefix key. Not run, so refused rather than ignored.
                    return Err(Error::unsupported(
                        Feature::Executor,
                        "Limit with truncate_key_expr (rank limit)",
                    ));
                }
                let limit = l.limit.unwrap_or(0);
                if l.partition_by.is_empty() {
                    Box::new(LimitExecutor::new(root, limit))
                } else {
                    // As TiKV: a partition TopN without order.
                    let parts = by_items(&l.partition_by, &schema, cfg, depth)?;
                    let parts = parts.into_iter().map(|(k, _)| k).collect();
                    Box::new(
                        PartitionTopNExecutor::new(root, parts, Vec::new(), limit)
                            .with_paging_size(cfg.paging_size),
                    )
                }
            }
            tp => return Err(Error::unsupported(Feature::Executor, exec_type_name(tp))),
        };
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::MemStore;

    #[test]
    fn unserved_request_fields_and_types_answer_other_error() {
        let engine = Engine::new(EngineConfig::default());
        let store = MemStore::from_pairs([(b"k".to_vec(), b"v".to_vec())]);
        let base = coprocessor::Request { tp: REQ_TYPE_DAG, ..Default::default() };
        let versioned = coprocessor::Request {
            versioned_ranges: vec![Bytes::from_static(b"\x0a\x00")],
            ..base.clone()
        };
        let resp = engine.handle(&versioned, &mut store.scanner());
        assert_eq!(resp.other_error, "versioned ranges are not served on the Coprocessor path");
        let shards = coprocessor::Request {
            table_shard_infos: vec![coprocessor::TableShardInfos::default()],
            ..base.clone()
        };
        assert!(engine.handle(&shards, &mut store.scanner()).other_error.contains("full-text"));
        let other = coprocessor::Request { tp: 200, ..base };
        assert_eq!(
            engine.handle(&other, &mut store.scanner()).other_error,
            "unsupported coprocessor request type 200"
        );
    }
}
