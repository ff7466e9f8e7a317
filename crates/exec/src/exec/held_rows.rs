//! The rows TopN and partition TopN hold: the kept rows' columns and their evaluated sort
//! keys, as columns, with no allocation per row.
//!
//! Rows are appended batch by batch (each value copied into the held columns, strings into
//! their byte arenas); ordering compares key columns in place; cutting to the best `limit`
//! selects and sorts row indexes, then gathers every column once. Ties keep input order: a
//! held row's index is its place in the input among the held rows (a cut keeps the order of
//! equal keys and rows come after it in input order), so the index breaks ties.

use std::cmp::Ordering;

use rcop_datum::{Decimal, VectorRef};

use crate::batch::Batch;
use crate::column::{BytesVec, ColData, Elem, EnumT, JsonT, VecCol};
use crate::error::Result;
use crate::expr::Node;
use crate::expr::eval::cmp_int;
use crate::types::{Collation, EvalType, FieldType};

/// A value of a column borrowed for a comparison.
#[derive(Clone, Copy)]
enum KeyRef<'a> {
    Null,
    Int(i64),
    Real(f64),
    Decimal(Decimal),
    /// A fixed-point mantissa and its scale.
    Fixed(i128, u8),
    Bytes(&'a [u8]),
    DateTime(rcop_datum::Time),
    Duration(rcop_datum::Duration),
    Json(&'a BytesVec, usize),
    Enum(u64),
    Vector(&'a [u8]),
}

/// Row `i` of `c`, as [`VecCol::scalar_at`] reads it, without copying.
#[inline]
fn key_at(c: &VecCol, i: usize) -> KeyRef<'_> {
    if !c.valid.get(i) {
        return KeyRef::Null;
    }
    fn or_null(v: Option<KeyRef<'_>>) -> KeyRef<'_> {
        v.unwrap_or(KeyRef::Null)
    }
    match &c.data {
        ColData::Int(v) => or_null(v.get(i).map(|x| KeyRef::Int(*x))),
        ColData::Real(v) => or_null(v.get(i).map(|x| KeyRef::Real(*x))),
        ColData::Decimal(v) => or_null(v.get(i).map(|x| KeyRef::Decimal(*x))),
        ColData::Fixed(v) => or_null(v.m.get(i).map(|m| KeyRef::Fixed(*m, v.scale))),
        ColData::Bytes(v) => KeyRef::Bytes(v.get(i)),
        ColData::DateTime(v) => or_null(v.get(i).map(|x| KeyRef::DateTime(*x))),
        ColData::Duration(v) => or_null(v.get(i).map(|x| KeyRef::Duration(*x))),
        ColData::Json(v) => KeyRef::Json(v, i),
        ColData::Enum(v) => KeyRef::Enum(EnumT::get(v, i).value),
        ColData::Vector(v) => KeyRef::Vector(v.get(i)),
    }
}

/// A fixed-point value as a decimal; `None` where [`VecCol::scalar_at`] reads NULL.
#[inline]
fn fixed_decimal(m: i128, scale: u8) -> Option<Decimal> {
    crate::fixed::from_fixed(m, scale)
}

/// Compares two values as [`cmp_scalar`](super::top_n::cmp_scalar) compares their scalars:
/// NULL first, strings by collation.
fn cmp_key(a: KeyRef<'_>, b: KeyRef<'_>, ft: &FieldType) -> Ordering {
    use KeyRef as K;
    // A fixed-point value that no decimal holds reads NULL, as `scalar_at` reads it.
    fn norm(k: KeyRef<'_>) -> KeyRef<'_> {
        match k {
            KeyRef::Fixed(m, s) => fixed_decimal(m, s).map_or(KeyRef::Null, KeyRef::Decimal),
            k => k,
        }
    }
    if let (K::Fixed(x, s), K::Fixed(y, t)) = (a, b)
        && s == t
        && fixed_decimal(0, s).is_some()
    {
        // One scale that decimals hold: the mantissas order as the values.
        return x.cmp(&y);
    }
    match (norm(a), norm(b)) {
        (K::Null, K::Null) => Ordering::Equal,
        (K::Null, _) => Ordering::Less,
        (_, K::Null) => Ordering::Greater,
        (K::Int(x), K::Int(y)) => cmp_int(x, ft.is_unsigned(), y, ft.is_unsigned()),
        (K::Real(x), K::Real(y)) => crate::expr::compare::cmp_real(x, y),
        (K::Decimal(x), K::Decimal(y)) => x.cmp(&y),
        (K::Bytes(x), K::Bytes(y)) => ft.collation().unwrap_or(Collation::Binary).compare(x, y),
        (K::DateTime(x), K::DateTime(y)) => x.cmp(&y),
        (K::Duration(x), K::Duration(y)) => x.cmp(&y),
        (K::Json(x, i), K::Json(y, j)) => {
            JsonT::get(x, i).compare(&JsonT::get(y, j)).unwrap_or(Ordering::Equal)
        }
        (K::Enum(x), K::Enum(y)) => x.cmp(&y),
        (K::Vector(x), K::Vector(y)) => match (VectorRef::decode(x), VectorRef::decode(y)) {
            (Ok(x), Ok(y)) => x.cmp_vec(&y),
            _ => Ordering::Equal,
        },
        _ => Ordering::Equal,
    }
}

/// Compares row `i` of `a` with row `j` of `b` under `ft`, as
/// [`cmp_scalar`](super::top_n::cmp_scalar) compares `a.scalar_at(i)` and `b.scalar_at(j)`.
#[inline]
pub(crate) fn cmp_at(a: &VecCol, i: usize, b: &VecCol, j: usize, ft: &FieldType) -> Ordering {
    cmp_key(key_at(a, i), key_at(b, j), ft)
}

/// True when row `i` of `a` and row `j` of `b` are one partition key, as
/// [`same_key`](super::top_n::same_key) says of their scalars.
#[inline]
pub(crate) fn same_at(a: &VecCol, i: usize, b: &VecCol, j: usize, ft: &FieldType) -> bool {
    match (key_at(a, i), key_at(b, j)) {
        (KeyRef::Real(x), KeyRef::Real(y)) => x == y,
        (x, y) => cmp_key(x, y, ft) == Ordering::Equal,
    }
}

/// The bytes one value of `data` takes in a held column (its slot, its bytes if any).
#[inline]
fn slot_bytes(data: &ColData, value_len: usize) -> usize {
    match data {
        ColData::Int(_) | ColData::Real(_) => 8,
        ColData::Decimal(_) => std::mem::size_of::<Decimal>(),
        ColData::Fixed(_) => 16,
        ColData::DateTime(_) => std::mem::size_of::<rcop_datum::Time>(),
        ColData::Duration(_) => std::mem::size_of::<rcop_datum::Duration>(),
        ColData::Bytes(_) | ColData::Json(_) | ColData::Enum(_) | ColData::Vector(_) => {
            std::mem::size_of::<usize>() + value_len
        }
    }
}

/// Appends row `i` of `src` to `dst`, as `dst.push_scalar(&src.scalar_at(i))` does, without
/// the scalar; returns the bytes the value takes in `dst`.
pub(crate) fn push_row(dst: &mut VecCol, src: &VecCol, i: usize) -> usize {
    let valid = src.valid.get(i);
    let mut len = 0;
    let ok = valid
        && match (&mut dst.data, &src.data) {
            (ColData::Int(d), ColData::Int(s)) => push_copy(d, s.get(i).copied()),
            (ColData::Real(d), ColData::Real(s)) => push_copy(d, s.get(i).copied()),
            (ColData::Decimal(d), ColData::Decimal(s)) => push_copy(d, s.get(i).copied()),
            (ColData::Decimal(d), ColData::Fixed(s)) => {
                push_copy(d, s.m.get(i).and_then(|m| fixed_decimal(*m, s.scale)))
            }
            (ColData::DateTime(d), ColData::DateTime(s)) => push_copy(d, s.get(i).copied()),
            (ColData::Duration(d), ColData::Duration(s)) => push_copy(d, s.get(i).copied()),
            (ColData::Bytes(d), ColData::Bytes(s)) | (ColData::Vector(d), ColData::Vector(s)) => {
                let v = s.get(i);
                len = v.len();
                d.push(v);
                true
            }
            (ColData::Json(d), ColData::Json(s)) => {
                let j = JsonT::get(s, i);
                let before = d.len();
                d.push_json(j);
                len = d.get(before).len();
                true
            }
            (ColData::Enum(d), ColData::Enum(s)) => {
                let e = EnumT::get(s, i);
                d.push_enum(e.value, e.name);
                len = 8 + e.name.len();
                true
            }
            _ => false,
        };
    if ok {
        dst.valid.push(true);
    } else {
        dst.push_null();
    }
    slot_bytes(&dst.data, len)
}

/// Pushes `v` if there is one; false when there is none.
#[inline]
fn push_copy<T>(d: &mut Vec<T>, v: Option<T>) -> bool {
    match v {
        Some(x) => {
            d.push(x);
            true
        }
        None => false,
    }
}

/// Empties `c`, keeping its buffers.
pub(crate) fn clear(c: &mut VecCol) {
    match &mut c.data {
        ColData::Int(v) => v.clear(),
        ColData::Real(v) => v.clear(),
        ColData::Decimal(v) => v.clear(),
        ColData::Fixed(v) => v.m.clear(),
        ColData::DateTime(v) => v.clear(),
        ColData::Duration(v) => v.clear(),
        ColData::Bytes(v) | ColData::Json(v) | ColData::Enum(v) | ColData::Vector(v) => {
            v.retain_ascending(&[])
        }
    }
    c.valid.clear();
}

/// The bytes the values of `c` take (see [`slot_bytes`]).
fn col_bytes(c: &VecCol) -> usize {
    match &c.data {
        ColData::Bytes(v) | ColData::Json(v) | ColData::Enum(v) | ColData::Vector(v) => {
            (0..v.len()).map(|i| slot_bytes(&c.data, v.get(i).len())).sum()
        }
        d => d.len() * slot_bytes(d, 0),
    }
}

/// One sort key: its expression, whether it is descending, the type it compares under.
pub(crate) type OrderBy = (Node, bool, FieldType);

/// Held rows: the columns of the child's schema and the sort keys, row `r` of each being
/// one held row.
#[derive(Debug)]
pub(crate) struct HeldRows {
    cols: Vec<VecCol>,
    keys: Vec<VecCol>,
    len: usize,
    /// The bytes of the held values (see [`slot_bytes`]), plus a row index each.
    bytes: usize,
    /// After a cut that left exactly `limit` rows, the last of them (`limit - 1`): the worst
    /// of the best rows so far; a row that does not sort before it can never be kept.
    worst: Option<usize>,
    /// Scratch: the row order of a cut.
    perm: Vec<u32>,
}

impl HeldRows {
    /// No rows, with columns for `schema` and for keys of eval types `keys`.
    pub(crate) fn new(
        schema: &[FieldType],
        keys: impl IntoIterator<Item = EvalType>,
    ) -> Result<Self> {
        let mut cols = Vec::with_capacity(schema.len());
        for ft in schema {
            cols.push(VecCol::new(ft.eval_type()?, 0));
        }
        Ok(HeldRows {
            cols,
            keys: keys.into_iter().map(|et| VecCol::new(et, 0)).collect(),
            len: 0,
            bytes: 0,
            worst: None,
            perm: Vec::new(),
        })
    }

    /// Number of rows held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bytes the held rows take.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// False when a cut to `limit` rows was made and row `i` of `keys` does not sort before
    /// the worst row kept (so it would not be kept either).
    #[inline]
    pub(crate) fn admits(&self, keys: &[VecCol], i: usize, order_by: &[OrderBy]) -> bool {
        let Some(worst) = self.worst else {
            return true;
        };
        cmp_keys(keys, i, &self.keys, worst, order_by) == Ordering::Less
    }

    /// Appends physical row `phys` of `batch` (its decoded columns; a column not decoded
    /// is NULL) with row `i` of `keys` as its sort keys.
    pub(crate) fn push(&mut self, batch: &Batch, phys: usize, keys: &[VecCol], i: usize) {
        let mut bytes = 4;
        for (c, dst) in self.cols.iter_mut().enumerate() {
            bytes += match batch.decoded(c) {
                Some(src) => push_row(dst, src, phys),
                None => {
                    dst.push_null();
                    slot_bytes(&dst.data, 0)
                }
            };
        }
        for (dst, src) in self.keys.iter_mut().zip(keys) {
            bytes += push_row(dst, src, i);
        }
        self.bytes += bytes;
        self.len += 1;
    }

    /// Appends held row `r` of `other` (which has the same schema), without its keys.
    fn push_held(&mut self, other: &HeldRows, r: usize) {
        let mut bytes = 4;
        for (dst, src) in self.cols.iter_mut().zip(&other.cols) {
            bytes += push_row(dst, src, r);
        }
        self.bytes += bytes;
        self.len += 1;
    }

    /// Keeps the best `limit` rows under `order_by` (ties in input order), sorted.
    pub(crate) fn keep_top(&mut self, order_by: &[OrderBy], limit: usize) {
        let mut perm = std::mem::take(&mut self.perm);
        perm.clear();
        perm.extend(0..self.len as u32);
        let cmp = |a: &u32, b: &u32| {
            cmp_keys(&self.keys, *a as usize, &self.keys, *b as usize, order_by)
                .then_with(|| a.cmp(b))
        };
        if perm.len() > limit {
            match limit.checked_sub(1) {
                Some(nth) => {
                    perm.select_nth_unstable_by(nth, cmp);
                }
                None => perm.clear(),
            }
            perm.truncate(limit);
        }
        perm.sort_unstable_by(cmp);
        let identity =
            perm.len() == self.len && perm.iter().enumerate().all(|(k, &r)| k == r as usize);
        if !identity {
            for c in self.cols.iter_mut().chain(self.keys.iter_mut()) {
                *c = c.gather(&perm);
            }
            self.len = perm.len();
            self.bytes =
                self.len * 4 + self.cols.iter().chain(&self.keys).map(col_bytes).sum::<usize>();
        }
        self.worst = if self.len == limit { limit.checked_sub(1) } else { None };
        self.perm = perm;
    }

    /// Moves every held row (in held order) to the end of `out` and empties this one.
    pub(crate) fn drain_into(&mut self, out: &mut HeldRows) {
        for r in 0..self.len {
            out.push_held(self, r);
        }
        self.cols.iter_mut().chain(self.keys.iter_mut()).for_each(clear);
        self.len = 0;
        self.bytes = 0;
        self.worst = None;
    }

    /// Held rows `from..from + n` as a batch (the columns themselves when that is all of
    /// them, a copy of those rows otherwise).
    pub(crate) fn batch(&mut self, from: usize, n: usize) -> Batch {
        let n = n.min(self.len.saturating_sub(from));
        let cols = if from == 0 && n == self.len {
            self.cols
                .iter_mut()
                .map(|c| {
                    let empty = VecCol::new(c.eval_type(), 0);
                    std::mem::replace(c, empty)
                })
                .collect()
        } else {
            let rows: Vec<u32> = (from as u32..(from + n) as u32).collect();
            self.cols.iter().map(|c| c.gather(&rows)).collect()
        };
        let mut batch = Batch::from_cols(cols);
        batch.logical = (0..n as u32).collect();
        batch.physical_len = n;
        batch
    }
}

/// Compares row `i` of keys `a` with row `j` of keys `b` in `order_by`'s order (each key
/// descending or not, under its type); rows whose keys all tie are Equal.
#[inline]
fn cmp_keys(a: &[VecCol], i: usize, b: &[VecCol], j: usize, order_by: &[OrderBy]) -> Ordering {
    for ((x, y), (_, desc, ft)) in a.iter().zip(b).zip(order_by) {
        let o = cmp_at(x, i, y, j, ft);
        let o = if *desc { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}
