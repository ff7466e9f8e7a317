//! Comparisons: `<`, `<=`, `>`, `>=`, `=`, `!=`, `<=>` over every eval type, and `IN`.
//! String comparisons use the call's collation.

use std::cmp::Ordering;

use crate::column::{
    Arg, Bitmap, BytesT, ColData, DecT, DurT, Elem, IntT, RealT, Scalar, TimeT, VecCol,
};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::build::{Meta, Node, NodeKind};
use crate::expr::decimal_fast;
use crate::expr::kernel::{valid2, zip_all};
use crate::expr::registry::{Args, Call, Registry};
use crate::expr::sig::type_at;
use crate::expr::value::Value;
use crate::types::{Collation, EvalType, FieldType};

pub(super) fn register(r: &mut Registry) {
    for s in 100..=166 {
        if let Some((_, t)) = comparison(s) {
            let def = r.add(s, Args::same(t, 2), EvalType::Int, compare_kernel);
            if t == EvalType::Decimal {
                def.taking_fixed();
            }
            if t == EvalType::Bytes {
                def.with_meta(collation_meta);
            }
        }
    }
    // In (int, real, decimal, string, time, duration): a constant list is hashed once.
    for s in 4001..=4006 {
        if let Some(t) = type_at(s - 4001) {
            r.add(s, Args::Variadic(t), EvalType::Int, in_kernel).with_meta(in_meta);
        }
    }
    // InJson: equality by JSON comparison (TiKV `compare_in_by_compare_json`).
    r.add(4007, Args::Variadic(EvalType::Json), EvalType::Int, in_kernel);
}

/// The collation a string comparison uses: the call's own (as TiKV).
pub(super) fn collation_meta(ft: &FieldType, _: &[Node]) -> Result<Meta> {
    Ok(Meta::Collation(ft.collation()?))
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<=>`
    NullEq,
}

impl CmpOp {
    /// The test of an [`Ordering`] this operator applies to two non-NULL values (`<=>` is
    /// `=` there; its NULL handling is the caller's).
    pub fn ordering_test(self) -> fn(Ordering) -> bool {
        match self {
            CmpOp::Lt => Ordering::is_lt,
            CmpOp::Le => Ordering::is_le,
            CmpOp::Gt => Ordering::is_gt,
            CmpOp::Ge => Ordering::is_ge,
            CmpOp::Eq | CmpOp::NullEq => Ordering::is_eq,
            CmpOp::Ne => Ordering::is_ne,
        }
    }
}

/// The operator and operand type of a comparison signature (100–165).
pub fn comparison(sig: i32) -> Option<(CmpOp, EvalType)> {
    if !(100..=166).contains(&sig) {
        return None;
    }
    let op = match sig / 10 {
        10 => CmpOp::Lt,
        11 => CmpOp::Le,
        12 => CmpOp::Gt,
        13 => CmpOp::Ge,
        14 => CmpOp::Eq,
        15 => CmpOp::Ne,
        16 => CmpOp::NullEq,
        _ => return None,
    };
    Some((op, type_at(sig % 10)?))
}

fn compare_kernel(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let Some((op, t)) = comparison(c.func.sig) else {
        return Err(crate::error::Error::invalid("not a comparison"));
    };
    let n = c.n;
    if t == EvalType::Decimal
        && let Some(col) = decimal_fast::compare(op, c.args, n)
    {
        return Ok(col);
    }
    let (x, y) = (c.arg(0)?.materialize(), c.arg(1)?.materialize());
    Ok(match t {
        EvalType::Int => {
            let (ua, ub) = (c.arg_ft(0).is_unsigned(), c.arg_ft(1).is_unsigned());
            compare::<IntT>(n, op, x.arg()?, y.arg()?, |p, q| cmp_int(p, ua, q, ub))
        }
        EvalType::Real => compare::<RealT>(n, op, x.arg()?, y.arg()?, cmp_real),
        EvalType::Decimal => compare::<DecT>(n, op, x.arg()?, y.arg()?, |p, q| p.cmp(q)),
        EvalType::Bytes => {
            let coll = match c.meta() {
                Meta::Collation(c) => *c,
                _ => Collation::Binary,
            };
            compare::<BytesT>(n, op, x.arg()?, y.arg()?, |p, q| coll.compare(p, q))
        }
        EvalType::DateTime => compare::<TimeT>(n, op, x.arg()?, y.arg()?, |p, q| p.cmp(&q)),
        EvalType::Duration => compare::<DurT>(n, op, x.arg()?, y.arg()?, |p, q| p.cmp(&q)),
        // JSON comparisons are registered (and evaluated) in `expr/json.rs`; ENUM has none.
        EvalType::Json | EvalType::Enum | EvalType::VectorFloat32 => {
            return Err(Error::invalid(format!("no {t:?} comparison here")));
        }
    })
}

fn in_kernel(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    match c.meta() {
        Meta::InSet(set) => {
            let target = c.args.first().ok_or_else(|| Error::invalid("IN without arguments"))?;
            let unsigned = c.func.children.first().is_some_and(|t| t.ft.is_unsigned());
            set.eval(target, unsigned, c.n)
        }
        _ => {
            // Every row compares with every item: work the request's limits see.
            ctx.tick(c.n.saturating_mul(c.args.len()))?;
            in_list(c.func, c.args, c.n)
        }
    }
}

/// Lists shorter than this are compared item by item (hashing would not pay).
const IN_SET_MIN: usize = 8;

/// The metadata of an `IN`: the collation of a string `IN`, and the hashed list when every
/// item is a constant.
fn in_meta(ft: &FieldType, children: &[Node]) -> Result<Meta> {
    let string = children.first().is_some_and(|c| c.et == EvalType::Bytes);
    let coll = if string { ft.collation()? } else { Collation::Binary };
    let items = children.get(1..).unwrap_or_default();
    if items.len() < IN_SET_MIN {
        return Ok(if string { Meta::Collation(coll) } else { Meta::None });
    }
    let mut consts = Vec::with_capacity(items.len());
    for it in items {
        match &it.kind {
            NodeKind::Const(s) => consts.push((s, it.ft.is_unsigned())),
            _ => return Ok(if string { Meta::Collation(coll) } else { Meta::None }),
        }
    }
    Ok(Meta::InSet(Box::new(InSet::new(coll, consts))))
}

/// An equality key: two values are equal under the `IN` comparison exactly when their keys
/// are (integers by value whatever their signedness, `-0.0` as `0.0`, strings by sort key).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum InKey {
    Int(i128),
    Real(u64),
    Decimal(rcop_datum::Decimal),
    Bytes(Vec<u8>),
    Time(rcop_datum::Time),
    Duration(rcop_datum::Duration),
}

/// A constant `IN` list, hashed once per request by equality key, respecting the string
/// collation. Values without a key that decides equality (strings that are not UTF-8 under
/// a collation with weights, which compare Equal at the first invalid sequence; JSON) are
/// compared one by one as before.
#[derive(Debug, Clone)]
pub struct InSet {
    coll: Collation,
    keys: std::collections::HashSet<InKey, foldhash::fast::RandomState>,
    /// The strings' keys, apart: a target's key is looked up borrowed (no allocation a row).
    strs: std::collections::HashSet<Vec<u8>, foldhash::fast::RandomState>,
    /// Items compared one by one, with their signedness.
    linear: Vec<(Scalar, bool)>,
    /// Every non-NULL item, for a target without a key.
    all: Vec<(Scalar, bool)>,
    has_null: bool,
}

impl InSet {
    fn new(coll: Collation, items: Vec<(&Scalar, bool)>) -> InSet {
        let mut set = InSet {
            coll,
            keys: std::collections::HashSet::with_capacity_and_hasher(
                items.len(),
                foldhash::fast::RandomState::default(),
            ),
            strs: std::collections::HashSet::default(),
            linear: Vec::new(),
            all: Vec::with_capacity(items.len()),
            has_null: false,
        };
        let mut scratch = Vec::new();
        for (s, unsigned) in items {
            if s.is_null() {
                set.has_null = true;
                continue;
            }
            match set.key(s, unsigned, &mut scratch) {
                Some(InKey::Bytes(k)) => {
                    set.strs.insert(k);
                }
                Some(k) => {
                    set.keys.insert(k);
                }
                None => set.linear.push((s.clone(), unsigned)),
            }
            set.all.push((s.clone(), unsigned));
        }
        set
    }

    /// The equality key of `s`, `None` when only a comparison decides.
    fn key(&self, s: &Scalar, unsigned: bool, scratch: &mut Vec<u8>) -> Option<InKey> {
        Some(match s {
            Scalar::Int(v) => {
                InKey::Int(if unsigned { i128::from(*v as u64) } else { i128::from(*v) })
            }
            Scalar::Real(v) => InKey::Real(if *v == 0.0 { 0 } else { v.to_bits() }),
            Scalar::Decimal(d) => InKey::Decimal(*d),
            Scalar::Bytes(b) => {
                if !self.coll.is_bytes() && std::str::from_utf8(b).is_err() {
                    return None;
                }
                InKey::Bytes(self.coll.key(b, scratch).to_vec())
            }
            Scalar::DateTime(t) => InKey::Time(*t),
            Scalar::Duration(d) => InKey::Duration(*d),
            _ => return None,
        })
    }

    /// `target IN (list)` over `n` rows: 1, 0, or NULL (a NULL target, or no match and a
    /// NULL in the list).
    fn eval(&self, target: &Value<'_>, unsigned: bool, n: usize) -> Result<VecCol> {
        let mut out = VecCol::new(EvalType::Int, n);
        let mut scratch = Vec::new();
        let miss = if self.has_null { None } else { Some(0) };
        if let Ok(a) = target.arg::<BytesT>() {
            // Strings read in place, their keys looked up borrowed.
            for i in 0..n {
                let Some(b) = a.get(i) else {
                    out.push_null();
                    continue;
                };
                let hashable = self.coll.is_bytes() || std::str::from_utf8(b).is_ok();
                let one_by_one = |items: &[(Scalar, bool)]| {
                    let t = Scalar::Bytes(b.to_vec());
                    items.iter().any(|(v, _)| scalar_eq(&t, v, self.coll))
                };
                let found = if hashable {
                    self.strs.contains(self.coll.key(b, &mut scratch))
                        || (!self.linear.is_empty() && one_by_one(&self.linear))
                } else {
                    one_by_one(&self.all)
                };
                IntT::push(&mut out, if found { Some(1) } else { miss });
            }
            return Ok(out);
        }
        for i in 0..n {
            let t = target.scalar_at(i);
            if t.is_null() {
                out.push_null();
                continue;
            }
            let eq = |(v, u): &(Scalar, bool)| match (&t, v) {
                (Scalar::Int(x), Scalar::Int(y)) => cmp_int(*x, unsigned, *y, *u).is_eq(),
                _ => scalar_eq(&t, v, self.coll),
            };
            let found = match self.key(&t, unsigned, &mut scratch) {
                Some(InKey::Bytes(k)) => self.strs.contains(&k) || self.linear.iter().any(eq),
                Some(k) => self.keys.contains(&k) || self.linear.iter().any(eq),
                None => self.all.iter().any(eq),
            };
            IntT::push(&mut out, if found { Some(1) } else { miss });
        }
        Ok(out)
    }
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

/// Double comparison as MySQL and TiKV (`NotNan`'s order): `-0 = 0`. A NaN (which no SQL
/// value is) falls back to the total order so the comparison stays deterministic.
#[inline]
pub fn cmp_real(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or_else(|| a.total_cmp(&b))
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

fn scalar_eq(a: &Scalar, b: &Scalar, coll: Collation) -> bool {
    match (a, b) {
        (Scalar::Bytes(x), Scalar::Bytes(y)) => coll.compare(x, y) == Ordering::Equal,
        (Scalar::Real(x), Scalar::Real(y)) => cmp_real(*x, *y) == Ordering::Equal,
        // Two JSON values MySQL cannot order (a NaN) are not equal.
        (Scalar::Json(x), Scalar::Json(y)) => {
            x.as_ref().compare(&y.as_ref()).is_ok_and(|o| o == Ordering::Equal)
        }
        _ => a == b,
    }
}

fn in_list(f: &crate::expr::build::Func, args: &[Value<'_>], n: usize) -> Result<VecCol> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_zero_equals_zero() {
        assert_eq!(cmp_real(-0.0, 0.0), Ordering::Equal);
        assert_eq!(cmp_real(-1.0, 0.0), Ordering::Less);
        assert_eq!(cmp_real(f64::NAN, f64::NAN), Ordering::Equal);
        let valid = Bitmap::all_valid(3);
        let a: Arg<'_, RealT> = Arg::Col { s: &[-0.0, 0.0, 1.0], valid: &valid };
        let b: Arg<'_, RealT> = Arg::Const(Some(0.0));
        let eq = compare::<RealT>(3, CmpOp::Eq, a, b, cmp_real);
        assert_eq!(eq.data, ColData::Int(vec![1, 1, 0]));
        let lt = compare::<RealT>(3, CmpOp::Lt, a, b, cmp_real);
        assert_eq!(lt.data, ColData::Int(vec![0, 0, 0]));
    }
}
