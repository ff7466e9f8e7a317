//! Column analyze: TiKV's row sampler (TypeFullSampling, `RowSampleBuilder` with its
//! reservoir and Bernoulli collectors) and the version 1 per-column sample collectors
//! (TypeColumn, TypeMixed: `SampleBuilder`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::codec;
use rcop_datum::datum::flag;
use rcop_proto::tipb;

use super::hash::{Murmur3, Rng};
use super::index::IndexStats;
use super::sketch::{CmSketch, FmSketch, Histogram};
use super::{BATCH, MAX_BUCKETS, MAX_SAMPLE_SIZE, MAX_SKETCH_SIZE, bounded, cm_dims};
use crate::collation::Collation;
use crate::column::ColData;
use crate::ctx::{EvalConfig, EvalContext};
use crate::encode::encode_datum;
use crate::error::{Error, Result};
use crate::exec::{ExecEnv, Executor, TableScanExecutor};
use crate::limits::ExecLimits;
use crate::scan::{KeyRange, ScanSource};
use crate::types::FieldType;

/// Bytes a kept sample row costs beyond its values (its vectors and heap slot).
const ROW_OVERHEAD: usize = 64;
/// Bytes each value of a kept sample row costs beyond its bytes.
const VALUE_OVERHEAD: usize = 24;
/// A column id no column has: stands for a primary-key column the key holds only a prefix of.
const NO_COLUMN: i64 = i64::MIN;

/// TiKV's `is_string_like`: the types whose FM sketch hashes the collation key.
fn is_string_like(ft: &FieldType) -> bool {
    matches!(
        ft.tp,
        mt::VARCHAR
            | mt::VAR_STRING
            | mt::STRING
            | mt::BLOB
            | mt::TINY_BLOB
            | mt::MEDIUM_BLOB
            | mt::LONG_BLOB
    )
}

/// Receives the rows of a column scan.
trait RowSink {
    /// One row: each column's response datum, and for string-like columns the collation key
    /// of the value (the NULL datum for NULL), empty for the others.
    fn row(&mut self, vals: &[Vec<u8>], keys: &[Vec<u8>]) -> Result<()>;
    /// Bytes held, accounted after every batch.
    fn mem_bytes(&self) -> usize;
}

/// The columns of `columns_info`, read by a TableScan and encoded as TiKV encodes them.
struct RowReader {
    exec: TableScanExecutor,
    schema: Vec<FieldType>,
    collations: Vec<Option<Collation>>,
    offsets: Vec<usize>,
}

impl RowReader {
    fn new(req: &tipb::AnalyzeColumnsReq, ranges: &[KeyRange]) -> Result<RowReader> {
        if req.columns_info.is_empty() {
            return Err(Error::invalid("empty columns_info"));
        }
        // A primary-key column stored in the key only as a prefix is read from the row
        // (TiKV's `primary_prefix_column_ids`): its place in the key keeps a column id no
        // column has.
        let primary_column_ids = req
            .primary_column_ids
            .iter()
            .map(|id| if req.primary_prefix_column_ids.contains(id) { NO_COLUMN } else { *id })
            .collect();
        let ts = tipb::TableScan {
            columns: req.columns_info.clone(),
            primary_column_ids,
            ..Default::default()
        };
        let exec = TableScanExecutor::new(&ts, ranges.to_vec(), &EvalConfig::default())?;
        let schema = exec.schema().to_vec();
        let collations = schema
            .iter()
            .map(|ft| if is_string_like(ft) { ft.collation().map(Some) } else { Ok(None) })
            .collect::<Result<_>>()?;
        let offsets = (0..schema.len()).collect();
        Ok(RowReader { exec, schema, collations, offsets })
    }

    fn run(
        &mut self,
        ctx: &mut EvalContext,
        source: &mut dyn ScanSource,
        sink: &mut dyn RowSink,
    ) -> Result<()> {
        let n = self.schema.len();
        let (mut vals, mut keys) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        let tz = ctx.cfg.tz.clone();
        let mut accounted = 0usize;
        loop {
            ctx.check_limits()?;
            let mut env = ExecEnv { ctx: &mut *ctx, source: &mut *source };
            let mut r = self.exec.next_batch(BATCH, &mut env)?;
            r.batch.ensure(&self.offsets, ctx)?;
            for &row in &r.batch.logical {
                let row = row as usize;
                for i in 0..n {
                    let col = r
                        .batch
                        .decoded(i)
                        .ok_or_else(|| Error::invalid(format!("column {i} not decoded")))?;
                    let (v, k) = (&mut vals[i], &mut keys[i]);
                    v.clear();
                    k.clear();
                    encode_datum(col, row, &self.schema[i], &tz, v)?;
                    if let Some(coll) = self.collations[i] {
                        match &col.data {
                            ColData::Bytes(b) if col.valid.get(row) => coll.sort_key(b.get(row), k),
                            _ => k.push(flag::NIL),
                        }
                    }
                }
                sink.row(&vals, &keys)?;
            }
            ctx.account(&mut accounted, sink.mem_bytes())?;
            if r.drained {
                return Ok(());
            }
        }
    }
}

fn is_null(v: &[u8]) -> bool {
    v.first().is_none_or(|&f| f == flag::NIL)
}

fn row_bytes(row: &[Vec<u8>]) -> usize {
    ROW_OVERHEAD + row.iter().map(|v| v.len() + VALUE_OVERHEAD).sum::<usize>()
}

/// The kept rows: a reservoir of the `max` rows with the largest random weights, or a
/// Bernoulli sample.
enum Samples {
    Reservoir { max: usize, heap: BinaryHeap<Reverse<(i64, Vec<Vec<u8>>)>> },
    Bernoulli { rate: f64, rows: Vec<Vec<Vec<u8>>> },
}

/// TiKV's `BaseRowSampleCollector` with its reservoir or Bernoulli sampling.
struct RowSampler {
    groups: Vec<Vec<usize>>,
    string_like: Vec<bool>,
    null_counts: Vec<i64>,
    count: u64,
    fm: Vec<FmSketch>,
    total_sizes: Vec<i64>,
    rng: Rng,
    samples: Samples,
    sample_bytes: usize,
}

impl RowSink for RowSampler {
    fn row(&mut self, vals: &[Vec<u8>], keys: &[Vec<u8>]) -> Result<()> {
        self.count += 1;
        let n = vals.len();
        // Column groups of two or more columns: sizes and the FM sketch of the combined
        // value (single-column groups are copied from their column at the end).
        for (g, offsets) in self.groups.iter().enumerate() {
            if offsets.len() == 1 {
                continue;
            }
            let mut h = Murmur3::default();
            for &j in offsets {
                let v = &vals[j];
                if !is_null(v) {
                    self.total_sizes[n + g] += v.len() as i64 - 1;
                }
                h.write(if self.string_like[j] { &keys[j] } else { v });
            }
            self.fm[n + g].insert_hash(h.finish().0);
        }
        for (i, v) in vals.iter().enumerate() {
            if is_null(v) {
                self.null_counts[i] += 1;
                continue;
            }
            self.fm[i].insert(if self.string_like[i] { &keys[i] } else { v });
            self.total_sizes[i] += v.len() as i64 - 1;
        }
        match &mut self.samples {
            Samples::Reservoir { max, heap } => {
                if *max == 0 {
                    return Ok(());
                }
                let w = self.rng.weight();
                if heap.len() < *max {
                    self.sample_bytes += row_bytes(vals);
                    heap.push(Reverse((w, vals.to_vec())));
                } else if heap.peek().is_some_and(|Reverse((min, _))| *min < w) {
                    if let Some(Reverse((_, out))) = heap.pop() {
                        self.sample_bytes -= row_bytes(&out);
                    }
                    self.sample_bytes += row_bytes(vals);
                    heap.push(Reverse((w, vals.to_vec())));
                }
            }
            Samples::Bernoulli { rate, rows } => {
                if self.rng.unit() < *rate {
                    self.sample_bytes += row_bytes(vals);
                    rows.push(vals.to_vec());
                }
            }
        }
        Ok(())
    }

    fn mem_bytes(&self) -> usize {
        self.sample_bytes + self.fm.iter().map(FmSketch::mem_bytes).sum::<usize>()
    }
}

/// TypeFullSampling: TiKV's `RowSampleBuilder::collect_column_stats`.
pub(super) fn full_sampling(
    req: &tipb::AnalyzeColumnsReq,
    ranges: &[KeyRange],
    source: &mut dyn ScanSource,
    limits: &ExecLimits,
    seed: u64,
) -> Result<tipb::AnalyzeColumnsResp> {
    let max = bounded("sample_size", req.sample_size.unwrap_or(0), MAX_SAMPLE_SIZE)?;
    let sketch = bounded("sketch_size", req.sketch_size.unwrap_or(0), MAX_SKETCH_SIZE)?;
    let rate = req.sample_rate.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&rate) {
        return Err(Error::invalid(format!("sample_rate {rate} outside [0, 1]")));
    }
    let mut reader = RowReader::new(req, ranges)?;
    let n = reader.schema.len();
    let groups = req
        .column_groups
        .iter()
        .map(|g| {
            g.column_offsets
                .iter()
                .map(|&o| {
                    usize::try_from(o).ok().filter(|&o| o < n).ok_or_else(|| {
                        Error::invalid(format!("column group offset {o} outside the {n} columns"))
                    })
                })
                .collect::<Result<Vec<usize>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    let slots = n + groups.len();
    let mut sampler = RowSampler {
        string_like: reader.collations.iter().map(Option::is_some).collect(),
        groups,
        null_counts: vec![0; slots],
        count: 0,
        fm: vec![FmSketch::new(sketch); slots],
        total_sizes: vec![0; slots],
        rng: Rng::new(seed),
        samples: if max > 0 {
            Samples::Reservoir { max, heap: BinaryHeap::new() }
        } else {
            Samples::Bernoulli { rate, rows: Vec::new() }
        },
        sample_bytes: 0,
    };
    let mut ctx = EvalContext::new(EvalConfig::default()).with_limits(limits);
    reader.run(&mut ctx, source, &mut sampler)?;
    for (g, offsets) in sampler.groups.iter().enumerate() {
        if let [j] = offsets[..] {
            sampler.fm[n + g] = sampler.fm[j].clone();
            sampler.null_counts[n + g] = sampler.null_counts[j];
            sampler.total_sizes[n + g] = sampler.total_sizes[j];
        }
    }
    let samples = match sampler.samples {
        Samples::Reservoir { heap, .. } => heap
            .into_vec()
            .into_iter()
            .map(|Reverse((w, row))| tipb::RowSample {
                row: row.into_iter().map(Into::into).collect(),
                weight: Some(w),
            })
            .collect(),
        Samples::Bernoulli { rows, .. } => rows
            .into_iter()
            .map(|row| tipb::RowSample {
                row: row.into_iter().map(Into::into).collect(),
                weight: None,
            })
            .collect(),
    };
    let collector = tipb::RowSampleCollector {
        samples,
        null_counts: sampler.null_counts,
        count: Some(sampler.count as i64),
        fm_sketch: sampler.fm.iter().map(FmSketch::to_proto).collect(),
        total_size: sampler.total_sizes,
    };
    Ok(tipb::AnalyzeColumnsResp { row_collector: Some(collector), ..Default::default() })
}

/// TiKV's version 1 `SampleCollector`: one column's reservoir of values (Algorithm R), FM
/// and count-min sketches, counts and size.
struct SampleCollector {
    samples: Vec<Vec<u8>>,
    null_count: u64,
    count: u64,
    max: usize,
    fm: FmSketch,
    cms: Option<CmSketch>,
    total_size: u64,
    bytes: usize,
}

impl SampleCollector {
    fn collect(&mut self, data: Vec<u8>, rng: &mut Rng) {
        if is_null(&data) {
            self.null_count += 1;
            return;
        }
        self.count += 1;
        self.fm.insert(&data);
        if let Some(c) = self.cms.as_mut() {
            c.insert(&data);
        }
        self.total_size += data.len() as u64 - 1;
        if self.samples.len() < self.max {
            self.bytes += data.len() + VALUE_OVERHEAD;
            self.samples.push(data);
            return;
        }
        if self.max > 0 && rng.below(self.count) < self.max as u64 {
            let idx = rng.below(self.max as u64) as usize;
            if idx < self.samples.len() {
                let out = self.samples.remove(idx);
                self.bytes -= out.len() + VALUE_OVERHEAD;
                self.bytes += data.len() + VALUE_OVERHEAD;
                self.samples.push(data);
            }
        }
    }

    fn into_proto(self) -> tipb::SampleCollector {
        tipb::SampleCollector {
            samples: self.samples.into_iter().map(Into::into).collect(),
            null_count: Some(self.null_count as i64),
            count: Some(self.count as i64),
            fm_sketch: Some(self.fm.to_proto()),
            cm_sketch: self.cms.map(CmSketch::into_proto),
            total_size: Some(self.total_size as i64),
        }
    }
}

/// The version 1 column analyze state (TiKV's `SampleBuilder`).
struct ColumnsV1 {
    pk: Option<Histogram>,
    common: Option<(IndexStats, usize)>,
    collectors: Vec<SampleCollector>,
    rng: Rng,
    buf: Vec<u8>,
    ends: Vec<usize>,
}

/// TiKV's CM-sketch workaround: ints, uints and durations as TiDB's `EncodeValue` writes
/// them (variable-length), so TiDB's lookups hash the same bytes.
fn flatten(v: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let mut r = rcop_datum::Reader::new(v.get(1..).unwrap_or(&[]));
    match v.first() {
        Some(&flag::INT) | Some(&flag::DURATION) => {
            out.push(flag::VAR_INT);
            codec::encode_var_i64(out, codec::decode_i64(&mut r)?);
        }
        Some(&flag::UINT) => {
            out.push(flag::VAR_UINT);
            codec::encode_var_u64(out, codec::decode_u64(&mut r)?);
        }
        _ => out.extend_from_slice(v),
    }
    Ok(())
}

impl RowSink for ColumnsV1 {
    fn row(&mut self, vals: &[Vec<u8>], keys: &[Vec<u8>]) -> Result<()> {
        let skip = usize::from(self.pk.is_some());
        if let (Some(pk), Some(v)) = (self.pk.as_mut(), vals.first()) {
            pk.append(v, false);
        }
        let (vals, keys) = (vals.get(skip..).unwrap_or(&[]), keys.get(skip..).unwrap_or(&[]));
        if let Some((stats, n)) = self.common.as_mut() {
            self.buf.clear();
            self.ends.clear();
            for v in vals.iter().take(*n) {
                self.buf.extend_from_slice(v);
                self.ends.push(self.buf.len());
            }
            stats.add(self.buf.clone(), &self.ends);
        }
        for ((c, v), k) in self.collectors.iter_mut().zip(vals).zip(keys) {
            let mut data = Vec::with_capacity(v.len() + 2);
            if !k.is_empty() && !is_null(v) {
                data.push(flag::COMPACT_BYTES);
                codec::encode_compact_bytes(&mut data, k);
            } else {
                flatten(v, &mut data)?;
            }
            c.collect(data, &mut self.rng);
        }
        Ok(())
    }

    fn mem_bytes(&self) -> usize {
        self.pk.as_ref().map_or(0, Histogram::mem_bytes)
            + self.common.as_ref().map_or(0, |(s, _)| s.mem_bytes())
            + self.collectors.iter().map(|c| c.bytes + c.fm.mem_bytes()).sum::<usize>()
    }
}

/// TypeColumn (and TypeMixed with `idx_req`): TiKV's `SampleBuilder::collect_columns_stats`.
pub(super) fn columns_v1(
    req: &tipb::AnalyzeColumnsReq,
    idx_req: Option<&tipb::AnalyzeIndexReq>,
    ranges: &[KeyRange],
    source: &mut dyn ScanSource,
    limits: &ExecLimits,
    seed: u64,
) -> Result<(tipb::AnalyzeColumnsResp, Option<tipb::AnalyzeIndexResp>)> {
    let max = bounded("sample_size", req.sample_size.unwrap_or(0), MAX_SAMPLE_SIZE)?;
    let sketch = bounded("sketch_size", req.sketch_size.unwrap_or(0), MAX_SKETCH_SIZE)?;
    let buckets = bounded("bucket_size", req.bucket_size.unwrap_or(0), MAX_BUCKETS)?;
    let dims = cm_dims(req.cmsketch_depth, req.cmsketch_width)?;
    let mut reader = RowReader::new(req, ranges)?;
    let has_pk = req.columns_info.first().is_some_and(|c| c.pk_handle == Some(true));
    let sampled = reader.schema.len() - usize::from(has_pk);
    let mut ctx = EvalContext::new(EvalConfig::default()).with_limits(limits);
    let cm_bytes = dims.map_or(0, |(d, w)| CmSketch::bytes_for(d, w)).saturating_mul(sampled);
    let mut held = 0;
    ctx.account(&mut held, cm_bytes)?;
    let common = match idx_req {
        Some(idx) => {
            let mut extra = 0;
            let stats = IndexStats::new(idx, &mut |b| ctx.account(&mut extra, b))?;
            Some((stats, req.primary_column_ids.len()))
        }
        None => None,
    };
    let mut state = ColumnsV1 {
        pk: has_pk.then(|| Histogram::new(buckets)),
        common,
        collectors: (0..sampled)
            .map(|_| SampleCollector {
                samples: Vec::new(),
                null_count: 0,
                count: 0,
                max,
                fm: FmSketch::new(sketch),
                cms: dims.and_then(|(d, w)| CmSketch::new(d, w)),
                total_size: 0,
                bytes: 0,
            })
            .collect(),
        rng: Rng::new(seed),
        buf: Vec::new(),
        ends: Vec::new(),
    };
    reader.run(&mut ctx, source, &mut state)?;
    let cols = tipb::AnalyzeColumnsResp {
        collectors: state.collectors.into_iter().map(SampleCollector::into_proto).collect(),
        pk_hist: Some(state.pk.unwrap_or_else(|| Histogram::new(buckets)).into_proto()),
        row_collector: None,
    };
    Ok((cols, state.common.map(|(s, _)| s.into_proto())))
}
