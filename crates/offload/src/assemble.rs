//! Answering a non-paging request whole when the worker cut it into pages.
//!
//! The node forwards every DAG with `paging_size = u32::MAX` (upstream's re-assembly), so a
//! worker ends a response at its `cop-max-resp-size` and sets `Response.range`. TiDB reads
//! `range` only on paging requests: a non-paging request's response is taken as the whole
//! answer, so the node resumes from `range` and concatenates the pages before answering.
//!
//! Resuming reuses the envelope's mem-data and change set (the same snapshot, no second
//! export) with the request's ranges narrowed to what is left, and a Limit lowered by the
//! rows already returned. Pages concatenate as TiDB would have read them from paging:
//! chunks in order, `output_counts` per original range, warnings and summaries added up.

use bytes::Bytes;
use prost::Message;
use rcop_proto::coprocessor::{KeyRange, Request, Response};
use rcop_proto::kvrpcpb::ExecDetailsV2;
use rcop_proto::tipb::{self, DagRequest, ExecType, SelectResponse};

/// Most pages one answer is assembled from (a worker whose pages do not shrink the ranges
/// is caught by the progress check long before).
pub(crate) const MAX_PAGES: u32 = 100_000;

/// How a cut answer is resumed.
#[derive(Debug)]
pub(crate) struct Resume {
    dag: DagRequest,
    desc: bool,
    /// Indices of the DAG's Limit executors.
    limits: Vec<usize>,
    output_columns: usize,
}

impl Resume {
    /// The plan for `dag`, or why its cut answers cannot be resumed exactly.
    pub(crate) fn new(dag: &DagRequest) -> Result<Resume, String> {
        let desc = dag.executors.first().is_some_and(|e| match e.tp() {
            ExecType::TypeTableScan => e.tbl_scan.as_ref().is_some_and(|t| t.desc()),
            ExecType::TypeIndexScan => e.idx_scan.as_ref().is_some_and(|i| i.desc()),
            _ => false,
        });
        let limits: Vec<usize> = dag
            .executors
            .iter()
            .enumerate()
            .filter(|(_, e)| e.tp() == ExecType::TypeLimit)
            .map(|(i, _)| i)
            .collect();
        // Rows returned equal rows out of a Limit only when nothing after it drops rows.
        if let Some(&first) = limits.first()
            && dag
                .executors
                .iter()
                .skip(first + 1)
                .any(|e| !matches!(e.tp(), ExecType::TypeLimit | ExecType::TypeProjection))
        {
            return Err("a Limit under another executor".into());
        }
        Ok(Resume { dag: dag.clone(), desc, limits, output_columns: dag.output_offsets.len() })
    }

    /// The request for the rest of the answer after a page that returned `rows` rows in
    /// all so far and stopped at `scanned`, with `ranges` still to go; `None` when nothing
    /// is left. The second value is how many of `ranges` the page finished (they lead in
    /// ascending scans).
    pub(crate) fn next(
        &self,
        base: &Request,
        ranges: &[KeyRange],
        scanned: &KeyRange,
        rows: u64,
    ) -> Result<Option<(Request, usize)>, String> {
        let (rest, finished) = if self.desc {
            (ranges_below(ranges, &scanned.start), 0)
        } else {
            ranges_from(ranges, &scanned.end)
        };
        if rest.is_empty() {
            return Ok(None);
        }
        if rest.as_slice() == ranges {
            return Err("the page range does not advance".into());
        }
        let mut dag = self.dag.clone();
        for &i in &self.limits {
            let Some(limit) = dag.executors.get_mut(i).and_then(|e| e.limit.as_mut()) else {
                continue;
            };
            let left = limit.limit().saturating_sub(rows);
            if left == 0 {
                return Ok(None);
            }
            limit.limit = Some(left);
        }
        let data = if self.limits.is_empty() {
            base.data.clone()
        } else {
            Bytes::from(dag.encode_to_vec())
        };
        Ok(Some((Request { data, ranges: rest, ..base.clone() }, finished)))
    }

    /// The DAG's output columns when the rows returned must be counted (to lower a Limit);
    /// `None` when nothing reads the count, so pages are not walked for it.
    pub(crate) fn counted_columns(&self) -> Option<usize> {
        (!self.limits.is_empty()).then_some(self.output_columns)
    }
}

/// Whether `end` (empty: unbounded) is at or before `key`.
fn ends_by(end: &[u8], key: &[u8]) -> bool {
    !end.is_empty() && end <= key
}

/// Ascending: the parts of `ranges` at or after `key`, and how many ranges ended before it.
fn ranges_from(ranges: &[KeyRange], key: &[u8]) -> (Vec<KeyRange>, usize) {
    let finished = ranges.iter().take_while(|r| ends_by(&r.end, key)).count();
    let rest = ranges
        .iter()
        .skip(finished)
        .map(|r| {
            let start =
                if r.start.as_ref() < key { Bytes::copy_from_slice(key) } else { r.start.clone() };
            KeyRange { start, end: r.end.clone() }
        })
        .collect();
    (rest, finished)
}

/// Descending: the parts of `ranges` before `key`.
fn ranges_below(ranges: &[KeyRange], key: &[u8]) -> Vec<KeyRange> {
    ranges
        .iter()
        .filter(|r| r.start.as_ref() < key)
        .map(|r| {
            let end = if r.end.is_empty() || key < r.end.as_ref() {
                Bytes::copy_from_slice(key)
            } else {
                r.end.clone()
            };
            KeyRange { start: r.start.clone(), end }
        })
        .collect()
}

/// The pages of one answer, merged.
#[derive(Debug)]
pub(crate) struct Assembled {
    first: Response,
    select: SelectResponse,
    /// Encoded bytes of the pages' `SelectResponse`s so far.
    pub(crate) bytes: u64,
    /// Rows returned so far (counted only when a Limit needs it, else 0).
    pub(crate) rows: u64,
    /// Index of the first original range the next page's `output_counts` describe.
    offset: usize,
    max_warnings: usize,
}

impl Assembled {
    /// Starts from the first page.
    pub(crate) fn new(
        mut first: Response,
        dag: &DagRequest,
        counted_columns: Option<usize>,
    ) -> Result<Assembled, String> {
        let data = std::mem::take(&mut first.data);
        let bytes = data.len() as u64;
        let select = SelectResponse::decode(data).map_err(|e| format!("page 1: {e}"))?;
        let rows = count(&select, counted_columns)?;
        first.range = None;
        let max_warnings = dag.max_warning_count.map_or(64, |n| usize::try_from(n).unwrap_or(64));
        Ok(Assembled { first, select, bytes, rows, offset: 0, max_warnings })
    }

    /// Adds the next page, whose `output_counts` start at original range
    /// `offset + finished` (`finished`: ranges the previous page completed).
    pub(crate) fn push(
        &mut self,
        page: &Response,
        finished: usize,
        counted_columns: Option<usize>,
    ) -> Result<(), String> {
        let part = SelectResponse::decode(page.data.clone()).map_err(|e| e.to_string())?;
        self.bytes += page.data.len() as u64;
        self.rows += count(&part, counted_columns)?;
        self.offset += finished;
        merge_select(&mut self.select, part, self.offset, self.max_warnings);
        if let Some(d) = &page.exec_details_v2 {
            add_exec_details(self.first.exec_details_v2.get_or_insert_with(Default::default), d);
        }
        Ok(())
    }

    /// The whole answer.
    pub(crate) fn finish(mut self) -> Response {
        self.first.data = Bytes::from(self.select.encode_to_vec());
        self.first
    }
}

/// The rows of `select` when `columns` says they are counted, else 0.
fn count(select: &SelectResponse, columns: Option<usize>) -> Result<u64, String> {
    columns.map_or(Ok(0), |n| rcop_exec::count_rows(select, n).map_err(|e| e.to_string()))
}

/// Appends `part` to `into`: chunks after chunks, per-range counts aligned at `offset`,
/// warnings up to `max_warnings`, executor summaries added.
pub(crate) fn merge_select(
    into: &mut SelectResponse,
    part: SelectResponse,
    offset: usize,
    max_warnings: usize,
) {
    into.chunks.extend(part.chunks);
    for (j, c) in part.output_counts.into_iter().enumerate() {
        let i = offset + j;
        if into.output_counts.len() <= i {
            into.output_counts.resize(i + 1, 0);
        }
        if let Some(slot) = into.output_counts.get_mut(i) {
            *slot += c;
        }
    }
    let room = max_warnings.saturating_sub(into.warnings.len());
    into.warnings.extend(part.warnings.into_iter().take(room));
    into.warning_count = Some(into.warning_count.unwrap_or(0) + part.warning_count.unwrap_or(0));
    for (a, b) in into.execution_summaries.iter_mut().zip(part.execution_summaries) {
        add_summary(a, &b);
    }
}

fn add_summary(a: &mut tipb::ExecutorExecutionSummary, b: &tipb::ExecutorExecutionSummary) {
    let sum = |x: &mut Option<u64>, y: Option<u64>| *x = Some(x.unwrap_or(0) + y.unwrap_or(0));
    sum(&mut a.time_processed_ns, b.time_processed_ns);
    sum(&mut a.num_produced_rows, b.num_produced_rows);
    sum(&mut a.num_iterations, b.num_iterations);
}

fn add_exec_details(a: &mut ExecDetailsV2, b: &ExecDetailsV2) {
    if let (Some(x), Some(y)) = (a.scan_detail_v2.as_mut(), b.scan_detail_v2.as_ref()) {
        x.processed_versions += y.processed_versions;
        x.processed_versions_size += y.processed_versions_size;
        x.total_versions += y.total_versions;
        x.get_snapshot_nanos += y.get_snapshot_nanos;
    }
    if let (Some(x), Some(y)) = (a.time_detail.as_mut(), b.time_detail.as_ref()) {
        x.wait_wall_time_ms += y.wait_wall_time_ms;
        x.process_wall_time_ms += y.process_wall_time_ms;
        x.kv_read_wall_time_ms += y.kv_read_wall_time_ms;
        x.total_rpc_wall_time_ns += y.total_rpc_wall_time_ns;
    }
    if let (Some(x), Some(y)) = (a.time_detail_v2.as_mut(), b.time_detail_v2.as_ref()) {
        x.wait_wall_time_ns += y.wait_wall_time_ns;
        x.process_wall_time_ns += y.process_wall_time_ns;
        x.total_rpc_wall_time_ns += y.total_rpc_wall_time_ns;
    }
}

/// Whether a worker's answer says it cannot run the DAG: our engine's
/// `SelectResponse.error` "unsupported …", or TiKV's "… is not supported" (which it reports
/// in `other_error`).
pub(crate) fn unsupported_message(response: &Response) -> Option<String> {
    if response.other_error.contains("not supported") {
        return Some(response.other_error.clone());
    }
    if response.region_error.is_some() || response.locked.is_some() {
        return None;
    }
    let select = SelectResponse::decode(response.data.clone()).ok()?;
    let msg = select.error?.msg?;
    msg.starts_with("unsupported ").then_some(msg)
}

/// Whether the response carries an error of any kind (then it is relayed as it is).
pub(crate) fn is_error(response: &Response) -> bool {
    response.region_error.is_some() || response.locked.is_some() || !response.other_error.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kr(a: &str, b: &str) -> KeyRange {
        KeyRange {
            start: Bytes::copy_from_slice(a.as_bytes()),
            end: Bytes::copy_from_slice(b.as_bytes()),
        }
    }

    #[test]
    fn ascending_resume_narrows_and_counts_finished_ranges() {
        let ranges = [kr("a", "c"), kr("d", "f"), kr("g", "")];
        let (rest, done) = ranges_from(&ranges, b"e\0");
        assert_eq!(done, 1);
        assert_eq!(rest, [kr("e\0", "f"), kr("g", "")]);
        let (rest, done) = ranges_from(&ranges, b"c");
        assert_eq!((rest.len(), done), (2, 1));
        assert_eq!(rest[0], kr("d", "f"));
        let (rest, done) = ranges_from(&ranges, b"zz");
        assert_eq!((rest, done), (vec![kr("zz", "")], 2));
    }

    #[test]
    fn descending_resume_keeps_what_lies_below() {
        let ranges = [kr("a", "c"), kr("d", "f"), kr("g", "i")];
        assert_eq!(ranges_below(&ranges, b"e"), [kr("a", "c"), kr("d", "e")]);
        assert_eq!(ranges_below(&ranges, b"d"), [kr("a", "c")]);
        assert!(ranges_below(&ranges, b"a").is_empty());
        assert_eq!(ranges_below(&[kr("a", "")], b"b"), [kr("a", "b")]);
    }

    #[test]
    fn limits_are_lowered_and_end_the_answer() {
        let exec = |tp: ExecType| tipb::Executor {
            tp: Some(tp as i32),
            limit: Some(Box::new(tipb::Limit { limit: Some(10), ..Default::default() })),
            ..Default::default()
        };
        let dag = DagRequest {
            executors: vec![exec(ExecType::TypeTableScan), exec(ExecType::TypeLimit)],
            output_offsets: vec![0],
            ..Default::default()
        };
        let r = Resume::new(&dag).unwrap();
        let base = Request { ranges: vec![kr("a", "z")], ..Default::default() };
        let (next, _) = r.next(&base, &base.ranges, &kr("a", "m"), 4).unwrap().unwrap();
        let sent = DagRequest::decode(next.data).unwrap();
        assert_eq!(sent.executors[1].limit.as_ref().unwrap().limit, Some(6));
        assert_eq!(next.ranges, [kr("m", "z")]);
        assert!(r.next(&base, &base.ranges, &kr("a", "m"), 10).unwrap().is_none());
        // A page that does not advance is refused instead of looping.
        assert!(r.next(&base, &base.ranges, &kr("a", "a"), 1).is_err());
        // A Limit under a Selection cannot be resumed exactly.
        let mut bad = dag.clone();
        bad.executors.push(exec(ExecType::TypeSelection));
        assert!(Resume::new(&bad).is_err());
    }

    #[test]
    fn merged_counts_align_with_the_original_ranges() {
        let sel = |counts: Vec<i64>, w: i64| SelectResponse {
            output_counts: counts,
            warning_count: Some(w),
            chunks: vec![tipb::Chunk {
                rows_data: Some(Bytes::from_static(b"x")),
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut a = sel(vec![5], 1);
        merge_select(&mut a, sel(vec![3, 4], 2), 0, 64);
        merge_select(&mut a, sel(vec![7], 0), 1, 64);
        assert_eq!(a.output_counts, [8, 11]);
        assert_eq!(a.chunks.len(), 3);
        assert_eq!(a.warning_count, Some(3));
    }
}
