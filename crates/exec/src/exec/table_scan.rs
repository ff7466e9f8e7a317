//! TableScan: reads record keys and row values through the scan source; columns stay raw
//! until an expression (or the response encoder) reads them.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use rcop_datum::codec::Reader;
use rcop_datum::datum::{self as dm, skip_datum};
use rcop_datum::decimal::BinI128Decoder;
use rcop_datum::row::v2::{Lookup, RowShape, ShapedRow};
use rcop_datum::row::{Column, Projection, Row, RowV1, ValueKind, v2};
use rcop_datum::{Decimal, Duration, JsonRef, Time, TimeType, Tz, VectorRef, key};
use rcop_proto::tipb;

use crate::batch::{Batch, LazyCol};
use crate::column::{
    BytesT, ColData, DecT, DurT, Elem, EnumRef, EnumT, FixedVec, IntT, JsonT, RealT, Scalar, TimeT,
    VecCol, VecT,
};
use crate::ctx::{EvalConfig, EvalContext};
use crate::error::{Error, Result};
use crate::exec::raw::{ConstCmp, Slots};
use crate::exec::{BatchResult, ExecEnv, ExecStats, Executor, RawRows};
use crate::expr::compare::CmpOp;
use crate::scan::{KeyRange, KvBatch, ScanSource, ScanStatus};
use crate::types::{EvalType, FieldType};

/// TiDB's extra handle column id (`_tidb_rowid`).
pub const EXTRA_HANDLE_ID: i64 = -1;
/// TiDB's extra partition id column.
pub const EXTRA_PARTITION_ID: i64 = -2;
/// TiDB's extra physical table id column.
pub const EXTRA_PHYSICAL_TABLE_ID: i64 = -3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// From the row value.
    Row,
    /// The int handle of the record key.
    IntHandle,
    /// From the row value, else datum `k` of the common handle.
    PkDatum(usize),
    /// The table id of the record key.
    TableId,
}

#[derive(Debug)]
pub(super) struct ScanCol {
    id: i64,
    ft: FieldType,
    et: EvalType,
    kind: ValueKind,
    source: Source,
    default: Option<Scalar>,
    /// The member names of an `ENUM` column (`ColumnInfo.elems`).
    elems: Vec<String>,
}

#[derive(Debug)]
struct ScanColumns {
    cols: Vec<ScanCol>,
    tz: Tz,
    common_handle: bool,
    /// The decoders of earlier [`TableRows::decode_columns`] calls, for the next batch's
    /// call over the same columns to reuse (at most [`MAX_DECODERS`], in the order last
    /// used: the least recently used is dropped first).
    decoders: Mutex<Vec<ColumnsDecoder>>,
}

/// Column lists whose decoders a scan keeps: one per column an expression reads first, in
/// practice (a selection's conditions decode their columns one by one).
const MAX_DECODERS: usize = 8;

/// What decoding a list of a scan's columns learns, kept from batch to batch: the
/// projection of their ids, the layout of the rows last decoded and each column's decimal
/// decoder. Built from the columns alone and then only taught by rows, so reusing it gives
/// exactly what a new one would.
#[derive(Debug)]
struct ColumnsDecoder {
    /// The scan columns decoded, in the order asked.
    js: Vec<usize>,
    proj: Projection,
    shape: RowShape,
    /// The decoder of each column's decimals (built from the first value's header).
    decs: Vec<Option<BinI128Decoder>>,
}

impl ScanColumns {
    /// The decoder an earlier call over the columns `js` left, else a new one.
    fn take_decoder(&self, js: &[usize], cols: &[&ScanCol]) -> ColumnsDecoder {
        if let Ok(mut kept) = self.decoders.try_lock()
            && let Some(at) = kept.iter().position(|d| d.js == js)
        {
            return kept.remove(at);
        }
        // Columns not read from the row value ask for no id (-1 is never stored).
        let ids: Vec<i64> = cols.iter().map(|c| if c.reads_row() { c.id } else { -1 }).collect();
        ColumnsDecoder {
            js: js.to_vec(),
            proj: Projection::new(&ids),
            shape: RowShape::new(),
            decs: vec![None; cols.len()],
        }
    }

    /// Keeps `d` for the next call over its columns (a busy lock drops it).
    fn keep_decoder(&self, d: ColumnsDecoder) {
        if let Ok(mut kept) = self.decoders.try_lock() {
            if kept.len() >= MAX_DECODERS {
                kept.remove(0);
            }
            kept.push(d);
        }
    }
}

/// A table scan's undecoded rows behind a batch's raw columns.
#[derive(Debug, Clone)]
pub(crate) struct TableRows {
    kv: Arc<KvBatch>,
    cols: Arc<ScanColumns>,
}

/// A record key without its keyspace prefix.
#[inline]
pub(super) fn strip_keyspace(k: &[u8]) -> &[u8] {
    match k {
        [key::KEYSPACE_TXN, _, _, _, rest @ ..] => rest,
        _ => k,
    }
}

impl TableRows {
    /// Decodes the columns `js` for the logical rows, reading each row's header once. When
    /// every row is laid out as the last one learned (the same header and id lists, the
    /// common case), column by column from the learned positions ([`RowShape`],
    /// [`decode_shaped`](Self::decode_shaped)); otherwise row by row: a row laid out as the
    /// learned one has its values found from the learned positions, another row is walked
    /// with a [`Projection`], which also learns its layout. An error names a row that does
    /// not decode (column by column, the first in column order). The projection,
    /// the learned layout and the decimal decoders are kept for the next batch's call over
    /// the same columns ([`ColumnsDecoder`]).
    pub(crate) fn decode_columns(
        &self,
        js: &[usize],
        logical: &[u32],
        slots: Slots,
        _ctx: &EvalContext,
    ) -> Result<Vec<VecCol>> {
        let cols = js
            .iter()
            .map(|&j| {
                self.cols
                    .cols
                    .get(j)
                    .ok_or_else(|| Error::invalid(format!("scan column {j} out of range")))
            })
            .collect::<Result<Vec<_>>>()?;
        let len = slots.len(logical);
        let mut outs: Vec<VecCol> = cols.iter().map(|c| new_column(c, len)).collect();
        let needs_row = cols.iter().any(|c| c.reads_row());
        // Decode the logical rows (all rows when NULL slots are filled and the selection is
        // not in physical order); with physical slots, the rows in between are NULL slots,
        // appended a run at a time.
        let mut all = Vec::new();
        let rows = slots.rows(logical, &mut all);
        let mut decoder = self.cols.take_decoder(js, &cols);
        let ColumnsDecoder { proj, shape, decs, .. } = &mut decoder;
        if needs_row && self.decode_shaped(&cols, rows, slots, proj, shape, decs, &mut outs)? {
            self.cols.keep_decoder(decoder);
            return Ok(outs.into_iter().map(VecCol::into_fixed).collect());
        }
        // The cells of a row not laid out as the learned one.
        let mut cells: Vec<Column<'_>> = Vec::new();
        // The next physical row to fill.
        let mut at = 0;
        for (n, &r) in rows.iter().enumerate() {
            if let Some(&ahead) = rows.get(n + PREFETCH_AHEAD) {
                self.kv.prefetch_value(ahead as usize);
            }
            let r = r as usize;
            let gap = slots.gap(at, r);
            if gap > 0 {
                outs.iter_mut().for_each(|o| o.push_nulls(gap));
            }
            at = r + 1;
            if !needs_row {
                // Only the key's parts: the row value is not read.
                for (col, out) in cols.iter().zip(outs.iter_mut()) {
                    self.decode_cell(col, r, Column::Missing, out)?;
                }
                continue;
            }
            let v = self.kv.value(r).ok_or_else(|| Error::invalid("scan row out of range"))?;
            if let Some(row) = shape.view(v) {
                // Every value of the row, or none of them (a slot the shape cannot read is
                // a corrupt row, which the walk below reports).
                let mut ok = true;
                for (k, ((col, out), dec)) in
                    cols.iter().zip(outs.iter_mut()).zip(decs.iter_mut()).enumerate()
                {
                    let Some(cell) = row.get(k) else {
                        ok = false;
                        break;
                    };
                    if let Lookup::Value(b) = cell
                        && col.source == Source::Row
                        && push_v2_fast(col, b, out, dec)
                    {
                        continue;
                    }
                    self.decode_cell(col, r, Column::from(cell), out)?;
                }
                if ok {
                    continue;
                }
            }
            self.decode_walked(&cols, proj, shape, r, v, &mut cells, &mut outs)?;
        }
        let tail = slots.tail(at);
        if tail > 0 {
            outs.iter_mut().for_each(|o| o.push_nulls(tail));
        }
        self.cols.keep_decoder(decoder);
        Ok(outs.into_iter().map(VecCol::into_fixed).collect())
    }

    /// Decodes `rows` column by column when every one of them is laid out as the learned
    /// `shape` (the common case once a batch has taught it): a first pass views each row,
    /// then each column is filled in typed runs ([`fast_run`]) with the general
    /// [`decode_cell`](Self::decode_cell) for the cells a run does not take. `false`, with
    /// nothing appended, when a row is laid out otherwise (the caller then decodes row by
    /// row, learning the new layout).
    #[expect(clippy::too_many_arguments, reason = "the decode loop's state, borrowed once")]
    fn decode_shaped(
        &self,
        cols: &[&ScanCol],
        rows: &[u32],
        slots: Slots,
        proj: &Projection,
        shape: &RowShape,
        decs: &mut [Option<BinI128Decoder>],
        outs: &mut [VecCol],
    ) -> Result<bool> {
        let mut views = Vec::with_capacity(rows.len());
        for (n, &r) in rows.iter().enumerate() {
            if let Some(&ahead) = rows.get(n + PREFETCH_AHEAD) {
                self.kv.prefetch_value(ahead as usize);
            }
            let v =
                self.kv.value(r as usize).ok_or_else(|| Error::invalid("scan row out of range"))?;
            match shape.view(v) {
                Some(row) => views.push(row),
                None => return Ok(false),
            }
        }
        for (k, ((col, out), dec)) in
            cols.iter().zip(outs.iter_mut()).zip(decs.iter_mut()).enumerate()
        {
            // Cleared once the column's type turns out to have no typed run.
            let mut slot = if col.source == Source::Row { shape.value_slot(k) } else { None };
            // The next physical row to fill, and the next of `rows` to decode.
            let (mut at, mut n) = (0, 0);
            while let (Some(&r), Some(view)) = (rows.get(n), views.get(n)) {
                let r = r as usize;
                let gap = slots.gap(at, r);
                if gap > 0 {
                    out.push_nulls(gap);
                }
                // With physical slots a run stops where the rows skip one (its NULL slot);
                // with logical slots the rows' values are appended back to back.
                let contiguous = match slots {
                    Slots::Physical(_) => rows.get(n..),
                    Slots::Logical => None,
                };
                let run = match (slot, views.get(n..)) {
                    (Some(p), Some(views)) => fast_run(col, p, contiguous, views, out, dec)
                        .unwrap_or_else(|| {
                            slot = None;
                            0
                        }),
                    _ => 0,
                };
                if run > 0 {
                    n += run;
                    at = r + run;
                    continue;
                }
                let cell = match view.get(k) {
                    Some(cell) => Column::from(cell),
                    // Offsets out of order: the walk names the defect.
                    None => return Err(self.corrupt_row(proj, cols.len(), r)),
                };
                self.decode_cell(col, r, cell, out)?;
                at = r + 1;
                n += 1;
            }
            let tail = slots.tail(at);
            if tail > 0 {
                out.push_nulls(tail);
            }
        }
        Ok(true)
    }

    /// [`RawRows::retain_cmp`] over a table scan's rows: the typed constants of `cmps` in the
    /// domain column `j` decodes to (signed integers, fixed-point decimals at the column's
    /// scale, dates and datetimes), then [`retain_typed`](Self::retain_typed).
    pub(crate) fn retain_cmp(&self, j: usize, cmps: &[ConstCmp], logical: &mut Vec<u32>) -> bool {
        let Some(col) = self.cols.cols.get(j) else { return false };
        if col.source != Source::Row || cmps.is_empty() {
            return false;
        }
        // What `new_column` makes of the column and `push_v2_fast` appends to it; each
        // constant as `Selection`'s direct comparison converts it for that column.
        let domain = match (new_column(col, 0).data, col.kind) {
            (ColData::Int(_), ValueKind::Int) => Domain::Int,
            (ColData::Fixed(f), ValueKind::Decimal) => Domain::Fixed(f.scale),
            (ColData::DateTime(_), ValueKind::Time)
                if col.ft.time_type() != TimeType::Timestamp =>
            {
                Domain::Time(col.ft.time_type(), col.ft.fsp())
            }
            _ => return false,
        };
        let Some(iv) = Interval::of(cmps, |c| domain.key(c)) else { return false };
        match domain {
            Domain::Int => {
                self.retain_typed(j, col, logical, &iv, |_, b| v2::decode_v2_i64(b).ok())
            }
            Domain::Fixed(scale) => {
                self.retain_typed(j, col, logical, &iv, |dec, b| fixed_value(dec, b, scale))
            }
            // Times compare as their packed forms do, so a DATE is compared undecoded when
            // its decoding would check the year only (`Time::date_order`).
            Domain::Time(tt, fsp) => self.retain_typed(j, col, logical, &iv, |_, b| {
                match v2::decode_v2_u64(b).ok().and_then(|p| Time::date_order(p, tt, fsp)) {
                    Some(order) => Some(order),
                    None => time_value(tt, fsp, b).map(|t| t.to_packed_u64()),
                }
            }),
        }
    }

    /// Keeps the logical rows whose value of column `j` (`col`), decoded by `value` (the
    /// typed path of [`push_v2_fast`], with the column's decimal decoder), lies in `iv`;
    /// a NULL is never kept. Rows laid out as the learned shape are read from it; another
    /// row is walked, which learns its layout. `false`, with `logical` untouched, for
    /// anything else: a value `value` declines, a missing value, a row that is not v2 or
    /// does not decode, logical rows that do not ascend (the general decoder then reads
    /// every physical row). Out of line: inlined into the selection's loop, the three typed
    /// copies made Q6 cost 526 instructions a row under callgrind, against 461.
    #[inline(never)]
    fn retain_typed<T: Into<i128>>(
        &self,
        j: usize,
        col: &ScanCol,
        logical: &mut Vec<u32>,
        iv: &Interval,
        mut value: impl FnMut(&mut Option<BinI128Decoder>, &[u8]) -> Option<T>,
    ) -> bool {
        let mut decoder = self.cols.take_decoder(&[j], &[col]);
        let ColumnsDecoder { proj, shape, decs, .. } = &mut decoder;
        let mut dec = decs.first().copied().flatten();
        let mut kept = Vec::with_capacity(logical.len());
        let mut cell = [Lookup::Missing];
        // Where the learned shape holds the value (relearned with the shape).
        let mut slot = shape.value_slot(0);
        let mut prev: Option<u32> = None;
        let mut ok = true;
        for &r in logical.iter() {
            if prev.is_some_and(|p| r <= p) {
                ok = false;
                break;
            }
            prev = Some(r);
            let Some(v) = self.kv.value(r as usize) else {
                ok = false;
                break;
            };
            // The row's cell as the learned shape places it, else by walking the row.
            let viewed = match slot {
                Some(p) => shape.value_of(v, p).map(|b| Some(Lookup::Value(b))),
                None => shape.view(v).map(|row| row.get(0)),
            };
            let found = match viewed {
                Some(cell) => cell,
                None if v.first() == Some(&v2::CODEC_VER)
                    && proj.decode_into_cached(v, &mut cell, shape).is_ok() =>
                {
                    slot = shape.value_slot(0);
                    cell.first().copied()
                }
                None => None,
            };
            match found {
                Some(Lookup::Value(b)) => match value(&mut dec, b) {
                    Some(x) => {
                        if iv.holds(x.into()) {
                            kept.push(r);
                        }
                    }
                    None => {
                        ok = false;
                        break;
                    }
                },
                Some(Lookup::Null) => {}
                Some(Lookup::Missing) | None => {
                    ok = false;
                    break;
                }
            }
        }
        if let Some(d) = decs.first_mut() {
            *d = dec;
        }
        self.cols.keep_decoder(decoder);
        if ok {
            *logical = kept;
        }
        ok
    }

    /// [`RawRows::string_cells`] over a table scan's rows: the columns `js` must be string
    /// columns read from the row value (what [`push_v2_fast`] copies as they are). Rows laid
    /// out as the learned shape are read from it; another v2 row is walked, which learns its
    /// layout.
    pub(crate) fn string_cells<'s>(
        &'s self,
        js: &[usize],
        logical: &[u32],
        mut each: impl FnMut(&[Option<&'s [u8]>]) -> bool,
    ) -> bool {
        let Some(cols) = js.iter().map(|&j| self.cols.cols.get(j)).collect::<Option<Vec<_>>>()
        else {
            return false;
        };
        let strings = cols.iter().all(|c| {
            c.source == Source::Row
                && c.kind == ValueKind::Bytes
                && matches!(new_column(c, 0).data, ColData::Bytes(_))
        });
        if js.is_empty() || !strings {
            return false;
        }
        let mut decoder = self.cols.take_decoder(js, &cols);
        let ColumnsDecoder { proj, shape, .. } = &mut decoder;
        let mut cells = vec![Lookup::Missing; js.len()];
        let mut parts: Vec<Option<&[u8]>> = vec![None; js.len()];
        // A NULL is `None`; a missing value (the column's default) or a corrupt row sends
        // the batch to the decoder, which takes the default or names the defect.
        let part = |cell: Option<Lookup<'s>>, p: &mut Option<&'s [u8]>| match cell {
            Some(Lookup::Value(b)) => {
                *p = Some(b);
                true
            }
            Some(Lookup::Null) => {
                *p = None;
                true
            }
            Some(Lookup::Missing) | None => false,
        };
        let mut ok = true;
        for &r in logical {
            let Some(v) = self.kv.value(r as usize) else {
                ok = false;
                break;
            };
            let read = match shape.view(v) {
                Some(row) => parts.iter_mut().enumerate().all(|(k, p)| part(row.get(k), p)),
                None => {
                    v.first() == Some(&v2::CODEC_VER)
                        && proj.decode_into_cached(v, &mut cells, shape).is_ok()
                        && parts.iter_mut().zip(&cells).all(|(p, c)| part(Some(*c), p))
                }
            };
            if !read || !each(&parts) {
                ok = false;
                break;
            }
        }
        self.cols.keep_decoder(decoder);
        ok
    }

    /// The error of row `r`, which a shape viewed but whose value offsets are out of order:
    /// what walking it reports.
    #[cold]
    fn corrupt_row(&self, proj: &Projection, width: usize, r: usize) -> Error {
        let Some(v) = self.kv.value(r) else { return Error::invalid("scan row out of range") };
        let mut cells = vec![Column::Missing; width];
        match proj.decode_into(v, &mut cells) {
            Err(e) => e.into(),
            Ok(()) => Error::invalid("row v2 value offsets out of order"),
        }
    }

    /// Decodes row `r` (value `v`) for `cols` by walking it, learning its layout into `shape`
    /// when it is a v2 row. A row a shape viewed in part is decoded here only when it is
    /// corrupt, so the walk fails before a value is appended twice.
    #[expect(clippy::too_many_arguments, reason = "the decode loop's state, borrowed once")]
    fn decode_walked<'a>(
        &'a self,
        cols: &[&ScanCol],
        proj: &Projection,
        shape: &mut RowShape,
        r: usize,
        v: &'a [u8],
        cells: &mut Vec<Column<'a>>,
        outs: &mut [VecCol],
    ) -> Result<()> {
        cells.clear();
        cells.resize(cols.len(), Column::Missing);
        if v.first() == Some(&v2::CODEC_VER) {
            proj.decode_into_cached(v, cells, shape)?;
        } else {
            let row = Row::V1(RowV1::new(v));
            for (c, cell) in cols.iter().zip(cells.iter_mut()) {
                if c.reads_row() {
                    *cell = row.get(c.id)?;
                }
            }
        }
        for ((col, out), &cell) in cols.iter().zip(outs.iter_mut()).zip(cells.iter()) {
            self.decode_cell(col, r, cell, out)?;
        }
        Ok(())
    }

    /// Pair `r` of the batch.
    #[inline]
    fn row(&self, r: u32) -> Result<(&[u8], &[u8])> {
        self.kv.get(r as usize).ok_or_else(|| Error::invalid("scan row out of range"))
    }

    /// Appends column `col` of row `r`, whose row value holds `cell` for it.
    #[inline]
    fn decode_cell(
        &self,
        col: &ScanCol,
        r: usize,
        cell: Column<'_>,
        out: &mut VecCol,
    ) -> Result<()> {
        match col.source {
            Source::IntHandle => {
                let (k, _) = self.row(r as u32)?;
                let (_, h) = key::decode_record_key(strip_keyspace(k))?;
                IntT::push(out, Some(h));
                return Ok(());
            }
            Source::TableId => {
                let (k, _) = self.row(r as u32)?;
                IntT::push(out, Some(key::decode_table_id(strip_keyspace(k))?));
                return Ok(());
            }
            Source::Row | Source::PkDatum(_) => {}
        }
        match cell {
            Column::V2(b) => push_v2(col, b, out, &self.cols.tz),
            Column::Datum(d) => push_datum(col, &mut Reader::new(d), out, &self.cols.tz),
            Column::Null => {
                out.push_null();
                Ok(())
            }
            Column::Missing => {
                if let Source::PkDatum(idx) = col.source {
                    let (k, _) = self.row(r as u32)?;
                    let (_, handle) = key::split_record_key(strip_keyspace(k))?;
                    let mut r = Reader::new(handle);
                    for _ in 0..idx {
                        skip_datum(&mut r)?;
                    }
                    return push_datum(col, &mut r, out, &self.cols.tz);
                }
                match &col.default {
                    Some(s) => out.push_scalar(s),
                    None if col.ft.is_not_null() => {
                        return Err(Error::MissingColumn { column_id: col.id });
                    }
                    None => out.push_null(),
                }
                Ok(())
            }
        }
    }
}

impl ScanCol {
    /// True when the column is read from the row value (else from the key).
    #[inline]
    fn reads_row(&self) -> bool {
        matches!(self.source, Source::Row | Source::PkDatum(_))
    }

    /// A column read only from datums and v2 values (an index scan's); `elems` are the
    /// member names of an `ENUM` column (`ColumnInfo.elems`, empty for other types).
    pub(super) fn plain(id: i64, ft: FieldType, elems: Vec<String>) -> Result<ScanCol> {
        let et = ft.eval_type()?;
        let kind = ft.value_kind()?;
        Ok(ScanCol { id, ft, et, kind, source: Source::Row, default: None, elems })
    }
}

/// Appends the v2 value `b` of `col` when it is of a common kind and well formed (fixed-point
/// decimals, integers, strings, dates and datetimes), returning false (having appended
/// nothing) otherwise, for [`TableRows::decode_cell`] to decode it or report the error. The
/// per-type rules are [`fast_run`]'s, shared through [`fixed_value`] and [`time_value`].
#[inline(always)]
fn push_v2_fast(
    col: &ScanCol,
    b: &[u8],
    out: &mut VecCol,
    dec: &mut Option<BinI128Decoder>,
) -> bool {
    match (&mut out.data, col.kind) {
        (ColData::Fixed(f), ValueKind::Decimal) => {
            let Some(m) = fixed_value(dec, b, f.scale) else { return false };
            f.m.push(m);
        }
        (ColData::Int(v), ValueKind::Int) => {
            let Ok(x) = v2::decode_v2_i64(b) else { return false };
            v.push(x);
        }
        (ColData::Bytes(v), ValueKind::Bytes) => v.push(b),
        (ColData::DateTime(v), ValueKind::Time) => {
            let Some(t) = time_value(col.ft.time_type(), col.ft.fsp(), b) else { return false };
            v.push(t);
        }
        _ => return false,
    }
    out.valid.push(true);
    true
}

/// The mantissa of the binary decimal `b` when it decodes (see [`decode_fixed`]) at the
/// output column's `scale`; `None` sends it to the general path, which converts the column.
#[inline(always)]
fn fixed_value(dec: &mut Option<BinI128Decoder>, b: &[u8], scale: u8) -> Option<i128> {
    let (m, s) = decode_fixed(dec, b)?;
    (s == scale).then_some(m)
}

/// The DATE or DATETIME (type `tt`, `fsp`) of the packed v2 value `b`; `None` for a
/// TIMESTAMP (converted from UTC by the general path) or a value that does not decode.
#[inline(always)]
fn time_value(tt: TimeType, fsp: u8, b: &[u8]) -> Option<Time> {
    if tt == TimeType::Timestamp {
        return None;
    }
    Time::from_packed_u64(v2::decode_v2_u64(b).ok()?, tt, fsp).ok()
}

/// Appends to `out` the values at `slot` of the rows `views` while each value takes the
/// typed path of `col`'s type (the rules of [`push_v2_fast`]), one loop per type, and, when
/// `rows` (the views' row numbers) is given, while the rows are next to each other. Returns
/// how many rows it took (the caller decodes the next row's cell the general way), or
/// `None` when the column's type (or what its output has become) has no typed loop, so that
/// the caller stops asking.
#[inline]
fn fast_run(
    col: &ScanCol,
    slot: usize,
    rows: Option<&[u32]>,
    views: &[ShapedRow<'_, '_>],
    out: &mut VecCol,
    dec: &mut Option<BinI128Decoder>,
) -> Option<usize> {
    let taken = match (&mut out.data, col.kind) {
        (ColData::Fixed(f), ValueKind::Decimal) => {
            let scale = f.scale;
            run(rows, views, slot, |b| fixed_value(dec, b, scale).map(|m| f.m.push(m)))
        }
        (ColData::Int(v), ValueKind::Int) => {
            run(rows, views, slot, |b| v2::decode_v2_i64(b).ok().map(|x| v.push(x)))
        }
        (ColData::Bytes(v), ValueKind::Bytes) => run(rows, views, slot, |b| {
            v.push(b);
            Some(())
        }),
        // A TIMESTAMP never takes the typed path (it is converted from UTC).
        (ColData::DateTime(v), ValueKind::Time) if col.ft.time_type() != TimeType::Timestamp => {
            let (tt, fsp) = (col.ft.time_type(), col.ft.fsp());
            run(rows, views, slot, |b| time_value(tt, fsp, b).map(|t| v.push(t)))
        }
        _ => return None,
    };
    out.valid.push_n(true, taken);
    Some(taken)
}

/// Calls `push` with the value at `slot` of each row of `views` while `push` takes the
/// value (it appends nothing when it declines) and, when `rows` is given, while the rows
/// go up by one; returns how many it took.
#[inline(always)]
fn run(
    rows: Option<&[u32]>,
    views: &[ShapedRow<'_, '_>],
    slot: usize,
    mut push: impl FnMut(&[u8]) -> Option<()>,
) -> usize {
    // With `rows`, the row each view must be for the run to go on: `first + n`.
    let first = match rows {
        Some(rows) => match rows.first() {
            Some(&f) => Some((rows, f as usize)),
            None => return 0,
        },
        None => None,
    };
    let mut n = 0usize;
    for view in views {
        if let Some((rows, first)) = first
            && rows.get(n).is_none_or(|&r| r as usize != first + n)
        {
            break;
        }
        let Some(b) = view.value(slot) else { break };
        if push(b).is_none() {
            break;
        }
        n += 1;
    }
    n
}

/// An integer constant as the `i128` it is, unsigned when `unsigned`: against a signed
/// column's values it orders as `cmp_int` orders them.
fn int_key(k: i64, unsigned: bool) -> i128 {
    if unsigned { i128::from(k as u64) } else { i128::from(k) }
}

/// The domains [`TableRows::retain_cmp`] compares raw values in, each as an `i128`: signed
/// integers, decimal mantissas at the column's scale, packed times of a type and fsp.
#[derive(Debug, Clone, Copy)]
enum Domain {
    Int,
    Fixed(u8),
    Time(TimeType, u8),
}

impl Domain {
    /// The constant of `c` in this domain; `None` when it has no form there.
    fn key(self, c: &ConstCmp) -> Option<i128> {
        match (self, &c.konst) {
            (Domain::Int, Scalar::Int(k)) if !c.unsigned.0 => Some(int_key(*k, c.unsigned.1)),
            (Domain::Fixed(scale), Scalar::Decimal(d)) => crate::fixed::at_scale(d, scale),
            (Domain::Time(..), Scalar::DateTime(k)) => Some(i128::from(k.to_packed_u64())),
            _ => None,
        }
    }
}

/// What a run of comparisons `x op k` keeps, over a domain that orders as integers do (signed
/// and unsigned integers, decimal mantissas at one scale, packed times, each as an `i128`):
/// the interval `lo..=hi` that every `<`, `<=`, `>`, `>=` and `=` allows, less the values a
/// `!=` excludes. Two compares a value instead of one per comparison through its operator.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Interval {
    lo: i128,
    hi: i128,
    /// The constants of the `!=` comparisons.
    not: Vec<i128>,
}

impl Interval {
    /// The interval of `cmps`, each constant converted by `konst`; `None` when one has no
    /// form in the domain (or is `<=>`, whose NULL rule differs).
    fn of(cmps: &[ConstCmp], konst: impl Fn(&ConstCmp) -> Option<i128>) -> Option<Interval> {
        let mut iv = Interval { lo: i128::MIN, hi: i128::MAX, not: Vec::new() };
        for c in cmps {
            let k = konst(c)?;
            // A bound past the domain's end keeps nothing: `lo > hi` stays so, as `lo`
            // only rises and `hi` only falls.
            let (lo, hi) = match c.op {
                CmpOp::Lt => (None, Some(k.checked_sub(1))),
                CmpOp::Le => (None, Some(Some(k))),
                CmpOp::Gt => (Some(k.checked_add(1)), None),
                CmpOp::Ge => (Some(Some(k)), None),
                CmpOp::Eq => (Some(Some(k)), Some(Some(k))),
                CmpOp::Ne => {
                    iv.not.push(k);
                    (None, None)
                }
                CmpOp::NullEq => return None,
            };
            match (lo, hi) {
                (Some(None), _) | (_, Some(None)) => {
                    iv.lo = i128::MAX;
                    iv.hi = i128::MIN;
                }
                (lo, hi) => {
                    if let Some(Some(l)) = lo {
                        iv.lo = iv.lo.max(l);
                    }
                    if let Some(Some(h)) = hi {
                        iv.hi = iv.hi.min(h);
                    }
                }
            }
        }
        Some(iv)
    }

    #[inline(always)]
    fn holds(&self, x: i128) -> bool {
        self.lo <= x && x <= self.hi && !self.not.contains(&x)
    }
}

/// The fixed-point value of the binary decimal `b` with `dec`, the decoder of the previous
/// value's type, replacing it when `b` has another header.
#[inline(always)]
fn decode_fixed(dec: &mut Option<BinI128Decoder>, b: &[u8]) -> Option<(i128, u8)> {
    if let Some(d) = dec
        && let Some(m) = d.decode(b)
    {
        return Some((m, d.frac()));
    }
    decode_fixed_anew(dec, b)
}

/// [`decode_fixed`] with a new decoder for `b`'s header (the first value, or another type).
#[cold]
#[inline(never)]
fn decode_fixed_anew(dec: &mut Option<BinI128Decoder>, b: &[u8]) -> Option<(i128, u8)> {
    let &[prec, frac, ..] = b else { return None };
    let d = BinI128Decoder::new(prec, frac)?;
    *dec = Some(d);
    Some((d.decode(b)?, frac))
}

/// How many rows ahead [`TableRows::decode_columns`] asks for a row value to be loaded:
/// enough rows to cover a memory access while each row's header is walked.
const PREFETCH_AHEAD: usize = 8;

/// An empty output column for `col`: decimals of at most 38 digits start as fixed point
/// with the column's scale (they fall back to `Decimal`s on the first value that does not
/// fit).
fn new_column(col: &ScanCol, cap: usize) -> VecCol {
    match (col.et, u8::try_from(col.ft.decimal), col.ft.flen) {
        (EvalType::Decimal, Ok(scale), 1..=38) if scale <= crate::fixed::MAX_SCALE => VecCol {
            data: ColData::Fixed(FixedVec { m: Vec::with_capacity(cap), scale }),
            valid: crate::column::Bitmap::with_capacity(cap),
        },
        _ => VecCol::new(col.et, cap),
    }
}

#[inline]
fn push_time(col: &ScanCol, packed: u64, out: &mut VecCol, tz: &Tz) -> Result<()> {
    let tt = col.ft.time_type();
    let mut t = Time::from_packed_u64(packed, tt, col.ft.fsp())?;
    if tt == TimeType::Timestamp {
        t = t.from_utc(tz)?;
    }
    TimeT::push(out, Some(t));
    Ok(())
}

/// Appends `ENUM` member `value` with its name from the column's `elems` (TiKV
/// `Enum::get_value_name`: 0 is the empty value).
fn push_enum(col: &ScanCol, value: u64, out: &mut VecCol) -> Result<()> {
    let name = match value.checked_sub(1) {
        None => &[][..],
        Some(i) => usize::try_from(i)
            .ok()
            .and_then(|i| col.elems.get(i))
            .map(|s| s.as_bytes())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "enum value {value} of column {} outside its {} members",
                    col.id,
                    col.elems.len()
                ))
            })?,
    };
    EnumT::push(out, Some(EnumRef { value, name }));
    Ok(())
}

/// Reads an `ENUM` datum: the index as Uint, VarUint, Int or VarInt, or TiDB's compact-bytes
/// form holding a varint (TiKV `EnumDecoder`).
fn decode_enum_datum(r: &mut Reader<'_>) -> Result<Option<u64>> {
    let offset = r.pos();
    match r.peek_u8() {
        Some(dm::flag::COMPACT_BYTES) => {
            r.read_u8("datum flag")?;
            let inner = rcop_datum::codec::decode_compact_bytes(r)?;
            Ok(Some(rcop_datum::codec::decode_var_u64(&mut Reader::new(inner))?))
        }
        Some(_) => Ok(dm::decode_int_datum(r)?.map(|v| v as u64)),
        None => {
            Err(rcop_datum::Error::Eof { what: "datum flag", need: offset + 1, have: offset }
                .into())
        }
    }
}

#[inline]
pub(super) fn push_v2(col: &ScanCol, b: &[u8], out: &mut VecCol, tz: &Tz) -> Result<()> {
    if col.et == EvalType::Enum {
        return push_enum(col, v2::decode_v2_u64(b)?, out);
    }
    if col.et == EvalType::VectorFloat32 {
        VecT::push(out, Some(VectorRef::decode(b)?));
        return Ok(());
    }
    match col.kind {
        ValueKind::Int => IntT::push(out, Some(v2::decode_v2_i64(b)?)),
        ValueKind::Uint => IntT::push(out, Some(v2::decode_v2_u64(b)? as i64)),
        ValueKind::Float => RealT::push(out, Some(v2::decode_v2_f64(b)?)),
        ValueKind::Bytes => BytesT::push(out, Some(b)),
        ValueKind::Decimal => {
            if let ColData::Fixed(f) = &mut out.data {
                match Decimal::decode_bin_i128(b) {
                    Some((m, s)) if s == f.scale => {
                        f.m.push(m);
                        out.valid.push(true);
                        return Ok(());
                    }
                    _ => *out = out.to_decimal(),
                }
            }
            let (d, _, _) = Decimal::decode_bin(&mut Reader::new(b))?;
            DecT::push(out, Some(&d));
        }
        ValueKind::Time => push_time(col, v2::decode_v2_u64(b)?, out, tz)?,
        ValueKind::Duration => {
            DurT::push(out, Some(Duration::from_nanos(v2::decode_v2_i64(b)?, col.ft.fsp())?));
        }
        ValueKind::Json => JsonT::push(out, Some(JsonRef::decode(b)?)),
    }
    Ok(())
}

pub(super) fn push_datum(
    col: &ScanCol,
    r: &mut Reader<'_>,
    out: &mut VecCol,
    tz: &Tz,
) -> Result<()> {
    match col.et {
        EvalType::Int => IntT::push(out, dm::decode_int_datum(r)?),
        EvalType::Real => RealT::push(out, dm::decode_float_datum(r)?),
        EvalType::Decimal => DecT::push(out, dm::decode_decimal_datum(r)?.as_ref()),
        EvalType::Bytes => {
            let mut buf = Vec::new();
            if dm::decode_bytes_datum(r, &mut buf)? {
                BytesT::push(out, Some(&buf));
            } else {
                out.push_null();
            }
        }
        EvalType::DateTime => {
            let tt = col.ft.time_type();
            match dm::decode_time_datum(r, tt, col.ft.fsp())? {
                Some(mut t) => {
                    if tt == TimeType::Timestamp {
                        t = t.from_utc(tz)?;
                    }
                    TimeT::push(out, Some(t));
                }
                None => out.push_null(),
            }
        }
        EvalType::Duration => DurT::push(out, dm::decode_duration_datum(r, col.ft.fsp())?),
        EvalType::Json => {
            let offset = r.pos();
            match r.read_u8("datum flag")? {
                dm::flag::NIL => out.push_null(),
                dm::flag::JSON => {
                    let (j, n) = JsonRef::decode_prefix(r.rest())?;
                    JsonT::push(out, Some(j));
                    r.read_bytes(n, "json")?;
                }
                flag => return Err(rcop_datum::Error::BadFlag { flag, offset }.into()),
            }
        }
        EvalType::Enum => match decode_enum_datum(r)? {
            Some(v) => push_enum(col, v, out)?,
            None => out.push_null(),
        },
        // TiKV `append_vector_float32_datum`: flag 20 then the binary form.
        EvalType::VectorFloat32 => {
            let offset = r.pos();
            match r.read_u8("datum flag")? {
                dm::flag::NIL => out.push_null(),
                dm::flag::VECTOR_FLOAT32 => {
                    let (v, n) = VectorRef::decode_prefix(r.rest())?;
                    VecT::push(out, Some(v));
                    r.read_bytes(n, "vector")?;
                }
                flag => return Err(rcop_datum::Error::BadFlag { flag, offset }.into()),
            }
        }
    }
    Ok(())
}

/// Per-range scan counts and the position reached, for `output_counts` and paging.
#[derive(Debug, Clone, Default)]
pub struct ScanCounters {
    /// The request ranges, in request order.
    pub ranges: Vec<KeyRange>,
    /// Rows scanned per range, in request order.
    pub counts: Vec<i64>,
    /// The last key consumed.
    pub last_key: Option<Vec<u8>>,
    /// True once every range is exhausted.
    pub drained: bool,
    /// True for a descending scan.
    pub desc: bool,
    /// Bytes (keys and values) of every pair read, for `paging_size_bytes`.
    pub scanned_bytes: u64,
}

impl ScanCounters {
    /// The interval scanned so far, as TiKV reports it for paging: forward
    /// `[first start, last key + 0x00)`, backward `[last key, last end)`. `None` once drained
    /// (or when nothing was scanned).
    pub fn scanned_range(&self) -> Option<KeyRange> {
        if self.drained {
            return None;
        }
        let last = self.last_key.as_ref()?;
        if self.desc {
            let end = self.ranges.last().map(|r| r.end.clone()).unwrap_or_default();
            Some(KeyRange { start: last.clone(), end })
        } else {
            let start = self.ranges.first().map(|r| r.start.clone()).unwrap_or_default();
            let mut end = last.clone();
            end.push(0);
            Some(KeyRange { start, end })
        }
    }
}

/// Most bytes a fresh scan batch reserves up front, whatever the largest row seen so far.
const MAX_BATCH_RESERVE: usize = 8 << 20;

/// The TableScan executor.
#[derive(Debug)]
pub struct TableScanExecutor {
    schema: Vec<FieldType>,
    cols: Arc<ScanColumns>,
    counters: ScanCounters,
    walk: RangeWalk,
    /// The last batch's pairs, reused when no batch refers to them any more.
    spare: Option<Arc<KvBatch>>,
    stats: ExecStats,
}

impl TableScanExecutor {
    /// Builds a scan over `ranges` (request order, ascending) for the tipb TableScan.
    pub fn new(ts: &tipb::TableScan, ranges: Vec<KeyRange>, cfg: &EvalConfig) -> Result<Self> {
        let pk_ids = &ts.primary_column_ids;
        let common_handle = !pk_ids.is_empty();
        let mut cols = Vec::with_capacity(ts.columns.len());
        for c in &ts.columns {
            let ft = FieldType::from_column(c);
            let et = ft.eval_type()?;
            let kind = ft.value_kind()?;
            let id = c.column_id.unwrap_or(0);
            let source = if (c.pk_handle == Some(true) || id == EXTRA_HANDLE_ID) && !common_handle {
                if et != EvalType::Int {
                    return Err(Error::invalid(format!("handle column {id} is not an integer")));
                }
                Source::IntHandle
            } else if id == EXTRA_PHYSICAL_TABLE_ID || id == EXTRA_PARTITION_ID {
                Source::TableId
            } else if let Some(k) = pk_ids.iter().position(|p| *p == id) {
                Source::PkDatum(k)
            } else {
                Source::Row
            };
            let mut col =
                ScanCol { id, ft, et, kind, source, default: None, elems: c.elems.clone() };
            if let Some(d) = c.default_val.as_deref().filter(|d| !d.is_empty()) {
                let mut one = VecCol::new(et, 1);
                push_datum(&col, &mut Reader::new(d), &mut one, &cfg.tz)?;
                col.default = Some(one.scalar_at(0));
            }
            cols.push(col);
        }
        let desc = ts.desc == Some(true);
        let n = ranges.len();
        Ok(TableScanExecutor {
            schema: cols.iter().map(|c| c.ft).collect(),
            cols: Arc::new(ScanColumns {
                cols,
                tz: cfg.tz.clone(),
                common_handle,
                decoders: Mutex::default(),
            }),
            counters: ScanCounters {
                counts: vec![0; n],
                ranges,
                last_key: None,
                drained: n == 0,
                desc,
                scanned_bytes: 0,
            },
            walk: RangeWalk::new(n, desc),
            spare: None,
            stats: ExecStats::default(),
        })
    }

    fn check_key(&self, k: &[u8]) -> Result<()> {
        let k = strip_keyspace(k);
        if self.cols.common_handle {
            key::split_record_key(k)?;
        } else {
            key::decode_record_key(k)?;
        }
        Ok(())
    }
}

/// Walks a scan's ranges in scan order into caller-owned arenas, keeping the scan counters:
/// the part TableScan and IndexScan share.
#[derive(Debug)]
pub(super) struct RangeWalk {
    /// Index (in request order) of the range being scanned, in scan order.
    order: Vec<usize>,
    cur: usize,
    started: bool,
    /// The largest average pair size seen, to size the next batch's arena.
    bytes_per_row: usize,
}

impl RangeWalk {
    /// A walk over `n` ranges, backwards when `desc`.
    pub(super) fn new(n: usize, desc: bool) -> RangeWalk {
        let order: Vec<usize> = if desc { (0..n).rev().collect() } else { (0..n).collect() };
        RangeWalk { order, cur: 0, started: false, bytes_per_row: 64 }
    }

    /// A fresh arena for `hint` pairs of the size seen so far. Capped: one huge row must not
    /// make every later batch reserve gigabytes.
    pub(super) fn arena(&self, hint: usize) -> KvBatch {
        KvBatch::with_capacity(hint, hint.saturating_mul(self.bytes_per_row).min(MAX_BATCH_RESERVE))
    }

    /// Appends up to `hint` pairs to `kv`, range after range, and updates `counters` (per-range
    /// counts, drained, bytes, last key). `source_range` may replace a range by the one the
    /// source scans (an index point get).
    pub(super) fn fill(
        &mut self,
        counters: &mut ScanCounters,
        kv: &mut KvBatch,
        hint: usize,
        source: &mut dyn ScanSource,
        source_range: impl Fn(&KeyRange) -> Option<KeyRange>,
    ) -> Result<()> {
        while kv.len() < hint {
            let Some(&ri) = self.order.get(self.cur) else { break };
            let range = counters.ranges.get(ri).ok_or_else(|| Error::invalid("range index"))?;
            if !self.started {
                match source_range(range) {
                    Some(r) => source.start(&r, counters.desc)?,
                    None => source.start(range, counters.desc)?,
                }
                self.started = true;
            }
            let before = kv.len();
            let status = source.next_batch(hint - kv.len(), kv)?;
            if let Some(c) = counters.counts.get_mut(ri) {
                *c += (kv.len() - before) as i64;
            }
            if status == ScanStatus::Done {
                self.cur += 1;
                self.started = false;
            }
        }
        counters.drained = self.cur >= self.order.len();
        counters.scanned_bytes += kv.byte_len() as u64;
        let n = kv.len();
        if n > 0 {
            // The arena holds only what the source copied (keys, or whole pairs).
            self.bytes_per_row = self.bytes_per_row.max(kv.copied_len().div_ceil(n));
        }
        if let Some((k, _)) = n.checked_sub(1).and_then(|l| kv.get(l)) {
            counters.last_key = Some(k.to_vec());
        }
        Ok(())
    }
}

impl Executor for TableScanExecutor {
    fn schema(&self) -> &[FieldType] {
        &self.schema
    }

    fn next_batch(&mut self, hint: usize, env: &mut ExecEnv<'_>) -> Result<BatchResult> {
        // Every batch read passes here, whichever executor consumes it: the limits are
        // checked once per batch scanned.
        env.ctx.check_limits()?;
        let start = Instant::now();
        let hint = hint.max(1);
        // Reuse the previous batch's arena once every reader of it is gone (no allocation,
        // and no fresh zeroed pages, per batch in the steady state).
        let mut kv = match self.spare.take().map(Arc::try_unwrap) {
            Some(Ok(mut kv)) => {
                kv.clear();
                kv
            }
            _ => self.walk.arena(hint),
        };
        self.walk.fill(&mut self.counters, &mut kv, hint, env.source, |_| None)?;
        let drained = self.counters.drained;
        let n = kv.len();
        // Keys are decoded when a handle column is read; the first key is checked here so a
        // range over something other than records of this table fails early.
        if let Some((k, _)) = kv.get(0) {
            self.check_key(k)?;
        }
        let kv = Arc::new(kv);
        let batch = Batch {
            cols: vec![LazyCol::Raw; self.cols.cols.len()],
            logical: (0..n as u32).collect(),
            physical_len: n,
            raw: Some(RawRows::table(TableRows {
                kv: Arc::clone(&kv),
                cols: Arc::clone(&self.cols),
            })),
        };
        self.spare = Some(kv);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::compare::cmp_int;
    use proptest::prelude::*;

    fn ops() -> impl Strategy<Value = CmpOp> {
        prop_oneof![
            Just(CmpOp::Lt),
            Just(CmpOp::Le),
            Just(CmpOp::Gt),
            Just(CmpOp::Ge),
            Just(CmpOp::Eq),
            Just(CmpOp::Ne),
        ]
    }

    /// Values near each other and near the ends of the domains.
    fn ints() -> impl Strategy<Value = i64> {
        prop_oneof![-4i64..4, Just(i64::MIN), Just(i64::MAX), Just(i64::MIN + 1), any::<i64>()]
    }

    proptest! {
        /// The interval keeps exactly what every comparison through its operator keeps, for
        /// a signed column against signed and unsigned constants (`cmp_int`).
        #[test]
        fn an_interval_keeps_what_its_comparisons_keep(
            cmps in proptest::collection::vec((ops(), ints(), any::<bool>()), 1..5),
            xs in proptest::collection::vec(ints(), 1..16),
        ) {
            let run: Vec<ConstCmp> = cmps
                .iter()
                .map(|&(op, k, ku)| ConstCmp { op, konst: Scalar::Int(k), unsigned: (false, ku) })
                .collect();
            let iv = Interval::of(&run, |c| match c.konst {
                Scalar::Int(k) => Some(int_key(k, c.unsigned.1)),
                _ => None,
            })
            .unwrap();
            for x in xs {
                let want =
                    cmps.iter().all(|&(op, k, ku)| op.ordering_test()(cmp_int(x, false, k, ku)));
                prop_assert_eq!(iv.holds(i128::from(x)), want, "{:?} {}", cmps, x);
            }
        }

        /// The same over the whole `i128` domain, bounds at its ends included.
        #[test]
        fn an_interval_over_i128_keeps_what_its_comparisons_keep(
            cmps in proptest::collection::vec(
                (ops(), prop_oneof![-3i128..3, Just(i128::MIN), Just(i128::MAX)]),
                1..4,
            ),
            x in prop_oneof![-4i128..4, Just(i128::MIN), Just(i128::MAX), Just(i128::MAX - 1)],
        ) {
            // Each constant carried as its bytes (`konst` reads it back).
            let run: Vec<ConstCmp> = cmps
                .iter()
                .map(|&(op, k)| ConstCmp {
                    op,
                    konst: Scalar::Bytes(k.to_le_bytes().to_vec()),
                    unsigned: (false, false),
                })
                .collect();
            let iv = Interval::of(&run, |c| match &c.konst {
                Scalar::Bytes(b) => Some(i128::from_le_bytes(b.as_slice().try_into().ok()?)),
                _ => None,
            })
            .unwrap();
            let want = cmps.iter().all(|&(op, k)| op.ordering_test()(x.cmp(&k)));
            prop_assert_eq!(iv.holds(x), want);
        }
    }

    #[test]
    fn a_null_safe_comparison_has_no_interval() {
        let c = ConstCmp { op: CmpOp::NullEq, konst: Scalar::Int(1), unsigned: (false, false) };
        assert_eq!(Interval::of(&[c], |_| Some(1)), None);
    }
}
