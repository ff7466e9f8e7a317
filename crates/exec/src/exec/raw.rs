//! The undecoded rows behind a batch's raw columns, whichever scan read them.

use crate::column::VecCol;
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::exec::index_scan::IndexRows;
use crate::exec::table_scan::TableRows;

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
        match &self.0 {
            Inner::Table(t) => t.decode_columns(js, logical, physical_len, ctx),
            Inner::Index(i) => i.decode_columns(js, logical, physical_len),
        }
    }
}
