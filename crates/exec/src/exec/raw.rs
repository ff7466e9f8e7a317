//! The undecoded rows behind a batch's raw columns, whichever scan read them.

use crate::column::{Scalar, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::exec::index_scan::IndexRows;
use crate::exec::table_scan::TableRows;
use crate::expr::compare::CmpOp;

/// Undecoded scan rows behind a batch's [`LazyCol::Raw`](crate::LazyCol::Raw) columns: the
/// pairs a scan read, decoded column by column when something reads them.
#[derive(Debug, Clone)]
pub struct RawRows(Inner);

#[derive(Debug, Clone)]
enum Inner {
    Table(TableRows),
    Index(IndexRows),
}

impl RawRows {
    pub(crate) fn table(rows: TableRows) -> RawRows {
        RawRows(Inner::Table(rows))
    }

    pub(crate) fn index(rows: IndexRows) -> RawRows {
        RawRows(Inner::Index(rows))
    }

    /// Decodes column `j` for the logical rows (other physical slots are NULL).
    pub fn decode_column(
        &self,
        j: usize,
        logical: &[u32],
        physical_len: usize,
        ctx: &EvalContext,
    ) -> Result<VecCol> {
        let mut v = self.decode_columns(&[j], logical, physical_len, ctx)?;
        v.pop().ok_or_else(|| Error::invalid("no column decoded"))
    }

    /// Decodes the columns `js` for the logical rows, in one pass over the rows where the
    /// format allows it (other physical slots are NULL).
    pub fn decode_columns(
        &self,
        js: &[usize],
        logical: &[u32],
        physical_len: usize,
        ctx: &EvalContext,
    ) -> Result<Vec<VecCol>> {
        self.decode_into(js, logical, Slots::Physical(physical_len), ctx)
    }

    /// Decodes the columns `js` for the logical rows into columns of `logical.len()` rows,
    /// row `n` holding row `logical[n]`: what [`decode_columns`](Self::decode_columns)
    /// followed by a gather of the logical rows gives, without the NULL slots in between
    /// or the copy (a batch being [compacted](crate::Batch::ensure_compact)). Only the
    /// logical rows are read, in whatever order they come.
    pub fn decode_logical(
        &self,
        js: &[usize],
        logical: &[u32],
        ctx: &EvalContext,
    ) -> Result<Vec<VecCol>> {
        self.decode_into(js, logical, Slots::Logical, ctx)
    }

    /// Keeps the logical rows whose value of column `j` satisfies every comparison of
    /// `cmps`, reading each value straight from its row: no column is decoded and `j` stays
    /// raw. Keeps exactly the rows that decoding the column and comparing its values keeps.
    /// `false`, with `logical` untouched, when it cannot (the rows come from an index scan,
    /// the column's type or a constant has no typed comparison here, a value is missing,
    /// does not decode or takes the general decoder, or the logical rows do not ascend): the
    /// caller then decodes the column, which also reports a corrupt row.
    pub(crate) fn retain_cmp(&self, j: usize, cmps: &[ConstCmp], logical: &mut Vec<u32>) -> bool {
        match &self.0 {
            Inner::Table(t) => t.retain_cmp(j, cmps, logical),
            Inner::Index(_) => false,
        }
    }

    /// Calls `each` with the values of the string columns `js` of each logical row, in
    /// order, read straight from the scan's rows (`None`: NULL): the bytes decoding the
    /// columns gives, without decoding them. Stops when `each` returns `false`. `false` when
    /// `each` stopped or the values cannot be read that way (the rows come from an index
    /// scan, a column is not a string read from the row value, a value is missing from its
    /// row, a row does not decode): the caller then decodes the columns.
    pub(crate) fn string_cells<'s>(
        &'s self,
        js: &[usize],
        logical: &[u32],
        each: impl FnMut(&[Option<&'s [u8]>]) -> bool,
    ) -> bool {
        match &self.0 {
            Inner::Table(t) => t.string_cells(js, logical, each),
            Inner::Index(_) => false,
        }
    }

    fn decode_into(
        &self,
        js: &[usize],
        logical: &[u32],
        slots: Slots,
        ctx: &EvalContext,
    ) -> Result<Vec<VecCol>> {
        match &self.0 {
            Inner::Table(t) => t.decode_columns(js, logical, slots, ctx),
            Inner::Index(i) => i.decode_columns(js, logical, slots),
        }
    }
}

/// `column op konst`: one comparison of a column with a constant, for
/// [`RawRows::retain_cmp`] (`<=>` is not one: its NULL rule differs).
#[derive(Debug, Clone)]
pub(crate) struct ConstCmp {
    pub op: CmpOp,
    pub konst: Scalar,
    /// Whether the column and the constant are unsigned (integers).
    pub unsigned: (bool, bool),
}

/// The rows a decoded column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slots {
    /// One per physical row (this many): the logical rows' values, NULL elsewhere when the
    /// logical rows ascend (otherwise every row is decoded).
    Physical(usize),
    /// One per logical row, in the selection's order.
    Logical,
}

impl Slots {
    /// The rows to decode, in the order their values are appended: the logical rows, or
    /// every physical row when NULL slots are filled and the logical rows are not in
    /// physical order (`all` holds them then).
    pub(crate) fn rows<'a>(self, logical: &'a [u32], all: &'a mut Vec<u32>) -> &'a [u32] {
        match self {
            Slots::Physical(len) if !logical.windows(2).all(|w| w.first() < w.get(1)) => {
                *all = (0..len as u32).collect();
                all
            }
            _ => logical,
        }
    }

    /// How many slots a column gets, for `logical` rows.
    pub(crate) fn len(self, logical: &[u32]) -> usize {
        match self {
            Slots::Physical(len) => len,
            Slots::Logical => logical.len(),
        }
    }

    /// The NULL slots to append before the value of physical row `r` when the next slot to
    /// fill is physical row `at` (none when only the logical rows have slots).
    #[inline(always)]
    pub(crate) fn gap(self, at: usize, r: usize) -> usize {
        match self {
            Slots::Physical(_) => r.saturating_sub(at),
            Slots::Logical => 0,
        }
    }

    /// The NULL slots to append after the last value when the next slot to fill is
    /// physical row `at`.
    pub(crate) fn tail(self, at: usize) -> usize {
        match self {
            Slots::Physical(len) => len.saturating_sub(at),
            Slots::Logical => 0,
        }
    }
}
