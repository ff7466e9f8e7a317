//! Reading index entries: each pair is split into one cell per raw column when it is scanned
//! (where TiKV's `process_kv_pair` splits it into raw datums, with the same checks), and the
//! cells are decoded into typed columns only when something reads them.

use std::sync::Arc;

use rcop_datum::codec::{self, Reader};
use rcop_datum::datum::{self as dm, flag, split_datum};
use rcop_datum::index::{self as ix, MAX_OLD_ENCODED_VALUE_LEN};
use rcop_datum::row::v2::{Lookup, RowSlice, decode_v2_u64};
use rcop_datum::{Tz, key};

use crate::column::{BytesT, Elem, IntT, VecCol};
use crate::error::{Error, Result};
use crate::exec::raw::Slots;
use crate::exec::table_scan::{ScanCol, push_datum, push_v2, strip_keyspace};
use crate::scan::KvBatch;
use crate::types::{EvalType, FieldType};
use rcop_datum::chunk::mysql_type as mt;

/// How a string column's value comes back from the restored data of a new-collation index
/// value (TiDB `types.NeedRestoredData`, TiKV `restore_original_data`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Restore {
    /// The key holds the value (non-strings, `binary`, `_bin` CHAR and TEXT, new collation off).
    No,
    /// A `_bin` VARCHAR: the key holds the value without its trailing spaces, the restored
    /// data how many there were.
    TailSpaces,
    /// Any other collation: the key holds the sort key, the restored data the value.
    Full,
}

/// Most trailing spaces a restored `_bin` value may claim: TiDB's largest entry
/// (`txn-entry-size-limit` tops out at 120 MiB), so a corrupt count cannot make the engine
/// allocate more than a real value could hold.
const MAX_TAIL_SPACES: u64 = 120 << 20;

/// How a column's value is restored. This is the `_ci` hook: a collation that
/// [`FieldType::collation`] accepts and that is neither `binary` nor a `_bin` one reads its
/// values from the restored data ([`Restore::Full`]), which needs no weight table. Until the
/// collation is supported, `collation()` makes it an `Unsupported` error here.
pub(super) fn restore_kind(ft: &FieldType, et: EvalType) -> Result<Restore> {
    if et != EvalType::Bytes {
        return Ok(Restore::No);
    }
    ft.collation()?;
    Ok(match ft.collate {
        // Old-framework ids (new collation off): TiDB writes no restored data.
        0.. => Restore::No,
        // binary, utf8mb4_0900_bin: the sort key is the value.
        -63 | -309 => Restore::No,
        // utf8mb4_bin, utf8_bin, ascii_bin, latin1_bin (TiDB `collate.IsBinCollation`): only
        // VARCHARs carry restored data. Not gbk_bin / gb18030_bin: their keys hold GBK /
        // GB18030 codes, so TiDB stores the whole value.
        -46 | -83 | -65 | -47 => match ft.tp {
            mt::VARCHAR | mt::VAR_STRING => Restore::TailSpaces,
            _ => Restore::No,
        },
        _ => Restore::Full,
    })
}

/// One raw (lazily decoded) column of the scan.
#[derive(Debug)]
pub(super) struct RawCol {
    pub(super) col: ScanCol,
    pub(super) et: EvalType,
    pub(super) id: i64,
    pub(super) restore: Restore,
}

/// Where the handle of an entry is and what the scan returns of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HandleKind {
    /// No handle column.
    None,
    /// An int handle column (decoded as the entry is read).
    Int,
    /// This many common-handle columns (raw, after the index columns).
    Common(usize),
}

/// The scan's columns: raw index columns, then raw common-handle columns (schema positions
/// `0..raw.len()`), then the decoded int handle, partition id and physical table id columns.
#[derive(Debug)]
pub(crate) struct Layout {
    pub(super) raw: Vec<RawCol>,
    pub(super) n_index: usize,
    pub(super) handle: HandleKind,
    pub(super) pid: bool,
    pub(super) ptid: bool,
    pub(super) tz: Tz,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Form {
    /// NULL.
    #[default]
    Null,
    /// One datum, key or value mode.
    Datum,
    /// A row v2 value.
    V2,
    /// A bytes datum followed by `pad` spaces.
    Padded,
}

/// Where one raw column's value of one entry is: a span of the key or of the value.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Cell {
    form: Form,
    in_value: bool,
    start: u32,
    end: u32,
    pad: u32,
}

/// The decoded columns filled as entries are read: int handle, partition id, physical
/// table id (those the scan returns).
#[derive(Debug)]
pub(super) struct Eager {
    pub(super) handle: VecCol,
    pub(super) pid: VecCol,
    pub(super) ptid: VecCol,
}

impl Eager {
    pub(super) fn new(cap: usize) -> Eager {
        let c = || VecCol::new(EvalType::Int, cap);
        Eager { handle: c(), pid: c(), ptid: c() }
    }
}

fn corrupt(msg: impl Into<String>) -> Error {
    Error::invalid(format!("corrupt index entry: {}", msg.into()))
}

fn pos(x: usize) -> Result<u32> {
    u32::try_from(x).map_err(|_| corrupt("index entry over 4 GiB"))
}

/// The offset of `sub` in `base` (`sub` is a subslice of `base`).
fn offset_in(base: &[u8], sub: &[u8]) -> usize {
    (sub.as_ptr() as usize).wrapping_sub(base.as_ptr() as usize).min(base.len())
}

/// Splits `out.len()` datums off `data` (which starts at `at` in its key or value) into `out`.
fn split_datums<'a>(
    mut data: &'a [u8],
    mut at: usize,
    in_value: bool,
    out: &mut [Cell],
) -> Result<&'a [u8]> {
    for (i, cell) in out.iter_mut().enumerate() {
        if data.is_empty() {
            return Err(corrupt(format!("column {i} is missing its value")));
        }
        let (one, rest) = split_datum(data)?;
        *cell = Cell {
            form: Form::Datum,
            in_value,
            start: pos(at)?,
            end: pos(at + one.len())?,
            pad: 0,
        };
        at += one.len();
        data = rest;
    }
    Ok(data)
}

/// Skips `n` datums.
fn skip_datums(data: &[u8], n: usize) -> Result<&[u8]> {
    let mut r = Reader::new(data);
    for _ in 0..n {
        dm::skip_datum(&mut r)?;
    }
    Ok(r.rest())
}

/// An int handle stored in a key: a comparable i64 or a u64 datum.
fn int_handle_from_key(data: &[u8]) -> Result<i64> {
    let mut r = Reader::new(data);
    match r.read_u8("index key handle")? {
        flag::INT => Ok(codec::decode_i64(&mut r)?),
        flag::UINT => Ok(codec::decode_u64(&mut r)? as i64),
        f => Err(corrupt(format!("unexpected handle flag {f}"))),
    }
}

/// An int handle stored in a value: 8 big-endian bytes.
fn int_handle_from_value(data: &[u8]) -> Result<i64> {
    match data.get(..8).and_then(|b| <[u8; 8]>::try_from(b).ok()) {
        Some(b) => Ok(u64::from_be_bytes(b) as i64),
        None => Err(corrupt("value too short for its int handle")),
    }
}

impl Layout {
    /// Reads one entry: appends a cell per raw column to `cells` and the decoded columns'
    /// values to `eager`. `version` is the index value version, taken from the scan's first
    /// value and kept for the rest, as TiKV does.
    pub(super) fn process(
        &self,
        full_key: &[u8],
        value: &[u8],
        version: &mut Option<u8>,
        cells: &mut Vec<Cell>,
        eager: &mut Eager,
    ) -> Result<()> {
        let table_key = strip_keyspace(full_key);
        let (_, _, payload) = key::split_index_key(table_key)?;
        let poff = full_key.len() - payload.len();
        let v = match *version {
            Some(v) => v,
            None => *version.insert(ix::index_version(value)?),
        };
        let base = cells.len();
        cells.resize(base + self.raw.len(), Cell::default());
        let row = cells.get_mut(base..).unwrap_or_default();
        if value.len() > MAX_OLD_ENCODED_VALUE_LEN {
            self.process_general(table_key, full_key, payload, poff, value, v, row, eager)
        } else {
            self.process_old(table_key, payload, poff, value, row, eager)
        }
    }

    /// The old layout: columns from the key; the handle from the key, or (a unique index of
    /// an int-handle table, nothing left in the key) from the value.
    fn process_old(
        &self,
        table_key: &[u8],
        payload: &[u8],
        poff: usize,
        value: &[u8],
        row: &mut [Cell],
        eager: &mut Eager,
    ) -> Result<()> {
        if self.pid {
            return Err(corrupt("a partition id column over a value without a partition id"));
        }
        if self.ptid {
            IntT::push(&mut eager.ptid, Some(key::decode_table_id(table_key)?));
        }
        let (idx, ch) = row.split_at_mut(self.n_index.min(row.len()));
        let rest = split_datums(payload, poff, false, idx)?;
        match self.handle {
            HandleKind::None => {}
            HandleKind::Int if rest.is_empty() => {
                IntT::push(&mut eager.handle, Some(int_handle_from_value(value)?));
            }
            HandleKind::Int => IntT::push(&mut eager.handle, Some(int_handle_from_key(rest)?)),
            HandleKind::Common(_) => {
                split_datums(rest, poff + (payload.len() - rest.len()), false, ch)?;
            }
        }
        Ok(())
    }

    /// The new layouts (version 0 and clustered version 1).
    #[expect(clippy::too_many_arguments, reason = "one entry's parts, passed down once")]
    fn process_general(
        &self,
        table_key: &[u8],
        full_key: &[u8],
        payload: &[u8],
        poff: usize,
        value: &[u8],
        version: u8,
        row: &mut [Cell],
        eager: &mut Eager,
    ) -> Result<()> {
        let parts = ix::split_index_value(value, version)?;
        if !parts.common_handle.is_empty() && !matches!(self.handle, HandleKind::Common(_)) {
            return Err(corrupt("a common handle in the value of a scan without one"));
        }
        if self.pid && parts.partition_id.is_none() {
            return Err(corrupt("a partition id column over a value without a partition id"));
        }
        let restored =
            if parts.restored.is_empty() { None } else { Some(RowSlice::parse(parts.restored)?) };
        if self.ptid {
            let id = match parts.partition_id {
                Some(p) => p,
                None => key::decode_table_id(table_key)?,
            };
            IntT::push(&mut eager.ptid, Some(id));
        }
        let (idx, ch) = row.split_at_mut(self.n_index.min(row.len()));
        let (idx_cols, ch_cols) = self.raw.split_at(self.n_index.min(self.raw.len()));
        // The index columns.
        match restored {
            Some(rs) if version != 1 => {
                // TiDB 4.0 layout: the restored data holds every index column.
                for (c, cell) in idx_cols.iter().zip(idx.iter_mut()) {
                    *cell = match rs.get(c.id) {
                        Lookup::Value(b) => v2_cell(value, b)?,
                        Lookup::Null => Cell::default(),
                        Lookup::Missing => {
                            return Err(corrupt(format!("restored data lacks column {}", c.id)));
                        }
                    };
                }
            }
            _ => {
                split_datums(payload, poff, false, idx)?;
                if let (Some(rs), true) = (restored, version == 1) {
                    restore(idx_cols, idx, full_key, value, &rs)?;
                }
            }
        }
        // The handle.
        match self.handle {
            HandleKind::None => {}
            HandleKind::Int if parts.tail.len() < 8 => {
                let rest = skip_datums(payload, self.n_index)?;
                IntT::push(&mut eager.handle, Some(int_handle_from_key(rest)?));
            }
            HandleKind::Int => {
                IntT::push(&mut eager.handle, Some(int_handle_from_value(parts.tail)?));
            }
            HandleKind::Common(_) => {
                if parts.common_handle.is_empty() {
                    let rest = skip_datums(payload, self.n_index)?;
                    split_datums(rest, poff + (payload.len() - rest.len()), false, ch)?;
                } else {
                    let at = offset_in(value, parts.common_handle);
                    split_datums(parts.common_handle, at, true, ch)?;
                }
                if let (Some(rs), true) = (restored, version == 1) {
                    restore(ch_cols, ch, full_key, value, &rs)?;
                }
            }
        }
        if self.pid {
            IntT::push(&mut eager.pid, parts.partition_id);
        }
        Ok(())
    }
}

fn v2_cell(value: &[u8], b: &[u8]) -> Result<Cell> {
    let start = offset_in(value, b);
    Ok(Cell {
        form: Form::V2,
        in_value: true,
        start: pos(start)?,
        end: pos(start + b.len())?,
        pad: 0,
    })
}

/// Restores the version 1 values of `cols` (whose datums `cells` hold) from the restored
/// data `rs`: a `_bin` VARCHAR gets its trailing spaces back, another collation's column its
/// value instead of the sort key. NULLs stay NULL.
fn restore(
    cols: &[RawCol],
    cells: &mut [Cell],
    key: &[u8],
    value: &[u8],
    rs: &RowSlice<'_>,
) -> Result<()> {
    for (c, cell) in cols.iter().zip(cells.iter_mut()) {
        if c.restore == Restore::No {
            continue;
        }
        let src = if cell.in_value { value } else { key };
        let datum = src.get(cell.start as usize..cell.end as usize).unwrap_or_default();
        if datum.first() == Some(&flag::NIL) {
            continue;
        }
        let Lookup::Value(b) = rs.get(c.id) else {
            return Err(corrupt(format!("restored data lacks column {}", c.id)));
        };
        match c.restore {
            Restore::TailSpaces => {
                let n = decode_v2_u64(b)?;
                if n > MAX_TAIL_SPACES {
                    return Err(corrupt(format!("{n} trailing spaces restored")));
                }
                cell.form = Form::Padded;
                cell.pad = n as u32;
            }
            Restore::Full | Restore::No => *cell = v2_cell(value, b)?,
        }
    }
    Ok(())
}

/// An index scan's undecoded entries behind a batch's raw columns.
#[derive(Debug, Clone)]
pub(crate) struct IndexRows {
    pub(super) kv: Arc<KvBatch>,
    pub(super) cells: Arc<Vec<Cell>>,
    pub(super) layout: Arc<Layout>,
}

impl IndexRows {
    /// Decodes the raw columns `js` for the logical rows, into the rows `slots` says (with
    /// physical slots and ascending logical rows, the others are NULL; with logical rows out
    /// of order, every row is decoded).
    pub(crate) fn decode_columns(
        &self,
        js: &[usize],
        logical: &[u32],
        slots: Slots,
    ) -> Result<Vec<VecCol>> {
        js.iter().map(|&j| self.decode_column(j, logical, slots)).collect()
    }

    fn decode_column(&self, j: usize, logical: &[u32], slots: Slots) -> Result<VecCol> {
        let nraw = self.layout.raw.len();
        let c = self
            .layout
            .raw
            .get(j)
            .ok_or_else(|| Error::invalid(format!("index scan column {j} is not raw")))?;
        let mut all = Vec::new();
        let rows = slots.rows(logical, &mut all);
        let tz = &self.layout.tz;
        let mut out = VecCol::new(c.et, slots.len(logical));
        let mut buf = Vec::new();
        let mut at = 0usize;
        for &r in rows {
            let r = r as usize;
            let gap = slots.gap(at, r);
            if gap > 0 {
                out.push_nulls(gap);
            }
            at = r + 1;
            let cell = self
                .cells
                .get(r * nraw + j)
                .ok_or_else(|| Error::invalid("index scan row out of range"))?;
            let (k, v) =
                self.kv.get(r).ok_or_else(|| Error::invalid("index scan row out of range"))?;
            let src = if cell.in_value { v } else { k };
            let b = src
                .get(cell.start as usize..cell.end as usize)
                .ok_or_else(|| Error::invalid("index scan cell out of range"))?;
            match cell.form {
                Form::Null => out.push_null(),
                Form::Datum => push_datum(&c.col, &mut Reader::new(b), &mut out, tz)?,
                Form::V2 => push_v2(&c.col, b, &mut out, tz)?,
                Form::Padded => {
                    buf.clear();
                    if dm::decode_bytes_datum(&mut Reader::new(b), &mut buf)? {
                        buf.resize(buf.len() + cell.pad as usize, b' ');
                        BytesT::push(&mut out, Some(&buf));
                    } else {
                        out.push_null();
                    }
                }
            }
        }
        let tail = slots.tail(at);
        if tail > 0 {
            out.push_nulls(tail);
        }
        Ok(out.into_fixed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(collate: i32, tp: u8, restore: Restore) -> Layout {
        let ft = FieldType { collate, ..FieldType::new(tp) };
        let col = ScanCol::plain(3, ft, Vec::new()).unwrap();
        Layout {
            raw: vec![RawCol { col, et: EvalType::Bytes, id: 3, restore }],
            n_index: 1,
            handle: HandleKind::Int,
            pid: false,
            ptid: false,
            tz: Tz::utc(),
        }
    }

    fn scan_one(l: Layout, k: &[u8], v: &[u8]) -> (Vec<u8>, i64) {
        let mut cells = Vec::new();
        let mut eager = Eager::new(1);
        l.process(k, v, &mut None, &mut cells, &mut eager).unwrap();
        let mut kv = KvBatch::new();
        kv.push(k, v);
        let rows = IndexRows { kv: Arc::new(kv), cells: Arc::new(cells), layout: Arc::new(l) }
            .decode_columns(&[0], &[0], Slots::Physical(1))
            .unwrap();
        let s = BytesT::get(BytesT::slice(&rows[0].data).unwrap(), 0).to_vec();
        (s, IntT::get(IntT::slice(&eager.handle.data).unwrap(), 0))
    }

    /// The `_ci` path, ahead of the collation: TiKV's `test_int_handle_char_index` and
    /// `test_int_handle_varchar_index` entries of `c ... collate utf8mb4_unicode_ci` holding
    /// "A " (the key holds the sort key `0E33`, the restored data the value).
    #[test]
    fn ci_columns_read_their_restored_value() {
        let h = |s: &str| hex::decode(s.replace(' ', "")).unwrap();
        let cases = [
            (
                mt::STRING,
                "7480000000000000315f698000000000000003 010e33000000000000f9 038000000000000001",
                "00800001000000030100 41",
                "A",
            ),
            (
                mt::STRING,
                "7480000000000000355f698000000000000007 010e33000000000000f9",
                "0880000100000003010041 0000000000000001",
                "A",
            ),
            (
                mt::VARCHAR,
                "74800000000000003d5f698000000000000003 010e33000000000000f9 038000000000000001",
                "008000010000000302004120",
                "A ",
            ),
        ];
        for (tp, k, v, want) in cases {
            let (k, v) = (h(k), h(v));
            let l = layout(-224, tp, Restore::Full);
            assert_eq!(scan_one(l, &k, &v), (want.as_bytes().to_vec(), 1), "{tp}");
        }
        // A supported `_ci` collation reads restored data; one the engine lacks is refused.
        let ft = FieldType { collate: -224, ..FieldType::new(mt::VARCHAR) };
        assert!(restore_kind(&ft, EvalType::Bytes).is_ok());
        let gb18030_ci = FieldType { collate: -248, ..FieldType::new(mt::VARCHAR) };
        assert!(restore_kind(&gb18030_ci, EvalType::Bytes).is_err());
        let gbk = FieldType { collate: -87, ..FieldType::new(mt::VARCHAR) };
        assert_eq!(restore_kind(&gbk, EvalType::Bytes).unwrap(), Restore::Full);
        let bin = FieldType { collate: -46, ..FieldType::new(mt::VARCHAR) };
        assert_eq!(restore_kind(&bin, EvalType::Bytes).unwrap(), Restore::TailSpaces);
        let char_bin = FieldType { collate: -46, ..FieldType::new(mt::STRING) };
        assert_eq!(restore_kind(&char_bin, EvalType::Bytes).unwrap(), Restore::No);
    }
}
