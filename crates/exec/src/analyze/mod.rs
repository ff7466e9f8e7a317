//! The analyze request (`coprocessor.Request.tp` 104, tipb `AnalyzeReq`): the statistics
//! TiDB's ANALYZE collects from every region, computed as TiKV computes them
//! (`src/coprocessor/statistics/`).
//!
//! - **TypeFullSampling** (statistics version 2, what current TiDB sends for tables):
//!   [`sample`] scans the rows and keeps a weighted reservoir of whole rows (or a Bernoulli
//!   sample at `sample_rate`), with an FM sketch, a null count and a total size per column
//!   and per column group.
//! - **TypeIndex / TypeCommonHandle**: [`index`] reads the index (or common-handle record)
//!   keys in order and builds an equal-depth histogram, a count-min sketch (with a TopN in
//!   version 2) and an FM sketch of the key's first `num_columns` datums.
//! - **TypeColumn / TypeMixed** (statistics version 1): per-column sample collectors and the
//!   int handle's histogram; Mixed adds the common handle's index statistics.
//!
//! Sizes that come from the request are bounded ([`MAX_SAMPLE_SIZE`] …) and everything the
//! request builds is accounted against [`ExecLimits::memory`]; the limits are checked
//! between batches. Sampling draws from a seeded generator: the same request, data and seed
//! give the same bytes.

mod hash;
mod index;
mod sample;
mod sketch;

use prost::Message;
use rcop_proto::tipb;

use crate::error::{Error, Feature, Result};
use crate::limits::ExecLimits;
use crate::scan::{KeyRange, ScanSource};

pub(crate) use hash::os_seed;

/// Most samples a request may ask for (`sample_size`).
pub const MAX_SAMPLE_SIZE: i64 = 10_000_000;
/// Largest FM sketch a request may ask for (`sketch_size`; TiDB sends 10,000).
pub const MAX_SKETCH_SIZE: i64 = 1 << 20;
/// Most histogram buckets a request may ask for (`bucket_size`).
pub const MAX_BUCKETS: i64 = 1 << 20;
/// Largest TopN a request may ask for (`top_n_size`).
pub const MAX_TOP_N: i64 = 1 << 20;
/// Most count-min sketch counters (`cmsketch_depth × cmsketch_width`; TiDB's own limit is
/// 1,258,291).
pub const MAX_CMSKETCH_CELLS: i64 = 1 << 22;

/// Rows or keys read per batch (TiKV's `BATCH_MAX_SIZE`).
const BATCH: usize = crate::exec::BATCH_MAX_SIZE;

/// Runs an analyze request over `ranges` and returns the encoded response TiKV puts in
/// `coprocessor.Response.data`: an `AnalyzeColumnsResp` (TypeFullSampling, TypeColumn), an
/// `AnalyzeIndexResp` (TypeIndex, TypeCommonHandle) or an `AnalyzeMixedResp` (TypeMixed).
/// `seed` seeds the samplers.
///
/// # Errors
///
/// [`Error::InvalidRequest`] for a missing sub-request or a malformed one,
/// [`Error::TooLarge`] for a size past its bound, [`Error::Unsupported`] for
/// TypeSampleIndex (TiKV refuses it too), [`Error::Corrupt`] for undecodable keys or rows,
/// [`Error::Scan`] and [`Error::Aborted`] from the scan and the limits.
pub fn analyze(
    req: &tipb::AnalyzeReq,
    ranges: &[KeyRange],
    source: &mut dyn ScanSource,
    limits: &ExecLimits,
    seed: u64,
) -> Result<Vec<u8>> {
    let tp = tipb::AnalyzeType::try_from(req.tp.unwrap_or(0))
        .map_err(|_| Error::invalid(format!("unknown analyze type {}", req.tp.unwrap_or(0))))?;
    match tp {
        tipb::AnalyzeType::TypeIndex | tipb::AnalyzeType::TypeCommonHandle => {
            let idx = req
                .idx_req
                .as_ref()
                .ok_or_else(|| Error::invalid("analyze index without idx_req"))?;
            let common = tp == tipb::AnalyzeType::TypeCommonHandle;
            Ok(index::analyze_index(idx, common, ranges, source, limits)?.encode_to_vec())
        }
        tipb::AnalyzeType::TypeFullSampling => {
            let col = col_req(req)?;
            Ok(sample::full_sampling(col, ranges, source, limits, seed)?.encode_to_vec())
        }
        tipb::AnalyzeType::TypeColumn => {
            let col = col_req(req)?;
            let (cols, _) = sample::columns_v1(col, None, ranges, source, limits, seed)?;
            Ok(cols.encode_to_vec())
        }
        tipb::AnalyzeType::TypeMixed => {
            let col = col_req(req)?;
            let idx = req
                .idx_req
                .as_ref()
                .ok_or_else(|| Error::invalid("analyze mixed without idx_req"))?;
            let (cols, idx) = sample::columns_v1(col, Some(idx), ranges, source, limits, seed)?;
            Ok(tipb::AnalyzeMixedResp { columns_resp: Some(cols), index_resp: idx }.encode_to_vec())
        }
        tipb::AnalyzeType::TypeSampleIndex => {
            Err(Error::unsupported(Feature::RequestType, "analyze TypeSampleIndex (3)"))
        }
    }
}

fn col_req(req: &tipb::AnalyzeReq) -> Result<&tipb::AnalyzeColumnsReq> {
    req.col_req.as_ref().ok_or_else(|| Error::invalid("analyze columns without col_req"))
}

/// A request-supplied size checked against `0..=limit`.
fn bounded(what: &'static str, v: i64, limit: i64) -> Result<usize> {
    if v < 0 {
        return Err(Error::invalid(format!("negative {what}: {v}")));
    }
    if v > limit {
        return Err(Error::TooLarge {
            what,
            len: usize::try_from(v).unwrap_or(usize::MAX),
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
        });
    }
    Ok(usize::try_from(v).unwrap_or(usize::MAX))
}

/// The count-min sketch dimensions (`None` when either is absent or 0: no sketch).
fn cm_dims(depth: Option<i32>, width: Option<i32>) -> Result<Option<(usize, usize)>> {
    let d = bounded("cmsketch_depth", i64::from(depth.unwrap_or(0)), MAX_CMSKETCH_CELLS)?;
    let w = bounded("cmsketch_width", i64::from(width.unwrap_or(0)), MAX_CMSKETCH_CELLS)?;
    if d == 0 || w == 0 {
        return Ok(None);
    }
    let cells = (d as i64).saturating_mul(w as i64);
    bounded("cmsketch_depth × cmsketch_width", cells, MAX_CMSKETCH_CELLS)?;
    Ok(Some((d, w)))
}

#[cfg(test)]
mod tests;
