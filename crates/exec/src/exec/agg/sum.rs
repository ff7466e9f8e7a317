//! SUM and AVG (`tidb_query_aggr` `impl_sum.rs`, `impl_avg.rs`): the argument typed as TiKV's
//! `rewrite_exp_for_sum_avg` (integers as DECIMAL, BIT and every non-numeric type as DOUBLE,
//! reals and decimals as they are); the result type must be that type. SUM gives the sum
//! (NULL for a group without values); AVG gives the count (unsigned BIGINT) and the sum.

use std::ops::Range;

use rcop_datum::Decimal;
use rcop_datum::chunk::mysql_type as mt;

use crate::column::{Arg, ColData, DecT, Elem, IntT, RealT, VecCol};
use crate::error::{Error, Result};
use crate::exec::agg::registry::wrong_type;
use crate::exec::agg::{AggState, ArgCast, Plan, count_col, count_ft, drain_front};
use crate::expr::Node;
use crate::expr::eval::{Value, dec_res};
use crate::fixed;
use crate::types::{EvalType, FieldType};

/// The SUM/AVG/variance argument typing of TiKV's `rewrite_exp_for_sum_avg`: the eval type
/// the argument is summed as, and the cast to it when one is needed. Integers are summed
/// as decimals without a cast (the decimal states add them exactly).
pub(crate) fn sum_typing(arg: &Node) -> (EvalType, Option<ArgCast>) {
    let double = ArgCast {
        to: EvalType::Real,
        to_ft: FieldType { flen: 23, decimal: -1, ..FieldType::new(mt::DOUBLE) },
    };
    match arg.et {
        EvalType::Int if arg.ft.tp == mt::BIT => (EvalType::Real, Some(double)),
        EvalType::Int => (
            EvalType::Decimal,
            Some(ArgCast {
                to: EvalType::Decimal,
                to_ft: FieldType { flen: 65, decimal: 0, ..FieldType::new(mt::NEW_DECIMAL) },
            }),
        ),
        EvalType::Decimal | EvalType::Real => (arg.et, None),
        _ => (EvalType::Real, Some(double)),
    }
}

fn plan_sum_avg(own: &FieldType, arg: &Node, avg: bool) -> Result<Plan> {
    let (et, cast) = sum_typing(arg);
    if own.eval_type().ok() != Some(et) {
        return Err(wrong_type(if avg { "AVG" } else { "SUM" }, arg, own));
    }
    // Integers go to the decimal state as they are (it adds them exactly).
    let cast = cast.filter(|_| arg.et != EvalType::Int || et == EvalType::Real);
    let state: Box<dyn AggState> = match et {
        EvalType::Decimal => Box::new(SumDec {
            sum: DecSums::Fixed { m: Vec::new(), scale: None },
            cnt: Vec::new(),
            avg,
        }),
        _ => Box::new(SumReal { sum: Vec::new(), cnt: Vec::new(), avg }),
    };
    let out = if avg { vec![count_ft(), *own] } else { vec![*own] };
    Ok(Plan { cast, out, state })
}

/// Plans SUM.
pub(crate) fn plan_sum(own: &FieldType, arg: &Node) -> Result<Plan> {
    plan_sum_avg(own, arg, false)
}

/// Plans AVG.
pub(crate) fn plan_avg(own: &FieldType, arg: &Node) -> Result<Plan> {
    plan_sum_avg(own, arg, true)
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

impl DecSums {
    /// Drops the first `k` groups.
    fn forget_front(&mut self, k: usize) {
        match self {
            DecSums::Fixed { m, .. } => drain_front(m, k),
            DecSums::Mixed(v) => drain_front(v, k),
        }
    }
}

/// The decimal SUM/AVG state: per group the sum and the count of values.
#[derive(Debug)]
pub(crate) struct SumDec {
    sum: DecSums,
    cnt: Vec<i64>,
    avg: bool,
}

impl AggState for SumDec {
    fn grow(&mut self, groups: usize) {
        self.sum.resize(groups);
        self.cnt.resize(groups, 0);
    }

    fn update(&mut self, g: &[u32], v: &Value<'_>, arg_ft: &FieldType) -> Result<()> {
        let (sum, cnt) = (&mut self.sum, &mut self.cnt);
        if let Some(crate::column::VecCol { data: ColData::Fixed(f), valid }) = v.col() {
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
            return Ok(());
        }
        match v.arg::<DecT>() {
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
                // An integer argument, summed exactly (TiKV casts it to DECIMAL).
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
        }
        Ok(())
    }

    fn finish(&self, groups: Range<usize>, out: &mut Vec<VecCol>) -> Result<()> {
        self.finish_as(groups, self.avg, out)
    }

    fn finish_as(&self, groups: Range<usize>, avg: bool, out: &mut Vec<VecCol>) -> Result<()> {
        if avg {
            out.push(count_col(&self.cnt, groups.clone()));
        }
        let mut col = VecCol::new(EvalType::Decimal, groups.len());
        for gi in groups {
            let c = self.cnt.get(gi).copied().unwrap_or(0);
            let v = if c > 0 { Some(self.sum.value(gi)?) } else { None };
            DecT::push(&mut col, v.as_ref());
        }
        out.push(col);
        Ok(())
    }

    fn forget_front(&mut self, k: usize) {
        self.sum.forget_front(k);
        drain_front(&mut self.cnt, k);
    }
}

/// The DOUBLE SUM/AVG state.
#[derive(Debug)]
pub(crate) struct SumReal {
    sum: Vec<f64>,
    cnt: Vec<i64>,
    avg: bool,
}

impl AggState for SumReal {
    fn grow(&mut self, groups: usize) {
        self.sum.resize(groups, 0.0);
        self.cnt.resize(groups, 0);
    }

    fn update(&mut self, g: &[u32], v: &Value<'_>, _arg_ft: &FieldType) -> Result<()> {
        let a = v.arg::<RealT>()?;
        for (i, &gi) in g.iter().enumerate() {
            let Some(x) = a.get(i) else { continue };
            if let (Some(acc), Some(c)) =
                (self.sum.get_mut(gi as usize), self.cnt.get_mut(gi as usize))
            {
                *acc += x;
                *c += 1;
            }
        }
        Ok(())
    }

    fn finish(&self, groups: Range<usize>, out: &mut Vec<VecCol>) -> Result<()> {
        self.finish_as(groups, self.avg, out)
    }

    fn finish_as(&self, groups: Range<usize>, avg: bool, out: &mut Vec<VecCol>) -> Result<()> {
        if avg {
            out.push(count_col(&self.cnt, groups.clone()));
        }
        let mut col = VecCol::new(EvalType::Real, groups.len());
        for gi in groups {
            let c = self.cnt.get(gi).copied().unwrap_or(0);
            RealT::push(&mut col, (c > 0).then(|| self.sum.get(gi).copied().unwrap_or(0.0)));
        }
        out.push(col);
        Ok(())
    }

    fn forget_front(&mut self, k: usize) {
        drain_front(&mut self.sum, k);
        drain_front(&mut self.cnt, k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
