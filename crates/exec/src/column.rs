//! Columns: a dense value buffer plus a validity bitmap, and scalars.

use rcop_datum::{Decimal, Duration, Json, JsonRef, Time};

use crate::types::EvalType;

mod buffers;
mod json_enum;
pub use buffers::{Bitmap, BytesVec};
pub use json_enum::{EnumRef, EnumT, JsonT, VecT};

/// The values of a column, one variant per [`EvalType`]. NULL slots hold a default value.
#[derive(Debug, Clone, PartialEq)]
pub enum ColData {
    /// Integers (unsigned ones as their bit pattern).
    Int(Vec<i64>),
    /// Reals.
    Real(Vec<f64>),
    /// Decimals.
    Decimal(Vec<Decimal>),
    /// Decimals that all have the same scale and fit an `i128`: exact mantissas
    /// (value = m / 10^scale). An alternative representation of the decimal eval type used by
    /// the fixed-point fast paths; [`VecCol::to_decimal`] turns it into `Decimal`s.
    Fixed(FixedVec),
    /// Byte strings.
    Bytes(BytesVec),
    /// Dates and times.
    DateTime(Vec<Time>),
    /// Durations.
    Duration(Vec<Duration>),
    /// Binary JSON values (type byte and body), each validated when it entered the column;
    /// NULL slots hold JSON `null`.
    Json(BytesVec),
    /// `ENUM` values in TypeChunk's layout: the u64 member index (little-endian), then the
    /// member's name. NULL slots hold index 0 and no name.
    Enum(BytesVec),
    /// `VECTOR(FLOAT32)` values in their binary form (count, elements), each validated when
    /// it entered the column; NULL slots hold `[]`.
    Vector(BytesVec),
}

/// The content of a NULL `ENUM` slot: index 0, no name.
const ENUM_DEFAULT: [u8; 8] = [0; 8];

impl ColData {
    /// An empty column of `et`.
    pub fn new(et: EvalType, cap: usize) -> ColData {
        match et {
            EvalType::Int => ColData::Int(Vec::with_capacity(cap)),
            EvalType::Real => ColData::Real(Vec::with_capacity(cap)),
            EvalType::Decimal => ColData::Decimal(Vec::with_capacity(cap)),
            EvalType::Bytes => ColData::Bytes(BytesVec::with_capacity(cap, 0)),
            EvalType::DateTime => ColData::DateTime(Vec::with_capacity(cap)),
            EvalType::Duration => ColData::Duration(Vec::with_capacity(cap)),
            EvalType::Json => ColData::Json(BytesVec::with_capacity(cap, 0)),
            EvalType::Enum => ColData::Enum(BytesVec::with_capacity(cap, 0)),
            EvalType::VectorFloat32 => ColData::Vector(BytesVec::with_capacity(cap, 0)),
        }
    }

    /// The eval type.
    pub fn eval_type(&self) -> EvalType {
        match self {
            ColData::Int(_) => EvalType::Int,
            ColData::Real(_) => EvalType::Real,
            ColData::Decimal(_) | ColData::Fixed(_) => EvalType::Decimal,
            ColData::Bytes(_) => EvalType::Bytes,
            ColData::DateTime(_) => EvalType::DateTime,
            ColData::Duration(_) => EvalType::Duration,
            ColData::Json(_) => EvalType::Json,
            ColData::Enum(_) => EvalType::Enum,
            ColData::Vector(_) => EvalType::VectorFloat32,
        }
    }

    /// Number of slots.
    pub fn len(&self) -> usize {
        match self {
            ColData::Int(v) => v.len(),
            ColData::Real(v) => v.len(),
            ColData::Decimal(v) => v.len(),
            ColData::Fixed(v) => v.m.len(),
            ColData::Bytes(v) | ColData::Json(v) | ColData::Enum(v) | ColData::Vector(v) => v.len(),
            ColData::DateTime(v) => v.len(),
            ColData::Duration(v) => v.len(),
        }
    }

    /// True when there are no slots.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the default value of the type (the content of a NULL slot).
    pub fn push_default(&mut self) {
        match self {
            ColData::Int(v) => v.push(0),
            ColData::Real(v) => v.push(0.0),
            ColData::Decimal(v) => v.push(Decimal::zero()),
            ColData::Fixed(v) => v.m.push(0),
            ColData::Bytes(v) => v.push(&[]),
            ColData::DateTime(v) => v.push(zero_time()),
            ColData::Duration(v) => v.push(Duration::zero()),
            ColData::Json(v) => v.push_json(JsonRef::NULL),
            ColData::Enum(v) => v.push(&ENUM_DEFAULT),
            ColData::Vector(v) => v.push(rcop_datum::VectorRef::EMPTY.as_bytes()),
        }
    }
}

/// The zero DATETIME, used as the content of NULL slots.
#[inline]
pub(crate) fn zero_time() -> Time {
    #[expect(
        clippy::expect_used,
        reason = "CoreTime 0 is the zero DATETIME, valid by construction"
    )]
    Time::from_chunk_u64(0).expect("zero time")
}

/// Decimal mantissas sharing one scale.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FixedVec {
    /// Mantissas (0 in NULL slots).
    pub m: Vec<i128>,
    /// Fraction digits of every value.
    pub scale: u8,
}

/// A column: values plus validity.
#[derive(Debug, Clone, PartialEq)]
pub struct VecCol {
    /// The values (defaults in NULL slots).
    pub data: ColData,
    /// Which slots are not NULL.
    pub valid: Bitmap,
}

impl VecCol {
    /// An empty column of `et`.
    pub fn new(et: EvalType, cap: usize) -> VecCol {
        VecCol { data: ColData::new(et, cap), valid: Bitmap::with_capacity(cap) }
    }

    /// Number of rows.
    #[inline]
    pub fn len(&self) -> usize {
        self.valid.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.valid.is_empty()
    }

    /// The eval type.
    pub fn eval_type(&self) -> EvalType {
        self.data.eval_type()
    }

    /// Appends a NULL.
    pub fn push_null(&mut self) {
        self.data.push_default();
        self.valid.push(false);
    }

    /// Appends `n` NULLs.
    #[inline]
    pub fn push_nulls(&mut self, n: usize) {
        /// Appends `n` copies of `x`: one by one for the short gaps a selection leaves
        /// between the rows it keeps, a fill for longer ones.
        #[inline(always)]
        fn fill<T: Copy>(v: &mut Vec<T>, n: usize, x: T) {
            if n <= 4 {
                (0..n).for_each(|_| v.push(x));
            } else {
                v.resize(v.len() + n, x);
            }
        }
        match &mut self.data {
            ColData::Int(v) => fill(v, n, 0),
            ColData::Real(v) => fill(v, n, 0.0),
            ColData::Fixed(v) => fill(&mut v.m, n, 0),
            ColData::DateTime(v) => fill(v, n, zero_time()),
            ColData::Decimal(v) => fill(v, n, Decimal::zero()),
            d => (0..n).for_each(|_| d.push_default()),
        }
        self.valid.push_n(false, n);
    }

    /// Appends a scalar; a scalar of another type is appended as NULL.
    pub fn push_scalar(&mut self, s: &Scalar) {
        let ok = match (&mut self.data, s) {
            (ColData::Int(v), Scalar::Int(x)) => {
                v.push(*x);
                true
            }
            (ColData::Real(v), Scalar::Real(x)) => {
                v.push(*x);
                true
            }
            (ColData::Decimal(v), Scalar::Decimal(x)) => {
                v.push(*x);
                true
            }
            (ColData::Fixed(_), Scalar::Decimal(x)) => {
                self.data = self.to_decimal().data;
                if let ColData::Decimal(v) = &mut self.data {
                    v.push(*x);
                }
                true
            }
            (ColData::Bytes(v), Scalar::Bytes(x)) => {
                v.push(x);
                true
            }
            (ColData::DateTime(v), Scalar::DateTime(x)) => {
                v.push(*x);
                true
            }
            (ColData::Duration(v), Scalar::Duration(x)) => {
                v.push(*x);
                true
            }
            (ColData::Json(v), Scalar::Json(x)) => {
                v.push(x.as_bytes());
                true
            }
            (ColData::Enum(v), Scalar::Enum(x, name)) => {
                v.push_enum(*x, name);
                true
            }
            (ColData::Vector(v), Scalar::Vector(x)) => {
                v.push(x);
                true
            }
            _ => false,
        };
        if ok {
            self.valid.push(true);
        } else {
            self.push_null();
        }
    }

    /// Row `i` as a scalar.
    pub fn scalar_at(&self, i: usize) -> Scalar {
        if !self.valid.get(i) {
            return Scalar::Null;
        }
        match &self.data {
            ColData::Int(v) => v.get(i).map_or(Scalar::Null, |x| Scalar::Int(*x)),
            ColData::Real(v) => v.get(i).map_or(Scalar::Null, |x| Scalar::Real(*x)),
            ColData::Decimal(v) => v.get(i).map_or(Scalar::Null, |x| Scalar::Decimal(*x)),
            ColData::Fixed(v) => {
                v.m.get(i)
                    .and_then(|m| crate::fixed::from_fixed(*m, v.scale))
                    .map_or(Scalar::Null, Scalar::Decimal)
            }
            ColData::Bytes(v) => Scalar::Bytes(v.get(i).to_vec()),
            ColData::DateTime(v) => v.get(i).map_or(Scalar::Null, |x| Scalar::DateTime(*x)),
            ColData::Duration(v) => v.get(i).map_or(Scalar::Null, |x| Scalar::Duration(*x)),
            ColData::Json(v) => JsonT::to_scalar(JsonT::get(v, i)),
            ColData::Enum(v) => EnumT::to_scalar(EnumT::get(v, i)),
            ColData::Vector(v) => Scalar::Vector(v.get(i).to_vec()),
        }
    }

    /// The same column with decimals as [`Decimal`]s (a copy of other columns).
    pub fn to_decimal(&self) -> VecCol {
        match &self.data {
            ColData::Fixed(f) => {
                let data =
                    f.m.iter()
                        .map(|m| crate::fixed::from_fixed(*m, f.scale).unwrap_or_default())
                        .collect();
                VecCol { data: ColData::Decimal(data), valid: self.valid.clone() }
            }
            _ => self.clone(),
        }
    }

    /// A decimal column as fixed point when every valid value has the same scale and fits
    /// an `i128`; any other column is returned as it is.
    pub fn into_fixed(self) -> VecCol {
        let ColData::Decimal(v) = &self.data else { return self };
        let mut scale = None;
        let mut m = Vec::with_capacity(v.len());
        for (i, d) in v.iter().enumerate() {
            if !self.valid.get(i) {
                m.push(0);
                continue;
            }
            match crate::fixed::to_fixed(d) {
                Some((x, s)) if scale.is_none_or(|t| t == s) => {
                    scale = Some(s);
                    m.push(x);
                }
                _ => return self,
            }
        }
        VecCol {
            data: ColData::Fixed(FixedVec { m, scale: scale.unwrap_or(0) }),
            valid: self.valid,
        }
    }

    /// A scalar repeated `n` times.
    pub fn broadcast(et: EvalType, s: &Scalar, n: usize) -> VecCol {
        let mut c = VecCol::new(et, n);
        for _ in 0..n {
            c.push_scalar(s);
        }
        c
    }

    /// The rows `rows` of this column, in that order.
    pub fn gather(&self, rows: &[u32]) -> VecCol {
        let valid = if self.valid.no_nulls() && rows.iter().all(|&r| (r as usize) < self.len()) {
            Bitmap::all_valid(rows.len())
        } else {
            let mut valid = Bitmap::new();
            for &r in rows {
                valid.push(self.valid.get(r as usize));
            }
            valid
        };
        fn pick<T: Copy + Default>(v: &[T], rows: &[u32]) -> Vec<T> {
            rows.iter().map(|&r| v.get(r as usize).copied().unwrap_or_default()).collect()
        }
        let data = match &self.data {
            ColData::Int(v) => ColData::Int(pick(v, rows)),
            ColData::Real(v) => ColData::Real(pick(v, rows)),
            ColData::Decimal(v) => ColData::Decimal(pick(v, rows)),
            ColData::Fixed(v) => ColData::Fixed(FixedVec { m: pick(&v.m, rows), scale: v.scale }),
            ColData::Bytes(v) => ColData::Bytes(v.gather(rows)),
            ColData::Json(v) => ColData::Json(v.gather(rows)),
            ColData::Enum(v) => ColData::Enum(v.gather(rows)),
            ColData::Vector(v) => ColData::Vector(v.gather(rows)),
            ColData::DateTime(v) => ColData::DateTime(
                rows.iter()
                    .map(|&r| v.get(r as usize).copied().unwrap_or_else(zero_time))
                    .collect(),
            ),
            ColData::Duration(v) => ColData::Duration(
                rows.iter()
                    .map(|&r| v.get(r as usize).copied().unwrap_or_else(Duration::zero))
                    .collect(),
            ),
        };
        VecCol { data, valid }
    }

    /// Keeps only the rows `rows`, in place: the same result as [`VecCol::gather`] without a
    /// new allocation per column, for strictly ascending `rows` within the column (row `j` of
    /// the result moves down from row `rows[j] >= j`). Other `rows` take the gather.
    pub fn retain_rows(&mut self, rows: &[u32]) {
        let len = self.len();
        let ascending =
            rows.windows(2).all(|w| w[0] < w[1]) && rows.last().is_none_or(|&r| (r as usize) < len);
        if !ascending {
            *self = self.gather(rows);
            return;
        }
        /// Moves `v[rows[j]]` to `v[j]` for every `j` and drops the rest, one `copy_within`
        /// per run of consecutive rows (`rows` ascending and within `v`).
        fn keep<T: Copy>(v: &mut Vec<T>, rows: &[u32]) {
            let mut j = 0;
            while let Some(&first) = rows.get(j) {
                let start = first as usize;
                let mut k = j + 1;
                while rows.get(k).is_some_and(|&r| r as usize == start + (k - j)) {
                    k += 1;
                }
                let end = start + (k - j);
                if start != j && end <= v.len() {
                    v.copy_within(start..end, j);
                }
                j = k;
            }
            v.truncate(rows.len());
        }
        self.valid = if self.valid.no_nulls() {
            Bitmap::all_valid(rows.len())
        } else {
            let mut valid = Bitmap::new();
            for &r in rows {
                valid.push(self.valid.get(r as usize));
            }
            valid
        };
        match &mut self.data {
            ColData::Int(v) => keep(v, rows),
            ColData::Real(v) => keep(v, rows),
            ColData::Decimal(v) => keep(v, rows),
            ColData::Fixed(v) => keep(&mut v.m, rows),
            ColData::DateTime(v) => keep(v, rows),
            ColData::Duration(v) => keep(v, rows),
            ColData::Bytes(v) | ColData::Json(v) | ColData::Enum(v) | ColData::Vector(v) => {
                v.retain_ascending(rows)
            }
        }
    }
}

/// One value of any eval type, or NULL.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// NULL.
    Null,
    /// An integer (unsigned as its bit pattern).
    Int(i64),
    /// A real.
    Real(f64),
    /// A decimal.
    Decimal(Decimal),
    /// A byte string.
    Bytes(Vec<u8>),
    /// A date or time.
    DateTime(Time),
    /// A duration.
    Duration(Duration),
    /// A JSON value.
    Json(Json),
    /// An `ENUM` value: the member index and its name.
    Enum(u64, Vec<u8>),
    /// A `VECTOR(FLOAT32)` value in its binary form (validated).
    Vector(Vec<u8>),
}

impl Scalar {
    /// True for NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Scalar::Null)
    }
}

/// Typed, zero-cost access to the values of one eval type.
pub trait Elem: 'static + Sized {
    /// A borrowed value.
    type R<'a>: Copy;
    /// A borrowed column body.
    type S<'a>: Copy;
    /// The eval type.
    const ET: EvalType;
    /// The column body, if `d` has this type.
    fn slice(d: &ColData) -> Option<Self::S<'_>>;
    /// The value at `i` of a body (a default when out of range).
    fn get<'a>(s: Self::S<'a>, i: usize) -> Self::R<'a>;
    /// The value of a scalar of this type (`None` for NULL or another type).
    fn scalar(s: &Scalar) -> Option<Self::R<'_>>;
    /// Appends a value (NULL when `None`) to a column of this type.
    fn push(c: &mut VecCol, v: Option<Self::R<'_>>);
    /// Converts a value to a scalar.
    fn to_scalar(v: Self::R<'_>) -> Scalar;
}

macro_rules! copy_elem {
    ($name:ident, $t:ty, $variant:ident, $et:expr, $default:expr) => {
        /// Marker for the eval type holding
        #[doc = concat!("`", stringify!($t), "`.")]
        #[derive(Debug)]
        pub struct $name;
        impl Elem for $name {
            type R<'a> = $t;
            type S<'a> = &'a [$t];
            const ET: EvalType = $et;
            #[inline]
            fn slice(d: &ColData) -> Option<&[$t]> {
                match d {
                    ColData::$variant(v) => Some(v),
                    _ => None,
                }
            }
            #[inline]
            fn get<'a>(s: Self::S<'a>, i: usize) -> Self::R<'a> {
                s.get(i).copied().unwrap_or_else($default)
            }
            #[inline]
            fn scalar(s: &Scalar) -> Option<$t> {
                match s {
                    Scalar::$variant(v) => Some(*v),
                    _ => None,
                }
            }
            #[inline]
            fn push(c: &mut VecCol, v: Option<$t>) {
                match (&mut c.data, v) {
                    (ColData::$variant(d), Some(x)) => {
                        d.push(x);
                        c.valid.push(true);
                    }
                    _ => c.push_null(),
                }
            }
            #[inline]
            fn to_scalar(v: $t) -> Scalar {
                Scalar::$variant(v)
            }
        }
    };
}

copy_elem!(IntT, i64, Int, EvalType::Int, || 0);
copy_elem!(RealT, f64, Real, EvalType::Real, || 0.0);
copy_elem!(TimeT, Time, DateTime, EvalType::DateTime, zero_time);
copy_elem!(DurT, Duration, Duration, EvalType::Duration, Duration::zero);

/// Marker for the decimal eval type.
#[derive(Debug)]
pub struct DecT;

static ZERO_DEC: Decimal = Decimal::zero();

impl Elem for DecT {
    type R<'a> = &'a Decimal;
    type S<'a> = &'a [Decimal];
    const ET: EvalType = EvalType::Decimal;
    #[inline]
    fn slice(d: &ColData) -> Option<&[Decimal]> {
        match d {
            ColData::Decimal(v) => Some(v),
            _ => None,
        }
    }
    #[inline]
    fn get<'a>(s: Self::S<'a>, i: usize) -> Self::R<'a> {
        s.get(i).unwrap_or(&ZERO_DEC)
    }
    #[inline]
    fn scalar(s: &Scalar) -> Option<&Decimal> {
        match s {
            Scalar::Decimal(v) => Some(v),
            _ => None,
        }
    }
    #[inline]
    fn push(c: &mut VecCol, v: Option<&Decimal>) {
        match (&mut c.data, v) {
            (ColData::Decimal(d), Some(x)) => {
                d.push(*x);
                c.valid.push(true);
            }
            (ColData::Fixed(_), Some(_)) => {
                *c = c.to_decimal();
                DecT::push(c, v);
            }
            _ => c.push_null(),
        }
    }
    fn to_scalar(v: &Decimal) -> Scalar {
        Scalar::Decimal(*v)
    }
}

/// Marker for the bytes eval type.
#[derive(Debug)]
pub struct BytesT;

impl Elem for BytesT {
    type R<'a> = &'a [u8];
    type S<'a> = &'a BytesVec;
    const ET: EvalType = EvalType::Bytes;
    #[inline]
    fn slice(d: &ColData) -> Option<&BytesVec> {
        match d {
            ColData::Bytes(v) => Some(v),
            _ => None,
        }
    }
    #[inline]
    fn get<'a>(s: Self::S<'a>, i: usize) -> Self::R<'a> {
        s.get(i)
    }
    #[inline]
    fn scalar(s: &Scalar) -> Option<&[u8]> {
        match s {
            Scalar::Bytes(v) => Some(v),
            _ => None,
        }
    }
    #[inline]
    fn push(c: &mut VecCol, v: Option<&[u8]>) {
        match (&mut c.data, v) {
            (ColData::Bytes(d), Some(x)) => {
                d.push(x);
                c.valid.push(true);
            }
            _ => c.push_null(),
        }
    }
    fn to_scalar(v: &[u8]) -> Scalar {
        Scalar::Bytes(v.to_vec())
    }
}

/// One argument of a vectorised function: a constant or a column over the logical rows.
#[derive(Debug)]
pub enum Arg<'a, E: Elem> {
    /// The same value (or NULL) for every row.
    Const(Option<E::R<'a>>),
    /// A column.
    Col {
        /// The values.
        s: E::S<'a>,
        /// Validity.
        valid: &'a Bitmap,
    },
}

impl<E: Elem> Clone for Arg<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<E: Elem> Copy for Arg<'_, E> {}

impl<'a, E: Elem> Arg<'a, E> {
    /// The value at row `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<E::R<'a>> {
        match self {
            Arg::Const(v) => *v,
            Arg::Col { s, valid } => {
                if valid.get(i) {
                    Some(E::get(*s, i))
                } else {
                    None
                }
            }
        }
    }

    /// True when no row is NULL.
    #[inline]
    pub fn no_nulls(&self) -> bool {
        match self {
            Arg::Const(v) => v.is_some(),
            Arg::Col { valid, .. } => valid.no_nulls(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmap_and() {
        let mut a = Bitmap::new();
        let mut b = Bitmap::new();
        for i in 0..130 {
            a.push(i % 3 != 0);
            b.push(i % 5 != 0);
        }
        let mut c = a.clone();
        c.and_with(&b);
        let expect = (0..130).filter(|i| i % 3 == 0 || i % 5 == 0).count();
        assert_eq!(c.null_count(), expect);
        for i in 0..130 {
            assert_eq!(c.get(i), i % 3 != 0 && i % 5 != 0);
        }
        c.set_null(1);
        assert_eq!(c.null_count(), expect + 1);
        assert!(!c.get(1000));
    }

    #[test]
    fn push_with_keeps_or_drops_what_it_wrote() {
        let mut v = BytesVec::with_capacity(3, 8);
        assert!(v.push_with(|out| {
            out.extend_from_slice(b"ab");
            true
        }));
        assert!(!v.push_with(|out| {
            out.extend_from_slice(b"dropped");
            false
        }));
        v.push(b"c");
        assert_eq!(v.len(), 3);
        assert_eq!([v.get(0), v.get(1), v.get(2)], [&b"ab"[..], b"", b"c"]);
    }

    #[test]
    fn push_n_matches_single_pushes() {
        // Runs of both validities crossing word boundaries, against one push per row.
        let runs = [(true, 3), (false, 61), (true, 64), (true, 1), (false, 130), (true, 200)];
        let (mut bulk, mut single) = (Bitmap::new(), Bitmap::new());
        for (k, &(valid, n)) in runs.iter().enumerate() {
            bulk.push_n(valid, n);
            (0..n).for_each(|_| single.push(valid));
            bulk.push(k % 2 == 0);
            single.push(k % 2 == 0);
            assert_eq!(bulk, single, "after run {k}");
        }
        let all = Bitmap::all_valid(129);
        assert!(all.no_nulls() && all.get(128) && !all.get(129));
    }

    #[test]
    fn gather_and_scalars() {
        let mut c = VecCol::new(EvalType::Bytes, 4);
        c.push_scalar(&Scalar::Bytes(b"a".to_vec()));
        c.push_null();
        c.push_scalar(&Scalar::Bytes(b"ccc".to_vec()));
        let g = c.gather(&[2, 1, 0]);
        assert_eq!(g.scalar_at(0), Scalar::Bytes(b"ccc".to_vec()));
        assert_eq!(g.scalar_at(1), Scalar::Null);
        assert_eq!(g.scalar_at(2), Scalar::Bytes(b"a".to_vec()));
        assert_eq!(g.valid.null_count(), 1);
    }

    /// `retain_rows` gives what `gather` gives, for ascending and other row lists.
    #[test]
    fn retain_rows_matches_gather() {
        let mut bytes = VecCol::new(EvalType::Bytes, 6);
        let mut ints = VecCol::new(EvalType::Int, 6);
        for (i, s) in ["a", "", "ccc", "dd", "", "ffff"].iter().enumerate() {
            if i == 4 {
                bytes.push_null();
                ints.push_null();
            } else {
                bytes.push_scalar(&Scalar::Bytes(s.as_bytes().to_vec()));
                ints.push_scalar(&Scalar::Int(i as i64 * 10));
            }
        }
        let all: [&[u32]; 7] =
            [&[], &[0, 1, 2, 3, 4, 5], &[0, 1, 3, 5], &[2, 3, 4], &[5], &[3, 1], &[1, 1, 9]];
        for col in [&bytes, &ints] {
            for rows in all {
                let want = col.gather(rows);
                let mut got = col.clone();
                got.retain_rows(rows);
                assert_eq!(got.len(), rows.len(), "{rows:?}");
                for i in 0..rows.len() {
                    assert_eq!(got.scalar_at(i), want.scalar_at(i), "{rows:?} row {i}");
                }
                assert_eq!(got.valid.null_count(), want.valid.null_count(), "{rows:?}");
            }
        }
    }
}
