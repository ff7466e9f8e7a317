//! Vectorised evaluation of built expressions over the logical rows of a batch.

use std::cmp::Ordering;

use rcop_datum::Decimal;

use crate::batch::Batch;
use crate::column::{
    Arg, Bitmap, BytesT, ColData, DecT, DurT, Elem, IntT, RealT, Scalar, TimeT, VecCol,
};
use crate::ctx::EvalContext;
use crate::error::{Error, Feature, Result};
use crate::expr::build::{Func, Meta, Node, NodeKind};
use crate::expr::sig::{self, CmpOp};
use crate::expr::{cast, like::LikePattern};
use crate::fixed;
use crate::types::{Collation, EvalType, FieldType};

/// The result of evaluating a node: a constant, a fresh column over the logical rows, or a
/// borrowed column of the batch (when its logical rows are its physical rows).
#[derive(Debug)]
pub enum Value<'b> {
    /// The same value for every row.
    Scalar(Scalar),
    /// A column over the logical rows.
    Owned(VecCol),
    /// A batch column read in place.
    Ref(&'b VecCol),
}

impl Value<'_> {
    /// Typed access; a type mismatch is an invalid request.
    pub fn arg<E: Elem>(&self) -> Result<Arg<'_, E>> {
        let col = match self {
            Value::Scalar(s) => {
                if s.is_null() {
                    return Ok(Arg::Const(None));
                }
                return E::scalar(s).map(|v| Arg::Const(Some(v))).ok_or_else(|| mismatch(E::ET, s));
            }
            Value::Owned(c) => c,
            Value::Ref(c) => *c,
        };
        match E::slice(&col.data) {
            Some(s) => Ok(Arg::Col { s, valid: &col.valid }),
            None => Err(Error::invalid(format!(
                "expected a {:?} value, got a {:?} column",
                E::ET,
                col.eval_type()
            ))),
        }
    }

    /// The value as a column of `n` rows.
    pub fn into_col(self, et: EvalType, n: usize) -> VecCol {
        match self {
            Value::Scalar(s) => VecCol::broadcast(et, &s, n),
            Value::Owned(c) => c,
            Value::Ref(c) => c.clone(),
        }
    }

    /// True when the value is a fixed-point decimal column.
    pub fn is_fixed(&self) -> bool {
        matches!(self.col().map(|c| &c.data), Some(ColData::Fixed(_)))
    }

    /// The value with fixed-point decimal columns turned into [`Decimal`] columns (other
    /// values are borrowed).
    pub fn materialize(&self) -> Value<'_> {
        match (self, self.col()) {
            (_, Some(c)) if matches!(c.data, ColData::Fixed(_)) => Value::Owned(c.to_decimal()),
            (Value::Scalar(s), _) => Value::Scalar(s.clone()),
            (Value::Owned(c), _) => Value::Ref(c),
            (Value::Ref(c), _) => Value::Ref(c),
        }
    }

    /// The column, unless the value is a constant.
    pub fn col(&self) -> Option<&VecCol> {
        match self {
            Value::Scalar(_) => None,
            Value::Owned(c) => Some(c),
            Value::Ref(c) => Some(c),
        }
    }

    /// The value at row `i` as a scalar.
    pub fn scalar_at(&self, i: usize) -> Scalar {
        match self {
            Value::Scalar(s) => s.clone(),
            Value::Owned(c) => c.scalar_at(i),
            Value::Ref(c) => c.scalar_at(i),
        }
    }
}

fn mismatch(et: EvalType, s: &Scalar) -> Error {
    Error::invalid(format!("expected a {et:?} value, got constant {s:?}"))
}

/// Evaluates `node` over the logical rows of `batch`. Every column the node reads must have
/// been decoded.
pub fn eval<'b>(node: &Node, batch: &'b Batch, ctx: &mut EvalContext) -> Result<Value<'b>> {
    match &node.kind {
        NodeKind::Const(s) => Ok(Value::Scalar(s.clone())),
        NodeKind::Column(o) => {
            let c = batch
                .decoded(*o)
                .ok_or_else(|| Error::invalid(format!("column {o} was not decoded")))?;
            if batch.is_identity() {
                Ok(Value::Ref(c))
            } else {
                Ok(Value::Owned(c.gather(&batch.logical)))
            }
        }
        NodeKind::Func(f) => {
            let n = batch.len();
            let mut args = Vec::with_capacity(f.children.len());
            for c in &f.children {
                args.push(eval(c, batch, ctx)?);
            }
            eval_func(f, &node.ft, node.et, &args, n, ctx).map(Value::Owned)
        }
    }
}

/// Evaluates a function over already evaluated arguments.
pub fn eval_func(
    f: &Func,
    ft: &FieldType,
    et: EvalType,
    args: &[Value<'_>],
    n: usize,
    ctx: &mut EvalContext,
) -> Result<VecCol> {
    let s = f.sig;
    if let Some(col) = fixed_fast_path(s, args, n) {
        return Ok(col);
    }
    let materialized: Vec<Value<'_>>;
    let args = if args.iter().any(Value::is_fixed) {
        materialized = args.iter().map(Value::materialize).collect();
        &materialized[..]
    } else {
        args
    };
    let a = |i: usize| {
        args.get(i).ok_or_else(|| Error::invalid(format!("{}: missing argument {i}", sig::name(s))))
    };
    let ch_ft = |i: usize| f.children.get(i).map(|c| c.ft).unwrap_or(FieldType::long_long());
    if let Some((op, t)) = sig::comparison(s) {
        let (x, y) = (a(0)?, a(1)?);
        return Ok(match t {
            EvalType::Int => {
                let (ua, ub) = (ch_ft(0).is_unsigned(), ch_ft(1).is_unsigned());
                compare::<IntT>(n, op, x.arg()?, y.arg()?, |p, q| cmp_int(p, ua, q, ub))
            }
            EvalType::Real => compare::<RealT>(n, op, x.arg()?, y.arg()?, |p, q| p.total_cmp(&q)),
            EvalType::Decimal => compare::<DecT>(n, op, x.arg()?, y.arg()?, |p, q| p.cmp(q)),
            EvalType::Bytes => {
                let coll = match f.meta {
                    Meta::Collation(c) => c,
                    _ => Collation::Binary,
                };
                compare::<BytesT>(n, op, x.arg()?, y.arg()?, |p, q| coll.compare(p, q))
            }
            EvalType::DateTime => compare::<TimeT>(n, op, x.arg()?, y.arg()?, |p, q| p.cmp(&q)),
            EvalType::Duration => compare::<DurT>(n, op, x.arg()?, y.arg()?, |p, q| p.cmp(&q)),
        });
    }
    if let Some((from, to)) = sig::cast(s) {
        return cast::cast(from, to, &ch_ft(0), ft, a(0)?, n, ctx);
    }
    match s {
        200 => real_arith(n, a(0)?.arg()?, a(1)?.arg()?, |p, q| p + q),
        204 => real_arith(n, a(0)?.arg()?, a(1)?.arg()?, |p, q| p - q),
        208 => real_arith(n, a(0)?.arg()?, a(1)?.arg()?, |p, q| p * q),
        211 => map2::<RealT, RealT, RealT>(n, a(0)?.arg()?, a(1)?.arg()?, ctx, |p, q, ctx| {
            if q == 0.0 {
                ctx.division_by_zero()?;
                return Ok(None);
            }
            finite(p / q).map(Some)
        }),
        215 => map2::<RealT, RealT, RealT>(n, a(0)?.arg()?, a(1)?.arg()?, ctx, |p, q, ctx| {
            if q == 0.0 {
                ctx.division_by_zero()?;
                return Ok(None);
            }
            Ok(Some(p % q))
        }),
        201 => dec_binary(n, a(0)?.arg()?, a(1)?.arg()?, fixed::add, |p, q| p.add(q)),
        205 => dec_binary(n, a(0)?.arg()?, a(1)?.arg()?, fixed::sub, |p, q| p.sub(q)),
        209 => dec_binary(n, a(0)?.arg()?, a(1)?.arg()?, fixed::mul, |p, q| p.mul(q)),
        212 => {
            let incr = ctx.cfg.div_precision_increment;
            map2::<DecT, DecT, DecT>(n, a(0)?.arg()?, a(1)?.arg()?, ctx, |p, q, ctx| {
                match p.div(q, incr) {
                    None => {
                        ctx.division_by_zero()?;
                        Ok(None)
                    }
                    Some(r) => dec_res(r).map(Some),
                }
            })
        }
        216 => map2::<DecT, DecT, DecT>(n, a(0)?.arg()?, a(1)?.arg()?, ctx, |p, q, ctx| {
            match p.rem(q) {
                None => {
                    ctx.division_by_zero()?;
                    Ok(None)
                }
                Some(r) => dec_res(r).map(Some),
            }
        }),
        214 => map2::<DecT, DecT, IntT>(n, a(0)?.arg()?, a(1)?.arg()?, ctx, |p, q, ctx| {
            match p.div(q, 0) {
                None => {
                    ctx.division_by_zero()?;
                    Ok(None)
                }
                Some(_) => {
                    // Integer division truncates: divide exactly enough digits, then truncate.
                    let d = dec_res(p.div(q, 9).unwrap_or(rcop_datum::Res::Ok(Decimal::zero())))?;
                    let t = dec_res(d.round(0, rcop_datum::decimal::RoundMode::Truncate))?;
                    let unsigned = ft.is_unsigned();
                    int_from_dec(&t, unsigned).map(Some)
                }
            }
        }),
        203 | 207 | 210 | 213 | 217..=237 => {
            int_arith(s, ft, &ch_ft(0), &ch_ft(1), a(0)?, a(1)?, n, ctx)
        }
        3101..=3103 => logical(s, n, a(0)?.arg()?, a(1)?.arg()?),
        3104 => map1_infallible::<IntT, IntT>(n, a(0)?.arg()?, |v| Some(i64::from(v == 0))),
        3105 => map1_infallible::<DecT, IntT>(n, a(0)?.arg()?, |v| Some(i64::from(v.is_zero()))),
        3106 => map1_infallible::<RealT, IntT>(n, a(0)?.arg()?, |v| Some(i64::from(v == 0.0))),
        3108 => {
            let unsigned = ch_ft(0).is_unsigned();
            map1::<IntT, IntT>(n, a(0)?.arg()?, ctx, |v, _| {
                if unsigned {
                    let u = v as u64;
                    if u > 1 << 63 {
                        return Err(Error::Overflow("BIGINT"));
                    }
                    Ok(Some((u as i64).wrapping_neg()))
                } else {
                    v.checked_neg().map(Some).ok_or(Error::Overflow("BIGINT"))
                }
            })
        }
        3109 => map1_infallible::<RealT, RealT>(n, a(0)?.arg()?, |v| Some(-v)),
        3110 => map1_infallible::<DecT, DecT>(n, a(0)?.arg()?, |v| Some(-*v)),
        3111..=3116 => is_null(n, a(0)?),
        3122..=3127 | 3142..=3147 => {
            let keep_null = s >= 3142;
            let want_true = matches!(s, 3122..=3124 | 3142..=3144);
            let x = a(0)?;
            match x {
                _ if matches!(s, 3122 | 3125 | 3142 | 3145) => {
                    truth::<IntT>(n, x.arg()?, |v| v != 0, want_true, keep_null)
                }
                _ if matches!(s, 3123 | 3126 | 3143 | 3146) => {
                    truth::<RealT>(n, x.arg()?, |v| v != 0.0, want_true, keep_null)
                }
                _ => truth::<DecT>(n, x.arg()?, |v| !v.is_zero(), want_true, keep_null),
            }
        }
        4001..=4006 => in_list(f, args, n),
        4101..=4106 => Ok(coalesce(et, args, n)),
        4201..=4206 => Ok(coalesce(et, args, n)),
        4107..=4112 => if_fn(et, args, n),
        4208..=4213 => case_when(et, args, n),
        sig::LIKE => like(f, n, a(0)?.arg()?, a(1)?.arg()?, a(2)?.arg()?),
        _ => Err(Error::unsupported(Feature::ScalarFunc, sig::name(s))),
    }
}

// ---------------------------------------------------------------------------------------------
// Fixed-point decimal fast paths

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

/// Decimal add, subtract, multiply and compare done on `i128` mantissas when an argument
/// is a fixed-point column and every value fits; `None` sends the call to the general path.
fn fixed_fast_path(s: i32, args: &[Value<'_>], n: usize) -> Option<VecCol> {
    let cmp = sig::comparison(s).filter(|(op, t)| *t == EvalType::Decimal && *op != CmpOp::NullEq);
    if !matches!(s, 201 | 205 | 209) && cmp.is_none() {
        return None;
    }
    let [x, y] = args else { return None };
    if !x.is_fixed() && !y.is_fixed() {
        return None;
    }
    let (a, b) = (fview(x)?, fview(y)?);
    let (sa, sb) = (a.scale(), b.scale());
    let mut valid = a.validity(n);
    valid.and_with(&b.validity(n));
    if s == 209 {
        let scale = sa.checked_add(sb).filter(|t| *t <= fixed::MAX_SCALE)?;
        let mut m = Vec::with_capacity(n);
        for i in 0..n {
            m.push(mul_exact(a.at(i), b.at(i))?);
        }
        return Some(VecCol { data: ColData::Fixed(crate::column::FixedVec { m, scale }), valid });
    }
    let scale = sa.max(sb);
    let (pa, pb) = (fixed::pow10(u32::from(scale - sa))?, fixed::pow10(u32::from(scale - sb))?);
    if let Some((op, _)) = cmp {
        let test = op.ordering_test();
        let mut data = Vec::with_capacity(n);
        for i in 0..n {
            let (p, q) = (rescale(a.at(i), pa)?, rescale(b.at(i), pb)?);
            data.push(i64::from(test(p.cmp(&q))));
        }
        return Some(VecCol { data: ColData::Int(data), valid });
    }
    let mut m = Vec::with_capacity(n);
    for i in 0..n {
        let (p, q) = (rescale(a.at(i), pa)?, rescale(b.at(i), pb)?);
        m.push(if s == 201 { p.checked_add(q)? } else { p.checked_sub(q)? });
    }
    Some(VecCol { data: ColData::Fixed(crate::column::FixedVec { m, scale }), valid })
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

// ---------------------------------------------------------------------------------------------
// Helpers

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
fn validity<E: Elem>(a: &Arg<'_, E>, n: usize) -> Bitmap {
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
fn zip_all<'a, A: Elem, B: Elem, T: Default + Clone>(
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
fn valid2<A: Elem, B: Elem>(n: usize, a: &Arg<'_, A>, b: &Arg<'_, B>) -> Bitmap {
    let mut v = validity(a, n);
    v.and_with(&validity(b, n));
    v
}

/// Integer comparison honouring each side's signedness.
#[inline]
pub fn cmp_int(a: i64, a_unsigned: bool, b: i64, b_unsigned: bool) -> Ordering {
    match (a_unsigned, b_unsigned) {
        (false, false) => a.cmp(&b),
        (true, true) => (a as u64).cmp(&(b as u64)),
        (true, false) => {
            // `a < 0` means the unsigned value is at least 2^63, above every signed value.
            if b < 0 || a < 0 { Ordering::Greater } else { a.cmp(&b) }
        }
        (false, true) => cmp_int(b, true, a, false).reverse(),
    }
}

/// A comparison kernel: every slot computed, then NULLs merged (NullEQ handles NULLs itself).
pub fn compare<'a, E: Elem>(
    n: usize,
    op: CmpOp,
    a: Arg<'a, E>,
    b: Arg<'a, E>,
    cmp: impl Fn(E::R<'a>, E::R<'a>) -> Ordering,
) -> VecCol {
    if op == CmpOp::NullEq {
        let mut data = Vec::with_capacity(n);
        for i in 0..n {
            data.push(match (a.get(i), b.get(i)) {
                (None, None) => 1,
                (Some(x), Some(y)) => i64::from(cmp(x, y) == Ordering::Equal),
                _ => 0,
            });
        }
        return VecCol { data: ColData::Int(data), valid: Bitmap::all_valid(n) };
    }
    let test = op.ordering_test();
    let data = zip_all(n, a, b, |x, y| i64::from(test(cmp(x, y))));
    VecCol { data: ColData::Int(data), valid: valid2(n, &a, &b) }
}

fn finite(v: f64) -> Result<f64> {
    if v.is_finite() { Ok(v) } else { Err(Error::Overflow("DOUBLE")) }
}

fn real_arith<'a>(
    n: usize,
    a: Arg<'a, RealT>,
    b: Arg<'a, RealT>,
    f: impl Fn(f64, f64) -> f64,
) -> Result<VecCol> {
    let data = zip_all(n, a, b, f);
    let valid = valid2(n, &a, &b);
    for (i, v) in data.iter().enumerate() {
        if !v.is_finite() && valid.get(i) {
            return Err(Error::Overflow("DOUBLE"));
        }
    }
    Ok(VecCol { data: ColData::Real(data), valid })
}

/// Unwraps a decimal result: truncation is accepted, overflow is an error.
pub fn dec_res(r: rcop_datum::Res<Decimal>) -> Result<Decimal> {
    match r {
        rcop_datum::Res::Overflow(_) => Err(Error::Overflow("DECIMAL")),
        r => Ok(r.value()),
    }
}

/// A decimal kernel: the exact fixed-point path `fast` when it applies, else `f`.
fn dec_binary<'a>(
    n: usize,
    a: Arg<'a, DecT>,
    b: Arg<'a, DecT>,
    fast: fn(&Decimal, &Decimal) -> Option<Decimal>,
    f: impl Fn(&Decimal, &Decimal) -> rcop_datum::Res<Decimal>,
) -> Result<VecCol> {
    let valid = valid2(n, &a, &b);
    let mut data = Vec::with_capacity(n);
    let mut overflow = false;
    let push = |x: &Decimal, y: &Decimal, data: &mut Vec<Decimal>, overflow: &mut bool| {
        if let Some(v) = fast(x, y) {
            data.push(v);
            return;
        }
        match f(x, y) {
            rcop_datum::Res::Overflow(_) => {
                *overflow = true;
                data.push(Decimal::zero());
            }
            r => data.push(r.value()),
        }
    };
    match (a, b) {
        (Arg::Col { s: sa, .. }, Arg::Col { s: sb, .. }) => {
            for (x, y) in sa.iter().zip(sb.iter()).take(n) {
                push(x, y, &mut data, &mut overflow);
            }
        }
        (Arg::Col { s: sa, .. }, Arg::Const(Some(y))) => {
            for x in sa.iter().take(n) {
                push(x, y, &mut data, &mut overflow);
            }
        }
        (Arg::Const(Some(x)), Arg::Col { s: sb, .. }) => {
            for y in sb.iter().take(n) {
                push(x, y, &mut data, &mut overflow);
            }
        }
        (Arg::Const(Some(x)), Arg::Const(Some(y))) => {
            for _ in 0..n {
                push(x, y, &mut data, &mut overflow);
            }
        }
        _ => data.resize(n, Decimal::zero()),
    }
    if overflow {
        // Only an overflow on a non-NULL row is an error.
        for i in 0..n {
            if valid.get(i)
                && let (Some(x), Some(y)) = (a.get(i), b.get(i))
            {
                dec_res(f(x, y))?;
            }
        }
    }
    Ok(VecCol { data: ColData::Decimal(data), valid })
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

#[expect(clippy::too_many_arguments, reason = "one call site; the operands and their types")]
fn int_arith(
    s: i32,
    ft: &FieldType,
    lft: &FieldType,
    rft: &FieldType,
    x: &Value<'_>,
    y: &Value<'_>,
    n: usize,
    ctx: &mut EvalContext,
) -> Result<VecCol> {
    let (lu, ru) = (lft.is_unsigned(), rft.is_unsigned());
    let wide = |v: i64, u: bool| if u { i128::from(v as u64) } else { i128::from(v) };
    let out_unsigned = match s {
        // MOD takes the sign of the dividend.
        217 | 223..=226 => lu,
        _ => ft.is_unsigned() || lu || ru,
    };
    let narrow = move |r: i128| -> Result<i64> {
        if out_unsigned {
            u64::try_from(r).map(|v| v as i64).map_err(|_| Error::Overflow("BIGINT UNSIGNED"))
        } else {
            i64::try_from(r).map_err(|_| Error::Overflow("BIGINT"))
        }
    };
    map2::<IntT, IntT, IntT>(n, x.arg()?, y.arg()?, ctx, |a, b, ctx| {
        let (a, b) = (wide(a, lu), wide(b, ru));
        let r = match s {
            203 | 219..=222 => a + b,
            207 | 227..=233 => a - b,
            210 | 218 => a.checked_mul(b).ok_or(Error::Overflow("BIGINT"))?,
            213 | 234..=237 => {
                if b == 0 {
                    ctx.division_by_zero()?;
                    return Ok(None);
                }
                a / b
            }
            _ => {
                if b == 0 {
                    ctx.division_by_zero()?;
                    return Ok(None);
                }
                a % b
            }
        };
        narrow(r).map(Some)
    })
}

fn logical<'a>(s: i32, n: usize, a: Arg<'a, IntT>, b: Arg<'a, IntT>) -> Result<VecCol> {
    let mut out = VecCol::new(EvalType::Int, n);
    for i in 0..n {
        let (x, y) = (a.get(i).map(|v| v != 0), b.get(i).map(|v| v != 0));
        let r = match s {
            3101 => match (x, y) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            3102 => match (x, y) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            _ => match (x, y) {
                (Some(p), Some(q)) => Some(p ^ q),
                _ => None,
            },
        };
        IntT::push(&mut out, r.map(i64::from));
    }
    Ok(out)
}

fn is_null(n: usize, v: &Value<'_>) -> Result<VecCol> {
    let data: Vec<i64> = match (v, v.col()) {
        (_, Some(c)) => (0..n).map(|i| i64::from(!c.valid.get(i))).collect(),
        (Value::Scalar(s), None) => vec![i64::from(s.is_null()); n],
        _ => vec![0; n],
    };
    Ok(VecCol { data: ColData::Int(data), valid: Bitmap::all_valid(n) })
}

fn truth<'a, E: Elem>(
    n: usize,
    a: Arg<'a, E>,
    truthy: impl Fn(E::R<'a>) -> bool,
    want_true: bool,
    keep_null: bool,
) -> Result<VecCol> {
    let mut out = VecCol::new(EvalType::Int, n);
    for i in 0..n {
        let r = match a.get(i) {
            None if keep_null => None,
            None => Some(0),
            Some(v) => Some(i64::from(truthy(v) == want_true)),
        };
        IntT::push(&mut out, r);
    }
    Ok(out)
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

fn scalar_eq(a: &Scalar, b: &Scalar, coll: Collation) -> bool {
    match (a, b) {
        (Scalar::Bytes(x), Scalar::Bytes(y)) => coll.compare(x, y) == Ordering::Equal,
        (Scalar::Real(x), Scalar::Real(y)) => x == y,
        _ => a == b,
    }
}

fn in_list(f: &Func, args: &[Value<'_>], n: usize) -> Result<VecCol> {
    let coll = match f.meta {
        Meta::Collation(c) => c,
        _ => Collation::Binary,
    };
    let unsigned: Vec<bool> = f.children.iter().map(|c| c.ft.is_unsigned()).collect();
    let mut out = VecCol::new(EvalType::Int, n);
    for i in 0..n {
        let Some(target) = args.first().map(|a| a.scalar_at(i)) else {
            return Err(Error::invalid("IN without arguments"));
        };
        if target.is_null() {
            out.push_null();
            continue;
        }
        let mut found = false;
        let mut saw_null = false;
        for (k, item) in args.iter().enumerate().skip(1) {
            let v = item.scalar_at(i);
            let eq = match (&target, &v) {
                (_, Scalar::Null) => {
                    saw_null = true;
                    false
                }
                (Scalar::Int(x), Scalar::Int(y)) => {
                    let (ux, uy) = (
                        unsigned.first().copied().unwrap_or(false),
                        unsigned.get(k).copied().unwrap_or(false),
                    );
                    cmp_int(*x, ux, *y, uy) == Ordering::Equal
                }
                _ => scalar_eq(&target, &v, coll),
            };
            if eq {
                found = true;
                break;
            }
        }
        if found {
            IntT::push(&mut out, Some(1));
        } else if saw_null {
            out.push_null();
        } else {
            IntT::push(&mut out, Some(0));
        }
    }
    Ok(out)
}

fn coalesce(et: EvalType, args: &[Value<'_>], n: usize) -> VecCol {
    let mut out = VecCol::new(et, n);
    for i in 0..n {
        let v = args.iter().map(|a| a.scalar_at(i)).find(|s| !s.is_null()).unwrap_or(Scalar::Null);
        out.push_scalar(&v);
    }
    out
}

fn if_fn(et: EvalType, args: &[Value<'_>], n: usize) -> Result<VecCol> {
    let [c, t, e] = args else {
        return Err(Error::invalid("IF needs 3 arguments"));
    };
    let mut out = VecCol::new(et, n);
    for i in 0..n {
        let v = if is_true_at(c, i)? { t.scalar_at(i) } else { e.scalar_at(i) };
        out.push_scalar(&v);
    }
    Ok(out)
}

fn case_when(et: EvalType, args: &[Value<'_>], n: usize) -> Result<VecCol> {
    let mut out = VecCol::new(et, n);
    for i in 0..n {
        let mut v = Scalar::Null;
        let mut k = 0;
        loop {
            match (args.get(k), args.get(k + 1)) {
                (Some(c), Some(val)) => {
                    if is_true_at(c, i)? {
                        v = val.scalar_at(i);
                        break;
                    }
                    k += 2;
                }
                (Some(else_v), None) => {
                    v = else_v.scalar_at(i);
                    break;
                }
                _ => break,
            }
        }
        out.push_scalar(&v);
    }
    Ok(out)
}

fn like<'a>(
    f: &Func,
    n: usize,
    text: Arg<'a, BytesT>,
    pattern: Arg<'a, BytesT>,
    escape: Arg<'a, IntT>,
) -> Result<VecCol> {
    let mut out = VecCol::new(EvalType::Int, n);
    match &f.meta {
        Meta::Like(p) => {
            let data =
                zip_all(n, text, Arg::<IntT>::Const(Some(0)), |t, _| i64::from(p.matches(t)));
            let valid = validity(&text, n);
            return Ok(VecCol { data: ColData::Int(data), valid });
        }
        Meta::LikeDynamic(_, collate) => {
            for i in 0..n {
                match (text.get(i), pattern.get(i), escape.get(i)) {
                    (Some(t), Some(p), Some(e)) => {
                        let pat = LikePattern::compile(p, e, *collate)?;
                        IntT::push(&mut out, Some(i64::from(pat.matches(t))));
                    }
                    _ => out.push_null(),
                }
            }
        }
        _ => return Err(Error::invalid("LIKE without metadata")),
    }
    Ok(out)
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
