//! Kernel helpers shared by every function category: null-propagating maps over typed
//! arguments, validity merging, and the conversions several categories use.

use rcop_datum::Decimal;

use crate::column::{Arg, Bitmap, BytesT, DecT, DurT, Elem, IntT, RealT, Scalar, TimeT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::value::Value;
use crate::types::EvalType;

/// Output side of a column type: pushes owned values.
pub trait OutElem {
    /// The eval type.
    const ET: EvalType;
    /// The owned value type.
    type O;
    /// Appends a value or NULL.
    fn push_out(c: &mut VecCol, v: Option<Self::O>);
}

macro_rules! out_copy {
    ($m:ty, $t:ty) => {
        impl OutElem for $m {
            const ET: EvalType = <$m as Elem>::ET;
            type O = $t;
            #[inline]
            fn push_out(c: &mut VecCol, v: Option<$t>) {
                <$m as Elem>::push(c, v);
            }
        }
    };
}
out_copy!(IntT, i64);
out_copy!(RealT, f64);
out_copy!(TimeT, rcop_datum::Time);
out_copy!(DurT, rcop_datum::Duration);

impl OutElem for DecT {
    const ET: EvalType = EvalType::Decimal;
    type O = Decimal;
    #[inline]
    fn push_out(c: &mut VecCol, v: Option<Decimal>) {
        DecT::push(c, v.as_ref());
    }
}

impl OutElem for BytesT {
    const ET: EvalType = EvalType::Bytes;
    type O = Vec<u8>;
    #[inline]
    fn push_out(c: &mut VecCol, v: Option<Vec<u8>>) {
        BytesT::push(c, v.as_deref());
    }
}

/// Null-propagating unary map with a fallible, context-aware body.
pub fn map1<'a, A: Elem, O: OutElem>(
    n: usize,
    a: Arg<'a, A>,
    ctx: &mut EvalContext,
    mut f: impl FnMut(A::R<'a>, &mut EvalContext) -> Result<Option<O::O>>,
) -> Result<VecCol> {
    let mut out = VecCol::new(O::ET, n);
    for i in 0..n {
        match a.get(i) {
            Some(x) => O::push_out(&mut out, f(x, ctx)?),
            None => O::push_out(&mut out, None),
        }
    }
    Ok(out)
}

/// Null-propagating unary map with an infallible body.
pub fn map1_infallible<'a, A: Elem, O: OutElem>(
    n: usize,
    a: Arg<'a, A>,
    mut f: impl FnMut(A::R<'a>) -> Option<O::O>,
) -> Result<VecCol> {
    let mut out = VecCol::new(O::ET, n);
    for i in 0..n {
        O::push_out(&mut out, a.get(i).and_then(&mut f));
    }
    Ok(out)
}

/// Null-propagating binary map with a fallible, context-aware body.
pub fn map2<'a, A: Elem, B: Elem, O: OutElem>(
    n: usize,
    a: Arg<'a, A>,
    b: Arg<'a, B>,
    ctx: &mut EvalContext,
    mut f: impl FnMut(A::R<'a>, B::R<'a>, &mut EvalContext) -> Result<Option<O::O>>,
) -> Result<VecCol> {
    let mut out = VecCol::new(O::ET, n);
    for i in 0..n {
        match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) => O::push_out(&mut out, f(x, y, ctx)?),
            _ => O::push_out(&mut out, None),
        }
    }
    Ok(out)
}

/// The validity of an argument over `n` rows.
pub fn validity<E: Elem>(a: &Arg<'_, E>, n: usize) -> Bitmap {
    match a {
        Arg::Const(Some(_)) => Bitmap::all_valid(n),
        Arg::Const(None) => {
            let mut b = Bitmap::new();
            b.push_n(false, n);
            b
        }
        Arg::Col { valid, .. } => (*valid).clone(),
    }
}

/// Computes `f` on every slot (NULL slots hold defaults), four loops for the four
/// column/constant shapes so each is a tight loop.
#[inline]
pub fn zip_all<'a, A: Elem, B: Elem, T: Default + Clone>(
    n: usize,
    a: Arg<'a, A>,
    b: Arg<'a, B>,
    mut f: impl FnMut(A::R<'a>, B::R<'a>) -> T,
) -> Vec<T> {
    match (a, b) {
        (Arg::Col { s: sa, .. }, Arg::Col { s: sb, .. }) => {
            (0..n).map(|i| f(A::get(sa, i), B::get(sb, i))).collect()
        }
        (Arg::Col { s: sa, .. }, Arg::Const(Some(y))) => {
            (0..n).map(|i| f(A::get(sa, i), y)).collect()
        }
        (Arg::Const(Some(x)), Arg::Col { s: sb, .. }) => {
            (0..n).map(|i| f(x, B::get(sb, i))).collect()
        }
        (Arg::Const(Some(x)), Arg::Const(Some(y))) => vec![f(x, y); n],
        _ => (0..n).map(|_| T::default()).collect(),
    }
}

/// Merged validity of two arguments.
pub fn valid2<A: Elem, B: Elem>(n: usize, a: &Arg<'_, A>, b: &Arg<'_, B>) -> Bitmap {
    let mut v = validity(a, n);
    v.and_with(&validity(b, n));
    v
}

/// `v`, or an overflow error when it is infinite or NaN.
pub fn finite(v: f64) -> Result<f64> {
    if v.is_finite() { Ok(v) } else { Err(Error::Overflow("DOUBLE")) }
}

/// Unwraps a decimal result: truncation is accepted, overflow is an error.
pub fn dec_res(r: rcop_datum::Res<Decimal>) -> Result<Decimal> {
    match r {
        rcop_datum::Res::Overflow(_) => Err(Error::Overflow("DECIMAL")),
        r => Ok(r.value()),
    }
}

/// Converts an integral decimal to an int in the signed or unsigned range.
pub fn int_from_dec(d: &Decimal, unsigned: bool) -> Result<i64> {
    if unsigned {
        match d.as_u64() {
            rcop_datum::Res::Ok(v) | rcop_datum::Res::Truncated(v) if !d.is_negative() => {
                Ok(v as i64)
            }
            _ => Err(Error::Overflow("BIGINT UNSIGNED")),
        }
    } else {
        match d.as_i64() {
            rcop_datum::Res::Ok(v) | rcop_datum::Res::Truncated(v) => Ok(v),
            rcop_datum::Res::Overflow(_) => Err(Error::Overflow("BIGINT")),
        }
    }
}

/// TiKV's `as_mysql_bool` of row `i` of a condition value of any type: NULL is false, a
/// number is true when non-zero, a string when it is non-empty and reads as a non-zero
/// double (a truncation warning for text that is not a number), a date/time or duration
/// when it is not zero.
pub fn truth_at(v: &Value<'_>, i: usize, ctx: &mut EvalContext) -> Result<bool> {
    Ok(match v.scalar_at(i) {
        Scalar::Null => false,
        Scalar::Int(x) => x != 0,
        Scalar::Real(x) => x != 0.0,
        Scalar::Decimal(d) => !d.is_zero(),
        Scalar::Bytes(b) => !b.is_empty() && crate::expr::cast::bytes_as_real(&b, ctx)? != 0.0,
        Scalar::DateTime(t) => !t.is_zero(),
        Scalar::Duration(d) => d.nanos() != 0,
        // JSON: false only for a numeric zero; ENUM: by its member index.
        Scalar::Json(j) => {
            let j = j.as_ref();
            !(j.as_i64() == Some(0) || j.as_u64() == Some(0) || j.as_f64() == Some(0.0))
        }
        Scalar::Enum(idx, _) => idx != 0,
        // A vector is true when it has elements (TiKV `AsMySQLBool for VectorFloat32Ref`).
        Scalar::Vector(v) => rcop_datum::VectorRef::decode(&v).is_ok_and(|v| !v.is_empty()),
    })
}

/// Truthiness of row `i` of a condition value (Int, Real or Decimal); NULL is false.
pub fn is_true_at(v: &Value<'_>, i: usize) -> Result<bool> {
    Ok(match v.scalar_at(i) {
        Scalar::Null => false,
        Scalar::Int(x) => x != 0,
        Scalar::Real(x) => x != 0.0,
        Scalar::Decimal(d) => !d.is_zero(),
        s => return Err(Error::invalid(format!("condition of non-numeric value {s:?}"))),
    })
}
