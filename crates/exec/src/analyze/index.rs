//! Index analyze (TypeIndex, TypeCommonHandle): histogram, count-min sketch, TopN and FM
//! sketch of the index values, read from the keys in key order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rcop_datum::key;
use rcop_proto::tipb;

use super::sketch::{CmSketch, FmSketch, Histogram};
use super::{BATCH, MAX_BUCKETS, MAX_SKETCH_SIZE, MAX_TOP_N, bounded, cm_dims};
use crate::error::{Error, Result};
use crate::limits::{ExecLimits, Guard};
use crate::scan::{KeyRange, KvBatch, ScanSource, ScanStatus};

/// Statistics version 2 (bucket NDVs and the TopN); anything else is version 1.
const STATS_V2: i32 = 2;
/// Bytes a TopN candidate costs beyond its value.
const TOP_N_ENTRY_BYTES: usize = 48;

/// The statistics of one sequence of sorted index values (TiKV's `handle_index` state, and
/// the common-handle part of a mixed analyze).
#[derive(Debug)]
pub(super) struct IndexStats {
    hist: Histogram,
    cms: Option<CmSketch>,
    fms: FmSketch,
    v2: bool,
    top_n_size: usize,
    /// The value being counted and its occurrences so far.
    cur: (u32, Vec<u8>),
    /// The most frequent values seen, least frequent on top.
    top_n: BinaryHeap<Reverse<(u32, Vec<u8>)>>,
    top_n_bytes: usize,
}

impl IndexStats {
    /// Checks the request's sizes; the count-min sketch's counters are accounted (`grow`)
    /// before they are allocated.
    pub(super) fn new(
        req: &tipb::AnalyzeIndexReq,
        grow: &mut dyn FnMut(usize) -> Result<()>,
    ) -> Result<IndexStats> {
        let buckets = bounded("bucket_size", req.bucket_size.unwrap_or(0), MAX_BUCKETS)?;
        let sketch = bounded("sketch_size", req.sketch_size.unwrap_or(0), MAX_SKETCH_SIZE)?;
        let top_n_size = bounded("top_n_size", i64::from(req.top_n_size.unwrap_or(0)), MAX_TOP_N)?;
        let dims = cm_dims(req.cmsketch_depth, req.cmsketch_width)?;
        let cm_bytes = dims.map_or(0, |(d, w)| CmSketch::bytes_for(d, w));
        grow(cm_bytes)?;
        let stats = IndexStats {
            hist: Histogram::new(buckets),
            cms: dims.and_then(|(d, w)| CmSketch::new(d, w)),
            fms: FmSketch::new(sketch),
            v2: req.version == Some(STATS_V2),
            top_n_size,
            cur: (0, Vec::new()),
            top_n: BinaryHeap::new(),
            top_n_bytes: 0,
        };
        Ok(stats)
    }

    /// Adds one value: `data` is the concatenated datums, `ends` where each prefix of 1,
    /// 2, … columns ends (the count-min sketch counts every prefix).
    pub(super) fn add(&mut self, data: Vec<u8>, ends: &[usize]) {
        if let Some(cms) = self.cms.as_mut() {
            for &e in ends {
                cms.insert(data.get(..e).unwrap_or(&data));
            }
        }
        self.fms.insert(&data);
        if !self.v2 {
            self.hist.append(&data, false);
            return;
        }
        self.hist.append(&data, true);
        if self.cur.1 == data {
            self.cur.0 = self.cur.0.saturating_add(1);
            return;
        }
        let done = std::mem::replace(&mut self.cur, (1, data));
        if done.0 > 0 {
            self.top_n_bytes += done.1.len() + TOP_N_ENTRY_BYTES;
            self.top_n.push(Reverse(done));
        }
        self.cut_top_n();
    }

    fn cut_top_n(&mut self) {
        if self.top_n.len() > self.top_n_size
            && let Some(Reverse((_, d))) = self.top_n.pop()
        {
            self.top_n_bytes = self.top_n_bytes.saturating_sub(d.len() + TOP_N_ENTRY_BYTES);
        }
    }

    /// What the statistics hold beyond the count-min counters.
    pub(super) fn mem_bytes(&self) -> usize {
        self.hist.mem_bytes()
            + self.fms.mem_bytes()
            + self.top_n_bytes
            + self.cur.1.len()
            + self.cms.as_ref().map_or(0, CmSketch::top_n_bytes)
    }

    pub(super) fn into_proto(mut self) -> tipb::AnalyzeIndexResp {
        if self.v2 {
            let last = std::mem::take(&mut self.cur);
            if last.0 > 0 {
                self.top_n_bytes += last.1.len() + TOP_N_ENTRY_BYTES;
                self.top_n.push(Reverse(last));
                self.cut_top_n();
            }
            if let Some(cms) = self.cms.as_mut() {
                // The heap's own order, as TiKV iterates it.
                for Reverse((count, data)) in self.top_n {
                    cms.sub(&data, count);
                    cms.push_to_top_n(data, u64::from(count));
                }
            }
        }
        tipb::AnalyzeIndexResp {
            hist: Some(self.hist.into_proto()),
            cms: self.cms.map(CmSketch::into_proto),
            collector: Some(tipb::SampleCollector {
                fm_sketch: Some(self.fms.to_proto()),
                ..Default::default()
            }),
        }
    }
}

/// A key without its API v2 keyspace prefix.
fn strip_keyspace(k: &[u8]) -> &[u8] {
    match k {
        [key::KEYSPACE_TXN, _, _, _, rest @ ..] => rest,
        _ => k,
    }
}

/// The encoded values of an index key (after table and index id), or of a common-handle
/// record key (after the table id).
fn key_values(k: &[u8], common_handle: bool) -> Result<&[u8]> {
    let k = strip_keyspace(k);
    Ok(if common_handle { key::split_record_key(k)?.1 } else { key::split_index_key(k)?.2 })
}

/// TiKV's `handle_index` over `ranges`.
pub(super) fn analyze_index(
    req: &tipb::AnalyzeIndexReq,
    common_handle: bool,
    ranges: &[KeyRange],
    source: &mut dyn ScanSource,
    limits: &ExecLimits,
) -> Result<tipb::AnalyzeIndexResp> {
    let num_columns = req.num_columns.unwrap_or(0);
    let num_columns = usize::try_from(num_columns)
        .map_err(|_| Error::invalid(format!("negative num_columns: {num_columns}")))?;
    let mut guard = Guard::new(limits);
    guard.check()?;
    let mut stats = IndexStats::new(req, &mut |b| Ok(guard.grow(b)?))?;
    let mut accounted = 0usize;
    let mut batch = KvBatch::new();
    let mut ends = Vec::new();
    for range in ranges {
        source.start(range, false)?;
        loop {
            guard.check()?;
            batch.clear();
            let status = source.next_batch(BATCH, &mut batch)?;
            for (k, _) in batch.iter() {
                let values = key_values(k, common_handle)?;
                let mut rest = values;
                ends.clear();
                for i in 0..num_columns {
                    if rest.is_empty() {
                        return Err(Error::invalid(format!(
                            "column {i} of {num_columns} is missing from an index key ({} value bytes)",
                            values.len()
                        )));
                    }
                    let (datum, tail) = rcop_datum::datum::split_datum(rest)?;
                    rest = tail;
                    ends.push(ends.last().copied().unwrap_or(0) + datum.len());
                }
                let len = ends.last().copied().unwrap_or(0);
                stats.add(values.get(..len).unwrap_or(values).to_vec(), &ends);
            }
            guard.resize(&mut accounted, stats.mem_bytes())?;
            if status == ScanStatus::Done {
                break;
            }
        }
    }
    Ok(stats.into_proto())
}
