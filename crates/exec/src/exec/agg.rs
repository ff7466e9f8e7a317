//! Aggregation: simple (no GROUP BY) and hash (one or several group-by expressions).
//!
//! Output schema, as TiKV: every aggregate's result columns in `agg_func` order (AVG gives
//! count then sum), then the group-by columns. Groups come out in first-seen order.

use std::collections::HashMap;
use std::time::Instant;

use rcop_datum::Decimal;
use rcop_proto::tipb;

use crate::batch::Batch;
use crate::column::{Arg, ColData, DecT, Elem, IntT, RealT, Scalar, VecCol};
use crate::ctx::{EvalConfig, EvalContext};
use crate::error::{Error, Feature, Result};
use crate::exec::top_n::cmp_scalar;
use crate::exec::{BATCH_MAX_SIZE, BatchResult, ExecEnv, ExecStats, Executor, ScanCounters};
use crate::expr::build::NodeKind;
use crate::expr::eval::{Value, dec_res, eval_func};
use crate::expr::{Node, build, eval};
use crate::fixed;
use crate::types::{Collation, EvalType, FLAG_UNSIGNED, FieldType};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Count,
    Sum,
    Avg,
    Min,
    Max,
    First,
}

/// Fails when `ft` is a string type whose collation the engine cannot apply.
pub(crate) fn require_collation(ft: &FieldType) -> Result<()> {
    if ft.eval_type().ok() == Some(EvalType::Bytes) {
        ft.collation()?;
    }
    Ok(())
}

/// The aggregate functions the engine computes, by their tipb expression type: the table the
/// builder looks functions up in and the capability listing prints.
const AGGREGATES: &[(tipb::ExprType, Kind)] = &[
    (tipb::ExprType::Count, Kind::Count),
    (tipb::ExprType::Sum, Kind::Sum),
    (tipb::ExprType::Avg, Kind::Avg),
    (tipb::ExprType::Min, Kind::Min),
    (tipb::ExprType::Max, Kind::Max),
    (tipb::ExprType::First, Kind::First),
];

/// The aggregate modes the engine runs.
pub const AGG_MODES: &[tipb::AggFunctionMode] =
    &[tipb::AggFunctionMode::CompleteMode, tipb::AggFunctionMode::Partial1Mode];

/// The aggregate functions the engine computes, by their tipb expression type.
pub fn aggregate_functions() -> impl Iterator<Item = tipb::ExprType> {
    AGGREGATES.iter().map(|(t, _)| *t)
}

/// A decimal sum: exact fixed point while it fits in an `i128`, then [`Decimal`].
#[derive(Debug, Clone, Copy)]
enum DecAcc {
    Fixed(i128, u8),
    Slow(Decimal),
}

impl Default for DecAcc {
    fn default() -> Self {
        DecAcc::Fixed(0, 0)
    }
}

impl DecAcc {
    /// Adds `x`: in place when the sum is fixed point of the same scale and does not
    /// overflow (the common case), else through [`DecAcc::add_fixed_slow`].
    #[inline(always)]
    fn add_fixed(&mut self, x: (i128, u8)) -> Result<()> {
        if let DecAcc::Fixed(m, s) = self
            && *s == x.1
            && let Some(r) = m.checked_add(x.0)
        {
            *m = r;
            return Ok(());
        }
        self.add_fixed_slow(x)
    }

    #[cold]
    #[inline(never)]
    fn add_fixed_slow(&mut self, x: (i128, u8)) -> Result<()> {
        if let DecAcc::Fixed(m, s) = *self {
            if s == x.1
                && let Some(r) = m.checked_add(x.0)
            {
                *self = DecAcc::Fixed(r, s);
                return Ok(());
            }
            if let Some((a, b, ns)) = fixed::align((m, s), x)
                && let Some(r) = a.checked_add(b)
            {
                *self = DecAcc::Fixed(r, ns);
                return Ok(());
            }
            let d = fixed::from_fixed(x.0, x.1).ok_or(Error::Overflow("DECIMAL"))?;
            return self.add_slow(&d);
        }
        let d = fixed::from_fixed(x.0, x.1).ok_or(Error::Overflow("DECIMAL"))?;
        self.add_slow(&d)
    }

    fn add_slow(&mut self, x: &Decimal) -> Result<()> {
        let cur = self.value()?;
        *self = DecAcc::Slow(dec_res(cur.add(x))?);
        Ok(())
    }

    #[inline]
    fn add(&mut self, x: &Decimal) -> Result<()> {
        match fixed::to_fixed(x) {
            Some(f) if matches!(self, DecAcc::Fixed(..)) => self.add_fixed(f),
            _ => self.add_slow(x),
        }
    }

    fn value(&self) -> Result<Decimal> {
        match *self {
            DecAcc::Fixed(m, s) => fixed::from_fixed(m, s).ok_or(Error::Overflow("DECIMAL")),
            DecAcc::Slow(d) => Ok(d),
        }
    }
}

/// The decimal sums of every group: plain `i128`s at one scale while every value added has
/// that scale and no sum overflows (the hot path: one add per row, no per-group tag), else a
/// [`DecAcc`] per group from the first value that does not fit on.
#[derive(Debug)]
enum DecSums {
    /// Exact sums at `scale` (`None` until the first value arrives: every sum is then zero).
    Fixed { m: Vec<i128>, scale: Option<u8> },
    /// One accumulator per group.
    Mixed(Vec<DecAcc>),
}

impl DecSums {
    fn resize(&mut self, groups: usize) {
        match self {
            DecSums::Fixed { m, .. } => m.resize(groups, 0),
            DecSums::Mixed(v) => v.resize(groups, DecAcc::default()),
        }
    }

    /// The accumulator of group `gi` after switching to one [`DecAcc`] per group (`None`
    /// if there is no such group).
    #[cold]
    #[inline(never)]
    fn mixed_at(&mut self, gi: usize) -> Option<&mut DecAcc> {
        if let DecSums::Fixed { m, scale } = self {
            let s = scale.unwrap_or(0);
            *self = DecSums::Mixed(m.iter().map(|&x| DecAcc::Fixed(x, s)).collect());
        }
        match self {
            DecSums::Mixed(v) => v.get_mut(gi),
            DecSums::Fixed { .. } => None,
        }
    }

    /// Adds `ms[i]` (scale `scale`) to the sum of group `g[i]` and counts it in `cnt`, for
    /// every `i` while the sums stay plain `i128`s. Returns how many rows it added: all of
    /// `g`, or fewer when a value needs the general path ([`DecSums::add_fixed`]), from which
    /// the caller goes on.
    #[inline]
    fn add_dense(&mut self, g: &[u32], ms: &[i128], scale: u8, cnt: &mut [i64]) -> usize {
        let DecSums::Fixed { m: sums, scale: s } = self else { return 0 };
        if s.is_some_and(|s| s != scale) {
            return 0;
        }
        *s = Some(scale);
        for (k, (&gi, &x)) in g.iter().zip(ms).enumerate() {
            let (Some(acc), Some(c)) = (sums.get_mut(gi as usize), cnt.get_mut(gi as usize)) else {
                continue;
            };
            let Some(r) = acc.checked_add(x) else { return k };
            *acc = r;
            *c += 1;
        }
        g.len().min(ms.len())
    }

    /// Adds the fixed-point `x` to group `gi` (ignored if there is no such group).
    #[inline]
    fn add_fixed(&mut self, gi: usize, x: (i128, u8)) -> Result<()> {
        if let DecSums::Fixed { m, scale } = self
            && scale.is_none_or(|s| s == x.1)
            && let Some(acc) = m.get_mut(gi)
            && let Some(r) = acc.checked_add(x.0)
        {
            *scale = Some(x.1);
            *acc = r;
            return Ok(());
        }
        match self.mixed_at(gi) {
            Some(acc) => acc.add_fixed(x),
            None => Ok(()),
        }
    }

    /// Adds `x` to group `gi` (ignored if there is no such group).
    fn add(&mut self, gi: usize, x: &Decimal) -> Result<()> {
        if let Some(f) = fixed::to_fixed(x) {
            return self.add_fixed(gi, f);
        }
        match self.mixed_at(gi) {
            Some(acc) => acc.add(x),
            None => Ok(()),
        }
    }

    /// The sum of group `gi`.
    fn value(&self, gi: usize) -> Result<Decimal> {
        match self {
            DecSums::Fixed { m, scale } => {
                let x = m.get(gi).copied().unwrap_or(0);
                fixed::from_fixed(x, scale.unwrap_or(0)).ok_or(Error::Overflow("DECIMAL"))
            }
            DecSums::Mixed(v) => v.get(gi).copied().unwrap_or_default().value(),
        }
    }
}

#[derive(Debug)]
enum State {
    Count(Vec<i64>),
    SumDec { sum: DecSums, cnt: Vec<i64> },
    SumReal { sum: Vec<f64>, cnt: Vec<i64> },
    Extreme { max: bool, vals: Vec<Scalar> },
    First { vals: Vec<Option<Scalar>> },
}

#[derive(Debug)]
struct AggFn {
    kind: Kind,
    arg: Node,
    /// The result type (for AVG: of the sum).
    ft: FieldType,
    state: State,
}

impl AggFn {
    fn build(
        e: &tipb::Expr,
        schema: &[FieldType],
        cfg: &EvalConfig,
        depth: usize,
    ) -> Result<AggFn> {
        let tp = e.tp.unwrap_or(0);
        let Some(&(_, kind)) = AGGREGATES.iter().find(|(t, _)| *t as i32 == tp) else {
            return Err(Error::unsupported(Feature::AggregateFunction, build::expr_type_name(tp)));
        };
        match e.agg_func_mode.unwrap_or(0) {
            m if AGG_MODES.iter().any(|x| *x as i32 == m) => {}
            m => {
                return Err(Error::unsupported(
                    Feature::AggregateMode,
                    tipb::AggFunctionMode::try_from(m)
                        .map_or_else(|_| m.to_string(), |x| format!("{} ({m})", x.as_str_name())),
                ));
            }
        }
        if e.has_distinct == Some(true) {
            return Err(Error::unsupported(Feature::AggregateMode, "DISTINCT aggregates"));
        }
        let [child] = e.children.as_slice() else {
            return Err(Error::unsupported(
                Feature::AggregateMode,
                format!("{} arguments to {}", e.children.len(), build::expr_type_name(tp)),
            ));
        };
        let arg = build::build(child, schema, cfg, depth)?;
        let own = FieldType::from_proto(e.field_type.as_ref());
        let ft = match kind {
            Kind::Count => FieldType::long_long(),
            Kind::Sum | Kind::Avg => {
                let et = own.eval_type()?;
                match (arg.et, et) {
                    (EvalType::Int | EvalType::Decimal, EvalType::Decimal)
                    | (EvalType::Int | EvalType::Real | EvalType::Decimal, EvalType::Real) => own,
                    (a, b) => {
                        return Err(Error::unsupported(
                            Feature::AggregateMode,
                            format!("SUM/AVG of {a:?} as {b:?}"),
                        ));
                    }
                }
            }
            _ => {
                if own.eval_type().ok() == Some(arg.et) {
                    own
                } else {
                    arg.ft_for_output()
                }
            }
        };
        if matches!(kind, Kind::Min | Kind::Max) {
            // MIN/MAX of strings compare under the collation: one we cannot apply is an
            // error, never a silent byte comparison.
            require_collation(&ft)?;
        }
        let state = match kind {
            Kind::Count => State::Count(Vec::new()),
            Kind::Sum | Kind::Avg if ft.eval_type()? == EvalType::Decimal => State::SumDec {
                sum: DecSums::Fixed { m: Vec::new(), scale: None },
                cnt: Vec::new(),
            },
            Kind::Sum | Kind::Avg => State::SumReal { sum: Vec::new(), cnt: Vec::new() },
            Kind::Min | Kind::Max => State::Extreme { max: kind == Kind::Max, vals: Vec::new() },
            Kind::First => State::First { vals: Vec::new() },
        };
        Ok(AggFn { kind, arg, ft, state })
    }

    fn out_fts(&self, out: &mut Vec<FieldType>) {
        match self.kind {
            Kind::Count => out.push(FieldType::long_long()),
            Kind::Avg => {
                let mut c = FieldType::long_long();
                c.flag |= FLAG_UNSIGNED;
                out.push(c);
                out.push(self.ft);
            }
            _ => out.push(self.ft),
        }
    }

    fn grow(&mut self, groups: usize) {
        match &mut self.state {
            State::Count(v) => v.resize(groups, 0),
            State::SumDec { sum, cnt } => {
                sum.resize(groups);
                cnt.resize(groups, 0);
            }
            State::SumReal { sum, cnt } => {
                sum.resize(groups, 0.0);
                cnt.resize(groups, 0);
            }
            State::Extreme { vals, .. } => vals.resize(groups, Scalar::Null),
            State::First { vals } => vals.resize(groups, None),
        }
    }

    /// Folds `v` (over the `g.len()` logical rows) into the groups `g`.
    fn update(&mut self, g: &[u32], v: &Value<'_>, arg_ft: &FieldType) -> Result<()> {
        let ft = self.ft;
        match &mut self.state {
            State::Count(c) => {
                // COUNT(constant): every row counts, or none (NULL).
                if let Value::Scalar(x) = v {
                    if !x.is_null() {
                        for &gi in g {
                            if let Some(n) = c.get_mut(gi as usize) {
                                *n += 1;
                            }
                        }
                    }
                    return Ok(());
                }
                for (i, &gi) in g.iter().enumerate() {
                    let present = v.col().is_some_and(|col| col.valid.get(i));
                    if let Some(x) = c.get_mut(gi as usize) {
                        *x += i64::from(present);
                    }
                }
            }
            State::SumDec { sum, cnt }
                if matches!(v.col().map(|c| &c.data), Some(ColData::Fixed(_))) =>
            {
                if let Some(VecCol { data: ColData::Fixed(f), valid }) = v.col() {
                    let start = match f.m.get(..g.len()) {
                        Some(ms) if valid.no_nulls() => sum.add_dense(g, ms, f.scale, cnt),
                        _ => 0,
                    };
                    for (i, &gi) in g.iter().enumerate().skip(start) {
                        if !valid.get(i) {
                            continue;
                        }
                        let (Some(c), Some(m)) = (cnt.get_mut(gi as usize), f.m.get(i)) else {
                            continue;
                        };
                        sum.add_fixed(gi as usize, (*m, f.scale))?;
                        *c += 1;
                    }
                }
            }
            State::SumDec { sum, cnt } => match v.arg::<DecT>() {
                Ok(Arg::Col { s, valid }) => {
                    for (i, &gi) in g.iter().enumerate() {
                        if !valid.get(i) {
                            continue;
                        }
                        let (Some(c), Some(x)) = (cnt.get_mut(gi as usize), s.get(i)) else {
                            continue;
                        };
                        sum.add(gi as usize, x)?;
                        *c += 1;
                    }
                }
                Ok(Arg::Const(x)) => {
                    if let Some(x) = x {
                        for &gi in g {
                            if let Some(c) = cnt.get_mut(gi as usize) {
                                sum.add(gi as usize, x)?;
                                *c += 1;
                            }
                        }
                    }
                }
                Err(_) => {
                    let a = v.arg::<IntT>()?;
                    let unsigned = arg_ft.is_unsigned();
                    for (i, &gi) in g.iter().enumerate() {
                        let Some(x) = a.get(i) else { continue };
                        let m = if unsigned { i128::from(x as u64) } else { i128::from(x) };
                        if let Some(c) = cnt.get_mut(gi as usize) {
                            sum.add_fixed(gi as usize, (m, 0))?;
                            *c += 1;
                        }
                    }
                }
            },
            State::SumReal { sum, cnt } => {
                let unsigned = arg_ft.is_unsigned();
                for (i, &gi) in g.iter().enumerate() {
                    let x = match v.scalar_at(i) {
                        Scalar::Real(x) => x,
                        Scalar::Int(x) if unsigned => x as u64 as f64,
                        Scalar::Int(x) => x as f64,
                        Scalar::Decimal(d) => d.as_f64(),
                        _ => continue,
                    };
                    if let (Some(acc), Some(c)) =
                        (sum.get_mut(gi as usize), cnt.get_mut(gi as usize))
                    {
                        *acc += x;
                        *c += 1;
                    }
                }
            }
            State::Extreme { max, vals } => {
                for (i, &gi) in g.iter().enumerate() {
                    let x = v.scalar_at(i);
                    if x.is_null() {
                        continue;
                    }
                    if let Some(cur) = vals.get_mut(gi as usize) {
                        let better = cur.is_null() || {
                            let o = cmp_scalar(&x, cur, &ft);
                            if *max { o.is_gt() } else { o.is_lt() }
                        };
                        if better {
                            *cur = x;
                        }
                    }
                }
            }
            State::First { vals } => {
                for (i, &gi) in g.iter().enumerate() {
                    if let Some(slot @ None) = vals.get_mut(gi as usize) {
                        *slot = Some(v.scalar_at(i));
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(&self, groups: usize, out: &mut Vec<VecCol>) -> Result<()> {
        match &self.state {
            State::Count(c) => out.push(VecCol {
                data: ColData::Int(c.clone()),
                valid: crate::column::Bitmap::all_valid(groups),
            }),
            State::SumDec { sum, cnt } => {
                if self.kind == Kind::Avg {
                    out.push(VecCol {
                        data: ColData::Int(cnt.clone()),
                        valid: crate::column::Bitmap::all_valid(groups),
                    });
                }
                let mut col = VecCol::new(EvalType::Decimal, groups);
                for (gi, c) in cnt.iter().enumerate() {
                    let v = if *c > 0 { Some(sum.value(gi)?) } else { None };
                    DecT::push(&mut col, v.as_ref());
                }
                out.push(col);
            }
            State::SumReal { sum, cnt } => {
                if self.kind == Kind::Avg {
                    out.push(VecCol {
                        data: ColData::Int(cnt.clone()),
                        valid: crate::column::Bitmap::all_valid(groups),
                    });
                }
                let mut col = VecCol::new(EvalType::Real, groups);
                for (s, c) in sum.iter().zip(cnt) {
                    RealT::push(&mut col, (*c > 0).then_some(*s));
                }
                out.push(col);
            }
            State::Extreme { vals, .. } => {
                let mut col = VecCol::new(self.ft.eval_type()?, groups);
                vals.iter().for_each(|v| col.push_scalar(v));
                out.push(col);
            }
            State::First { vals } => {
                let mut col = VecCol::new(self.ft.eval_type()?, groups);
                vals.iter().for_each(|v| col.push_scalar(v.as_ref().unwrap_or(&Scalar::Null)));
                out.push(col);
            }
        }
        Ok(())
    }
}

/// Appends the group-key encoding of row `i` of `v` (equal keys ⇔ equal values under the
/// type's collation).
fn encode_key(v: &Value<'_>, i: usize, ft: &FieldType, buf: &mut Vec<u8>, scratch: &mut Vec<u8>) {
    let s;
    let col = match v {
        Value::Scalar(x) => {
            s = VecCol::broadcast(x_et(x), x, 1);
            return encode_key_col(&s, 0, ft, buf, scratch);
        }
        Value::Owned(c) => c,
        Value::Ref(c) => *c,
    };
    encode_key_col(col, i, ft, buf, scratch);
}

fn x_et(x: &Scalar) -> EvalType {
    match x {
        Scalar::Null | Scalar::Int(_) => EvalType::Int,
        Scalar::Real(_) => EvalType::Real,
        Scalar::Decimal(_) => EvalType::Decimal,
        Scalar::Bytes(_) => EvalType::Bytes,
        Scalar::DateTime(_) => EvalType::DateTime,
        Scalar::Duration(_) => EvalType::Duration,
        Scalar::Json(_) => EvalType::Json,
        Scalar::Enum(..) => EvalType::Enum,
    }
}

fn encode_key_col(
    col: &VecCol,
    i: usize,
    ft: &FieldType,
    buf: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) {
    if !col.valid.get(i) {
        buf.push(0);
        return;
    }
    match &col.data {
        ColData::Int(d) => {
            buf.push(1);
            buf.extend_from_slice(&d.get(i).copied().unwrap_or(0).to_le_bytes());
        }
        ColData::Real(d) => {
            buf.push(2);
            let x = d.get(i).copied().unwrap_or(0.0);
            let x = if x == 0.0 { 0.0 } else { x };
            buf.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        ColData::Decimal(_) | ColData::Fixed(_) => {
            buf.push(3);
            scratch.clear();
            if let Scalar::Decimal(x) = col.scalar_at(i) {
                x.write_str(scratch);
            }
            let mut t: &[u8] = scratch;
            if t.contains(&b'.') {
                while let [rest @ .., b'0'] = t {
                    t = rest;
                }
                if let [rest @ .., b'.'] = t {
                    t = rest;
                }
            }
            if t == b"-0" {
                t = b"0";
            }
            buf.extend_from_slice(&(t.len() as u32).to_le_bytes());
            buf.extend_from_slice(t);
        }
        ColData::Bytes(d) => {
            buf.push(4);
            let coll = ft.collation().unwrap_or(crate::types::Collation::Binary);
            let k = coll.key(d.get(i));
            buf.extend_from_slice(&(k.len() as u32).to_le_bytes());
            buf.extend_from_slice(k);
        }
        ColData::DateTime(d) => {
            buf.push(5);
            buf.extend_from_slice(&d.get(i).map_or(0, |t| t.to_packed_u64()).to_le_bytes());
        }
        ColData::Duration(d) => {
            buf.push(6);
            buf.extend_from_slice(&d.get(i).map_or(0, |t| t.nanos()).to_le_bytes());
        }
        // JSON groups by its binary form, ENUM by its member index (TiKV hashes both so).
        ColData::Json(d) => {
            buf.push(7);
            let b = d.get(i);
            buf.extend_from_slice(&(b.len() as u32).to_le_bytes());
            buf.extend_from_slice(b);
        }
        ColData::Enum(d) => {
            buf.push(8);
            buf.extend_from_slice(d.get(i).get(..8).unwrap_or(&[0; 8]));
        }
    }
}

/// Longest group-key encoding packed into a `u128` (the last byte holds the length).
const SHORT_KEY: usize = 15;

/// The group-key encoding `key` packed with its length into a `u128` when it has at most
/// [`SHORT_KEY`] bytes (distinct keys give distinct words).
#[inline]
fn pack_short_key(key: &[u8]) -> Option<u128> {
    let mut w = [0u8; 16];
    w.get_mut(..key.len()).filter(|_| key.len() <= SHORT_KEY)?.copy_from_slice(key);
    w[15] = key.len() as u8;
    Some(u128::from_le_bytes(w))
}

/// [`pack_short_key`] of the group-key encoding of row `i` of `keys` (collations `colls`),
/// built without the byte buffer when every key is a string or integer column value and the
/// encoding fits; `None` otherwise (the caller then encodes the general way).
#[inline]
fn short_key(keys: &[Value<'_>], colls: &[Collation], i: usize) -> Option<u128> {
    let mut w = [0u8; 16];
    let mut at = 0usize;
    for (k, coll) in keys.iter().zip(colls) {
        let col = k.col()?;
        if !col.valid.get(i) {
            *w.get_mut(at)? = 0;
            at += 1;
            continue;
        }
        match &col.data {
            ColData::Bytes(d) => {
                let v = coll.key(d.get(i));
                let end = at.checked_add(5 + v.len()).filter(|e| *e <= SHORT_KEY)?;
                let dst = w.get_mut(at..end)?;
                let (head, body) = dst.split_at_mut(5);
                head[0] = 4;
                head[1..].copy_from_slice(&(v.len() as u32).to_le_bytes());
                for (o, b) in body.iter_mut().zip(v) {
                    *o = *b;
                }
                at = end;
            }
            ColData::Int(d) => {
                let dst = w.get_mut(at..at + 9).filter(|_| at + 9 <= SHORT_KEY)?;
                dst[0] = 1;
                dst[1..].copy_from_slice(&d.get(i).copied().unwrap_or(0).to_le_bytes());
                at += 9;
            }
            _ => return None,
        }
    }
    w[15] = at as u8;
    Some(u128::from_le_bytes(w))
}

/// Scalar function signatures whose results [`find_reuse`] may share between aggregates:
/// the arithmetic `+`, `-` and `*` of reals, decimals and integers (`PlusReal` 200 to
/// `MultiplyInt` 210), which are deterministic and so give the same column each time.
fn shareable(e: &tipb::Expr) -> bool {
    use tipb::ExprType as T;
    let Some(tp) = e.tp else { return false };
    if tp == T::ScalarFunc as i32 {
        return e.sig.is_some_and(|s| (200..=210).contains(&s)) && e.children.iter().all(shareable);
    }
    [
        T::ColumnRef,
        T::Null,
        T::Int64,
        T::Uint64,
        T::Float32,
        T::Float64,
        T::String,
        T::Bytes,
        T::MysqlDecimal,
        T::MysqlDuration,
        T::MysqlTime,
    ]
    .iter()
    .any(|&t| t as i32 == tp)
}

/// For each aggregate, the (child, earlier aggregate) pair whose argument it can reuse (see
/// `AggregationExecutor::reuse`): an argument that is a function call with a child equal,
/// as a tipb expression, to the function-call argument of an earlier aggregate.
fn find_reuse(protos: &[tipb::Expr], aggs: &[AggFn]) -> Vec<Option<(usize, usize)>> {
    let arg = |e: &tipb::Expr| e.children.first().cloned();
    protos
        .iter()
        .enumerate()
        .map(|(j, e)| {
            let a = arg(e)?;
            let NodeKind::Func(f) = &aggs.get(j)?.arg.kind else { return None };
            if f.children.len() != a.children.len() {
                return None;
            }
            a.children.iter().enumerate().find_map(|(k, child)| {
                if child.tp != Some(tipb::ExprType::ScalarFunc as i32) || !shareable(child) {
                    return None;
                }
                let i = protos.get(..j)?.iter().position(|p| arg(p).as_ref() == Some(child))?;
                let (shared, built) = (&aggs.get(i)?.arg, f.children.get(k)?);
                (matches!(shared.kind, NodeKind::Func(_))
                    && shared.ft == built.ft
                    && shared.et == built.et)
                    .then_some((k, i))
            })
        })
        .collect()
}

/// The aggregation executor (simple when there is no GROUP BY, hash otherwise).
#[derive(Debug)]
pub struct AggregationExecutor {
    child: Box<dyn Executor>,
    aggs: Vec<AggFn>,
    group_by: Vec<Node>,
    /// Per aggregate, `Some((k, i))` when child `k` of its argument (a function call) is the
    /// same expression as the argument of the earlier aggregate `i`, whose value per batch is
    /// then reused instead of computed again (Q1: `price * (1 - discount)` inside the charge).
    reuse: Vec<Option<(usize, usize)>>,
    refs: Vec<usize>,
    schema: Vec<FieldType>,
    /// Groups by encoded key: keys of at most [`SHORT_KEY`] bytes packed into a `u128`
    /// (no allocation, one-word hashing and comparison), longer ones as byte vectors.
    short: HashMap<u128, u32, foldhash::fast::RandomState>,
    map: HashMap<Vec<u8>, u32, foldhash::fast::RandomState>,
    group_values: Vec<Vec<Scalar>>,
    groups: usize,
    output: Option<(Vec<VecCol>, usize)>,
    stats: ExecStats,
}

impl AggregationExecutor {
    /// Builds the aggregation of tipb `agg` over `child`.
    pub fn new(
        child: Box<dyn Executor>,
        agg: &tipb::Aggregation,
        cfg: &EvalConfig,
        max_depth: usize,
    ) -> Result<Self> {
        let child_schema = child.schema().to_vec();
        let mut aggs = Vec::with_capacity(agg.agg_func.len());
        for e in &agg.agg_func {
            aggs.push(AggFn::build(e, &child_schema, cfg, max_depth)?);
        }
        let mut group_by = Vec::with_capacity(agg.group_by.len());
        for e in &agg.group_by {
            let g = build::build(e, &child_schema, cfg, max_depth)?;
            // Group keys of strings are compared under their collation.
            require_collation(&g.ft)?;
            require_collation(&g.ft_for_output())?;
            group_by.push(g);
        }
        let reuse = find_reuse(&agg.agg_func, &aggs);
        let mut refs = Vec::new();
        aggs.iter().for_each(|a| a.arg.column_refs(&mut refs));
        group_by.iter().for_each(|g| g.column_refs(&mut refs));
        refs.sort_unstable();
        refs.dedup();
        let mut schema = Vec::new();
        aggs.iter().for_each(|a| a.out_fts(&mut schema));
        schema.extend(group_by.iter().map(Node::ft_for_output));
        let mut ex = AggregationExecutor {
            child,
            aggs,
            group_by,
            reuse,
            refs,
            schema,
            short: HashMap::with_hasher(foldhash::fast::RandomState::default()),
            map: HashMap::with_hasher(foldhash::fast::RandomState::default()),
            group_values: Vec::new(),
            groups: 0,
            output: None,
            stats: ExecStats::default(),
        };
        if ex.group_by.is_empty() {
            ex.groups = 1;
            ex.aggs.iter_mut().for_each(|a| a.grow(1));
        }
        Ok(ex)
    }

    fn consume_batch(&mut self, batch: &mut Batch, ctx: &mut EvalContext) -> Result<()> {
        batch.ensure(&self.refs, ctx)?;
        // Gather the read columns once rather than once per expression reading them.
        batch.compact(&self.refs);
        let n = batch.len();
        let g: Vec<u32> = if self.group_by.is_empty() {
            vec![0; n]
        } else {
            let mut keys = Vec::with_capacity(self.group_by.len());
            for e in &self.group_by {
                keys.push(eval(e, batch, ctx)?);
            }
            let mut ids = Vec::with_capacity(n);
            let mut buf = Vec::new();
            let mut scratch = Vec::new();
            let colls: Vec<Collation> = self
                .group_by
                .iter()
                .map(|e| e.ft.collation().unwrap_or(Collation::Binary))
                .collect();
            for i in 0..n {
                // Short string and integer keys are packed straight into a word; anything
                // else goes through the byte encoding (packed too when short).
                let short = match short_key(&keys, &colls, i) {
                    Some(k) => Some(k),
                    None => {
                        buf.clear();
                        for (k, e) in keys.iter().zip(&self.group_by) {
                            encode_key(k, i, &e.ft, &mut buf, &mut scratch);
                        }
                        pack_short_key(&buf)
                    }
                };
                let known = match short {
                    Some(k) => self.short.get(&k),
                    None => self.map.get(buf.as_slice()),
                };
                let id = match known {
                    Some(&id) => id,
                    None => {
                        let id = u32::try_from(self.groups)
                            .map_err(|_| Error::Overflow("group count"))?;
                        match short {
                            Some(k) => self.short.insert(k, id),
                            None => self.map.insert(buf.clone(), id),
                        };
                        self.group_values.push(keys.iter().map(|k| k.scalar_at(i)).collect());
                        self.groups += 1;
                        id
                    }
                };
                ids.push(id);
            }
            let groups = self.groups;
            self.aggs.iter_mut().for_each(|a| a.grow(groups));
            ids
        };
        let mut kept: Vec<Option<Value<'_>>> = Vec::new();
        for (j, a) in self.aggs.iter_mut().enumerate() {
            let reused = match (self.reuse.get(j).copied().flatten(), &a.arg.kind) {
                (Some((k, i)), NodeKind::Func(f)) => match kept.get(i) {
                    Some(Some(Value::Owned(shared))) => {
                        let mut args = Vec::with_capacity(f.children.len());
                        for (c, child) in f.children.iter().enumerate() {
                            args.push(if c == k {
                                Value::Ref(shared)
                            } else {
                                eval(child, batch, ctx)?
                            });
                        }
                        Some(Value::Owned(eval_func(f, &a.arg.ft, a.arg.et, &args, n, ctx)?))
                    }
                    _ => None,
                },
                _ => None,
            };
            let v = match reused {
                Some(v) => v,
                None => eval(&a.arg, batch, ctx)?,
            };
            let arg_ft = a.arg.ft;
            a.update(&g, &v, &arg_ft)?;
            let wanted = self.reuse.iter().flatten().any(|&(_, i)| i == j);
            kept.push(wanted.then_some(v));
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<Vec<VecCol>> {
        let mut cols = Vec::with_capacity(self.schema.len());
        for a in &self.aggs {
            a.finish(self.groups, &mut cols)?;
        }
        for (j, e) in self.group_by.iter().enumerate() {
            let mut col = VecCol::new(e.et, self.groups);
            for gv in &self.group_values {
                col.push_scalar(gv.get(j).unwrap_or(&Scalar::Null));
            }
            cols.push(col);
        }
        Ok(cols)
    }
}

impl Executor for AggregationExecutor {
    fn schema(&self) -> &[FieldType] {
        &self.schema
    }

    fn next_batch(&mut self, hint: usize, env: &mut ExecEnv<'_>) -> Result<BatchResult> {
        let start = Instant::now();
        if self.output.is_none() {
            loop {
                let mut r = self.child.next_batch(BATCH_MAX_SIZE, env)?;
                self.consume_batch(&mut r.batch, env.ctx)?;
                if r.drained {
                    break;
                }
            }
            self.output = Some((self.finish()?, 0));
        }
        let Some((cols, pos)) = self.output.as_mut() else {
            return Err(Error::invalid("aggregation output missing"));
        };
        let end = (*pos + hint.max(1)).min(self.groups);
        let rows: Vec<u32> = (*pos as u32..end as u32).collect();
        let out: Vec<VecCol> = cols.iter().map(|c| c.gather(&rows)).collect();
        *pos = end;
        let mut batch = Batch::from_cols(out);
        batch.logical = (0..rows.len() as u32).collect();
        batch.physical_len = rows.len();
        self.stats.record(start, rows.len());
        Ok(BatchResult { batch, drained: end >= self.groups })
    }

    fn collect_stats(&self, sink: &mut Vec<ExecStats>) {
        self.child.collect_stats(sink);
        sink.push(self.stats);
    }

    fn scan_counters(&self) -> &ScanCounters {
        self.child.scan_counters()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::{BytesT, IntT};

    /// The general key: every key's byte encoding, packed when short.
    fn general(keys: &[Value<'_>], fts: &[FieldType], i: usize) -> Option<u128> {
        let (mut buf, mut scratch) = (Vec::new(), Vec::new());
        for (k, ft) in keys.iter().zip(fts) {
            encode_key(k, i, ft, &mut buf, &mut scratch);
        }
        pack_short_key(&buf)
    }

    #[test]
    fn short_keys_equal_packed_general_keys() {
        let mut s = VecCol::new(EvalType::Bytes, 6);
        for v in [Some(&b"A"[..]), None, Some(b"a  "), Some(b"a"), Some(b""), Some(b"abcdefghijk")]
        {
            BytesT::push(&mut s, v);
        }
        let mut n = VecCol::new(EvalType::Int, 6);
        for v in [Some(-1), Some(7), None, Some(i64::MAX), Some(0), Some(1)] {
            IntT::push(&mut n, v);
        }
        let mut pad = FieldType::new(rcop_datum::chunk::mysql_type::STRING);
        pad.collate = -46;
        let bin = FieldType::new(rcop_datum::chunk::mysql_type::STRING);
        let int = FieldType::long_long();
        for (fts, cols) in [
            (vec![pad, pad], vec![&s, &s]),
            (vec![bin, bin], vec![&s, &s]),
            (vec![pad, int], vec![&s, &n]),
            (vec![int], vec![&n]),
        ] {
            let keys: Vec<Value<'_>> = cols.into_iter().map(Value::Ref).collect();
            let colls: Vec<Collation> = fts.iter().map(|f| f.collation().unwrap()).collect();
            for i in 0..6 {
                let fast = short_key(&keys, &colls, i);
                let want = general(&keys, &fts, i);
                // Same key whenever the fast path answers; it only declines long keys.
                if fast.is_some() || want.is_some() {
                    assert_eq!(fast, want, "row {i} {fts:?}");
                }
            }
        }
        // PAD SPACE: "a  " and "a" are one group; binary: two.
        let keys = [Value::Ref(&s)];
        let (p, b) = ([Collation::PadSpaceBin], [Collation::Binary]);
        assert_eq!(short_key(&keys, &p, 2), short_key(&keys, &p, 3));
        assert_ne!(short_key(&keys, &b, 2), short_key(&keys, &b, 3));
        // Eleven bytes do not fit beside their five-byte header (15 bytes at most).
        assert_eq!(short_key(&keys, &b, 5), None);
        // A scalar key takes the general path.
        assert_eq!(short_key(&[Value::Scalar(Scalar::Int(1))], &b, 0), None);
    }
    #[test]
    fn dec_sums_plain_then_mixed() {
        let text = |s: &DecSums, g: usize| s.value(g).unwrap().to_string();
        let mut s = DecSums::Fixed { m: Vec::new(), scale: None };
        s.resize(2);
        let mut cnt = vec![0i64; 2];
        // 1.25 + 2.50 into group 0, -0.75 into group 1.
        assert_eq!(s.add_dense(&[0, 1, 0], &[125, -75, 250], 2, &mut cnt), 3);
        assert_eq!(
            (text(&s, 0), text(&s, 1), cnt.clone()),
            ("3.75".into(), "-0.75".into(), vec![2, 1])
        );
        assert!(matches!(s, DecSums::Fixed { .. }));
        // Another scale is not added densely; the general path aligns it.
        assert_eq!(s.add_dense(&[1], &[5], 1, &mut cnt), 0);
        s.add_fixed(1, (5, 1)).unwrap();
        assert_eq!(text(&s, 1), "-0.25");
        assert!(matches!(s, DecSums::Mixed(_)));
        // Overflowing the i128 stops the dense add at that row and goes on exactly.
        let mut s = DecSums::Fixed { m: Vec::new(), scale: None };
        s.resize(1);
        let mut cnt = vec![0i64; 1];
        assert_eq!(s.add_dense(&[0, 0, 0], &[i128::MAX, 1, 2], 0, &mut cnt), 1);
        s.add_fixed(0, (1, 0)).unwrap();
        s.add_fixed(0, (2, 0)).unwrap();
        assert_eq!(text(&s, 0), (i128::MAX as u128 + 3).to_string());
        assert_eq!(cnt, vec![1]);
        // Decimals that are not fixed point also switch to one accumulator per group.
        let mut s = DecSums::Fixed { m: Vec::new(), scale: None };
        s.resize(1);
        let big: Decimal = "100000000000000000000000000000000000000000000000000".parse().unwrap();
        s.add(0, &big).unwrap();
        s.add_fixed(0, (1, 0)).unwrap();
        assert_eq!(text(&s, 0), "100000000000000000000000000000000000000000000000001");
    }

    /// Builds the expression `tipb::Expr` of a scalar function `sig` over `children`.
    fn func(sig: i32, children: Vec<tipb::Expr>) -> tipb::Expr {
        tipb::Expr {
            tp: Some(tipb::ExprType::ScalarFunc as i32),
            sig: Some(sig),
            children,
            ..Default::default()
        }
    }

    #[test]
    fn only_arithmetic_is_shared() {
        let col = tipb::Expr { tp: Some(tipb::ExprType::ColumnRef as i32), ..Default::default() };
        let prod = func(209, vec![col.clone(), col.clone()]); // MultiplyDecimal
        assert!(shareable(&prod));
        assert!(shareable(&func(205, vec![col.clone(), prod.clone()]))); // MinusDecimal
        // Any other function (here a comparison), even inside arithmetic, is not shared.
        let lt = func(100, vec![col.clone(), col.clone()]);
        assert!(!shareable(&lt));
        assert!(!shareable(&func(210, vec![lt, col])));
    }
}
