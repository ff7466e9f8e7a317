//! Exact fixed-point fast paths for decimal add, subtract, multiply and compare: done on
//! `i128` mantissas when an argument is a fixed-point column and every value fits; `None`
//! sends the call to the general [`rcop_datum::Decimal`] path.

use crate::column::{Bitmap, ColData, FixedVec, Scalar, VecCol};
use crate::expr::compare::CmpOp;
use crate::expr::value::Value;
use crate::fixed;

/// A fixed-point arithmetic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
}

/// A decimal argument seen as fixed point.
#[derive(Debug, Clone, Copy)]
enum FView<'a> {
    Const((i128, u8)),
    Col { m: &'a [i128], scale: u8, valid: &'a Bitmap },
}

impl FView<'_> {
    fn scale(&self) -> u8 {
        match self {
            FView::Const((_, s)) => *s,
            FView::Col { scale, .. } => *scale,
        }
    }

    #[inline]
    fn at(&self, i: usize) -> i128 {
        match self {
            FView::Const((m, _)) => *m,
            FView::Col { m, .. } => m.get(i).copied().unwrap_or(0),
        }
    }

    fn validity(&self, n: usize) -> Bitmap {
        match self {
            FView::Const(_) => Bitmap::all_valid(n),
            FView::Col { valid, .. } => (*valid).clone(),
        }
    }
}

fn fview<'a>(v: &'a Value<'_>) -> Option<FView<'a>> {
    match v {
        Value::Scalar(Scalar::Decimal(d)) => fixed::to_fixed(d).map(FView::Const),
        _ => match v.col() {
            Some(VecCol { data: ColData::Fixed(f), valid }) => {
                Some(FView::Col { m: &f.m, scale: f.scale, valid })
            }
            _ => None,
        },
    }
}

/// Both arguments as fixed-point views, when at least one is a fixed-point column.
fn views<'a>(args: &'a [Value<'_>]) -> Option<(FView<'a>, FView<'a>)> {
    let [x, y] = args else { return None };
    if !x.is_fixed() && !y.is_fixed() {
        return None;
    }
    Some((fview(x)?, fview(y)?))
}

/// `x op y` over `n` rows, exactly, or `None`.
pub fn arith(op: ArithOp, args: &[Value<'_>], n: usize) -> Option<VecCol> {
    let (a, b) = views(args)?;
    let (sa, sb) = (a.scale(), b.scale());
    let mut valid = a.validity(n);
    valid.and_with(&b.validity(n));
    if op == ArithOp::Mul {
        let scale = sa.checked_add(sb).filter(|t| *t <= fixed::MAX_SCALE)?;
        let mut m = Vec::with_capacity(n);
        for i in 0..n {
            m.push(mul_exact(a.at(i), b.at(i))?);
        }
        return Some(VecCol { data: ColData::Fixed(FixedVec { m, scale }), valid });
    }
    let scale = sa.max(sb);
    let (pa, pb) = (fixed::pow10(u32::from(scale - sa))?, fixed::pow10(u32::from(scale - sb))?);
    let mut m = Vec::with_capacity(n);
    for i in 0..n {
        let (p, q) = (rescale(a.at(i), pa)?, rescale(b.at(i), pb)?);
        m.push(if op == ArithOp::Add { p.checked_add(q)? } else { p.checked_sub(q)? });
    }
    Some(VecCol { data: ColData::Fixed(FixedVec { m, scale }), valid })
}

/// The comparison `x op y` over `n` rows (not `<=>`), or `None`.
pub fn compare(op: CmpOp, args: &[Value<'_>], n: usize) -> Option<VecCol> {
    if op == CmpOp::NullEq {
        return None;
    }
    let (a, b) = views(args)?;
    let (sa, sb) = (a.scale(), b.scale());
    let mut valid = a.validity(n);
    valid.and_with(&b.validity(n));
    let scale = sa.max(sb);
    let (pa, pb) = (fixed::pow10(u32::from(scale - sa))?, fixed::pow10(u32::from(scale - sb))?);
    let test = op.ordering_test();
    let mut data = Vec::with_capacity(n);
    for i in 0..n {
        let (p, q) = (rescale(a.at(i), pa)?, rescale(b.at(i), pb)?);
        data.push(i64::from(test(p.cmp(&q))));
    }
    Some(VecCol { data: ColData::Int(data), valid })
}

/// `x * pow` (a power of ten bringing `x` to a larger scale), skipping the multiplication
/// when the scales already agree; `None` on overflow.
#[inline(always)]
fn rescale(x: i128, pow: i128) -> Option<i128> {
    if pow == 1 { Some(x) } else { x.checked_mul(pow) }
}

/// `x * y`, `None` on overflow. Mantissas that fit an `i64` (nearly all) multiply with one
/// widening multiplication, which cannot overflow, instead of a checked 128-bit one.
#[inline(always)]
fn mul_exact(x: i128, y: i128) -> Option<i128> {
    match (i64::try_from(x), i64::try_from(y)) {
        (Ok(a), Ok(b)) => Some(i128::from(a) * i128::from(b)),
        _ => x.checked_mul(y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_fixed_point_helpers() {
        assert_eq!(mul_exact(-123_456, 95), Some(-11_728_320));
        // Past i64 on one side: the checked 128-bit path, exact or None.
        let big = i128::from(i64::MAX) + 1;
        assert_eq!(mul_exact(big, 3), Some(big * 3));
        assert_eq!(mul_exact(i128::from(i64::MIN), i128::from(i64::MIN)), Some(1i128 << 126));
        assert_eq!(mul_exact(i128::MAX, 2), None);
        assert_eq!(mul_exact(i128::MIN, -1), None);
        assert_eq!(rescale(-7, 1), Some(-7));
        assert_eq!(rescale(-7, 100), Some(-700));
        assert_eq!(rescale(i128::MAX / 10 + 1, 10), None);
    }
}
