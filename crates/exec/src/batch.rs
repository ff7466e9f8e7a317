//! A batch of rows flowing between executors: physical columns (decoded lazily) plus the
//! selection vector of logical rows.

use crate::column::VecCol;
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::exec::{ConstCmp, RawRows};

/// One column of a batch.
#[derive(Debug, Clone)]
pub enum LazyCol {
    /// Not decoded yet: the scan that produced the batch can decode it on demand.
    Raw,
    /// Decoded values over the physical rows (only logical rows are meaningful).
    Decoded(VecCol),
}

/// Rows produced by one `next_batch` call.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    /// The physical columns, one per schema column.
    pub cols: Vec<LazyCol>,
    /// The logical rows, as indices into the physical columns, in output order.
    pub logical: Vec<u32>,
    /// Number of physical rows.
    pub physical_len: usize,
    /// The undecoded rows behind [`LazyCol::Raw`] columns.
    pub raw: Option<RawRows>,
}

impl Batch {
    /// A batch of fully decoded columns whose logical rows are all physical rows in order.
    pub fn from_cols(cols: Vec<VecCol>) -> Batch {
        let n = cols.first().map_or(0, VecCol::len);
        Batch {
            cols: cols.into_iter().map(LazyCol::Decoded).collect(),
            logical: (0..n as u32).collect(),
            physical_len: n,
            raw: None,
        }
    }

    /// Decodes the columns `offsets` (for the logical rows) if they are still raw, in one
    /// pass over the rows.
    pub fn ensure(&mut self, offsets: &[usize], ctx: &EvalContext) -> Result<()> {
        let mut raw_cols: Vec<usize> = offsets
            .iter()
            .copied()
            .filter(|&o| matches!(self.cols.get(o), Some(LazyCol::Raw)))
            .collect();
        if raw_cols.is_empty() {
            return Ok(());
        }
        raw_cols.sort_unstable();
        raw_cols.dedup();
        let raw = self.raw.as_ref().ok_or_else(|| Error::invalid("raw column without rows"))?;
        let decoded = raw.decode_columns(&raw_cols, &self.logical, self.physical_len, ctx)?;
        for (o, col) in raw_cols.into_iter().zip(decoded) {
            if let Some(slot) = self.cols.get_mut(o) {
                *slot = LazyCol::Decoded(col);
            }
        }
        Ok(())
    }

    /// Keeps the logical rows whose value of the still raw column `col` satisfies every
    /// comparison of `cmps`, reading the values straight from the scan's rows
    /// ([`RawRows::retain_cmp`]); `false`, with nothing changed, when the column is decoded
    /// already or the values cannot be compared that way.
    pub(crate) fn retain_raw(&mut self, col: usize, cmps: &[ConstCmp]) -> bool {
        if !matches!(self.cols.get(col), Some(LazyCol::Raw)) {
            return false;
        }
        match &self.raw {
            Some(raw) => raw.retain_cmp(col, cmps, &mut self.logical),
            None => false,
        }
    }

    /// Replaces the columns `offsets` by their logical rows, so the logical rows become the
    /// physical rows and reading those columns needs no gathering. Every other column is
    /// dropped (with the raw rows): call it only when nothing else will be read.
    pub fn compact(&mut self, offsets: &[usize]) {
        if self.is_identity() {
            return;
        }
        for (k, &o) in offsets.iter().enumerate() {
            if offsets.get(..k).is_some_and(|seen| seen.contains(&o)) {
                continue;
            }
            if let Some(LazyCol::Decoded(c)) = self.cols.get_mut(o) {
                c.retain_rows(&self.logical);
            }
        }
        let n = self.logical.len();
        for (i, c) in self.cols.iter_mut().enumerate() {
            if !offsets.contains(&i) {
                *c = LazyCol::Raw;
            }
        }
        self.raw = None;
        self.logical = (0..n as u32).collect();
        self.physical_len = n;
    }

    /// [`ensure`](Self::ensure) then [`compact`](Self::compact) of the columns `offsets`,
    /// with the raw ones decoded straight into the logical rows
    /// ([`RawRows::decode_logical`]): no NULL slot for a row the selection dropped, and no
    /// copy afterwards. The same columns as the two calls, for logical rows in physical
    /// order (what every executor produces); for rows out of order, which the two calls
    /// decode over every physical row, only the logical rows are decoded, so a bad value in
    /// another row is not reported. On an error the batch is unchanged.
    pub fn ensure_compact(&mut self, offsets: &[usize], ctx: &EvalContext) -> Result<()> {
        if self.is_identity() {
            return self.ensure(offsets, ctx);
        }
        let mut raw_cols: Vec<usize> = offsets
            .iter()
            .copied()
            .filter(|&o| matches!(self.cols.get(o), Some(LazyCol::Raw)))
            .collect();
        raw_cols.sort_unstable();
        raw_cols.dedup();
        let decoded = match (raw_cols.is_empty(), &self.raw) {
            (true, _) => Vec::new(),
            (false, Some(raw)) => raw.decode_logical(&raw_cols, &self.logical, ctx)?,
            (false, None) => return Err(Error::invalid("raw column without rows")),
        };
        // The columns decoded before keep their logical rows; the new ones hold only those.
        self.compact(offsets);
        for (o, col) in raw_cols.into_iter().zip(decoded) {
            if let Some(slot) = self.cols.get_mut(o) {
                *slot = LazyCol::Decoded(col);
            }
        }
        Ok(())
    }

    /// Decodes every column.
    pub fn ensure_all(&mut self, ctx: &EvalContext) -> Result<()> {
        let all: Vec<usize> = (0..self.cols.len()).collect();
        self.ensure(&all, ctx)
    }

    /// Number of logical rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.logical.len()
    }

    /// True when no row is selected.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.logical.is_empty()
    }

    /// True when the logical rows are exactly the physical rows in order, so columns can be
    /// read without gathering.
    #[inline]
    pub fn is_identity(&self) -> bool {
        self.logical.len() == self.physical_len
            && self.logical.last().is_none_or(|&l| l as usize + 1 == self.physical_len)
            && self.logical.first().is_none_or(|&f| f == 0)
    }

    /// The decoded column `i`, if decoded.
    #[inline]
    pub fn decoded(&self, i: usize) -> Option<&VecCol> {
        match self.cols.get(i) {
            Some(LazyCol::Decoded(c)) => Some(c),
            _ => None,
        }
    }
}
