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

/// `f(x, y)` for each of the `n` rows of `a` and `b`, or `None` when `f` fails on a row or a
/// column is shorter than `n`. NULL slots are computed too (what they hold is unspecified:
/// 0, or what an earlier fast path computed there); one that fails sends the call to the
/// general path, as the row-at-a-time loop did.
///
/// One loop per shape of the arguments, over plain slices: no per-row match, bounds check
/// or capacity check, and a failure is noted rather than branched out of.
#[inline(always)]
fn map2<T: Copy + Default>(
    a: FView<'_>,
    b: FView<'_>,
    n: usize,
    f: impl Fn(i128, i128) -> Option<T>,
) -> Option<Vec<T>> {
    let mut failed = false;
    let mut apply = |x: i128, y: i128| {
        let r = f(x, y);
        failed |= r.is_none();
        r.unwrap_or_default()
    };
    let mut out = Vec::with_capacity(n);
    match (a, b) {
        (FView::Col { m: xs, .. }, FView::Col { m: ys, .. }) => {
            let (xs, ys) = (xs.get(..n)?, ys.get(..n)?);
            out.extend(xs.iter().zip(ys).map(|(&x, &y)| apply(x, y)));
        }
        (FView::Col { m: xs, .. }, FView::Const((y, _))) => {
            out.extend(xs.get(..n)?.iter().map(|&x| apply(x, y)));
        }
        (FView::Const((x, _)), FView::Col { m: ys, .. }) => {
            out.extend(ys.get(..n)?.iter().map(|&y| apply(x, y)));
        }
        (FView::Const((x, _)), FView::Const((y, _))) => out.resize(n, apply(x, y)),
    }
    (!failed).then_some(out)
}

/// `x op y` over `n` rows, exactly, or `None`.
pub fn arith(op: ArithOp, args: &[Value<'_>], n: usize) -> Option<VecCol> {
    let (a, b) = views(args)?;
    let (sa, sb) = (a.scale(), b.scale());
    let mut valid = a.validity(n);
    valid.and_with(&b.validity(n));
    if op == ArithOp::Mul {
        let scale = sa.checked_add(sb).filter(|t| *t <= fixed::MAX_SCALE)?;
        let m = map2(a, b, n, mul_exact)?;
        return Some(VecCol { data: ColData::Fixed(FixedVec { m, scale }), valid });
    }
    let scale = sa.max(sb);
    let (a, pa) = at_scale(a, scale)?;
    let (b, pb) = at_scale(b, scale)?;
    let m = match (op, pa, pb) {
        // The same scale (the usual case, and any constant): no rescaling in the loop.
        (ArithOp::Add, 1, 1) => map2(a, b, n, i128::checked_add)?,
        (ArithOp::Sub, 1, 1) => map2(a, b, n, i128::checked_sub)?,
        (ArithOp::Add, ..) => map2(a, b, n, |p, q| rescale(p, pa)?.checked_add(rescale(q, pb)?))?,
        // Sub (Mul returned above).
        _ => map2(a, b, n, |p, q| rescale(p, pa)?.checked_sub(rescale(q, pb)?))?,
    };
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
    let (a, pa) = at_scale(a, scale)?;
    let (b, pb) = at_scale(b, scale)?;
    let test = op.ordering_test();
    let data = map2(a, b, n, |p, q| Some(i64::from(test(rescale(p, pa)?.cmp(&rescale(q, pb)?)))))?;
    Some(VecCol { data: ColData::Int(data), valid })
}

/// `v` brought to `scale` (at least its own): a constant rescaled once here, a column with
/// the power of ten each of its rows is multiplied by (1 when the scales agree). `None` when
/// the constant overflows.
fn at_scale(v: FView<'_>, scale: u8) -> Option<(FView<'_>, i128)> {
    let pow = fixed::pow10(u32::from(scale.checked_sub(v.scale())?))?;
    match v {
        FView::Const((m, _)) => Some((FView::Const((rescale(m, pow)?, scale)), 1)),
        col => Some((col, pow)),
    }
}

/// `x * pow` (a power of ten bringing `x` to a larger scale), skipping the multiplication
/// when the scales already agree; `None` on overflow.
#[inline(always)]
fn rescale(x: i128, pow: i128) -> Option<i128> {
    if pow == 1 { Some(x) } else { mul_exact(x, pow) }
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

    fn fixed_col(m: Vec<i128>, scale: u8) -> VecCol {
        let valid = Bitmap::all_valid(m.len());
        VecCol { data: ColData::Fixed(FixedVec { m, scale }), valid }
    }

    fn mantissas(c: &VecCol) -> &[i128] {
        match &c.data {
            ColData::Fixed(f) => &f.m,
            _ => &[],
        }
    }

    #[test]
    fn an_overflow_on_any_row_sends_the_call_to_the_general_path() {
        let big = fixed_col(vec![1, i128::MAX - 1, 3], 0);
        let one = fixed_col(vec![5, 2, 5], 0);
        let args = [Value::Ref(&big), Value::Ref(&one)];
        // Row 1 overflows: the whole call declines, whatever the other rows gave.
        assert!(arith(ArithOp::Add, &args, 3).is_none());
        assert!(arith(ArithOp::Mul, &[Value::Ref(&big), Value::Ref(&big)], 3).is_none());
        let sub = arith(ArithOp::Sub, &args, 3).expect("no overflow");
        assert_eq!(mantissas(&sub), &[-4, i128::MAX - 3, -2]);
        // A constant on either side, and rescaling to the larger scale.
        let half = || Value::Scalar(Scalar::Decimal("0.5".parse().expect("decimal")));
        let left = arith(ArithOp::Sub, &[half(), Value::Ref(&one)], 3).expect("fits");
        assert_eq!(mantissas(&left), &[-45, -15, -45]);
        let right = arith(ArithOp::Mul, &[Value::Ref(&one), half()], 3).expect("fits");
        assert_eq!(mantissas(&right), &[25, 10, 25]);
        // A column shorter than the rows asked for declines rather than reads past it.
        assert!(arith(ArithOp::Add, &args, 4).is_none());
    }
}
