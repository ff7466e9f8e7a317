//! VAR_POP (also VARIANCE) and VAR_SAMP (`tidb_query_aggr` `impl_variance.rs`): the argument
//! typed as for SUM (DECIMAL or DOUBLE, see [`sum_typing`]); three output columns, count
//! (unsigned BIGINT), sum and variance, the last two of the call's type and NULL for a group
//! without values.
//!
//! The variance is accumulated as TiKV does, value by value: with `n` values so far and
//! their sum `s`, a new value `x` adds `t*t / (n*(n-1))` where `t = n*x - s`; the result is
//! that total divided by `n` (population) or `n - 1` (sample). Decimal divisions keep four
//! more fraction digits, as TiKV's `Decimal` division. A sample variance of one value is
//! NULL (MySQL; TiKV divides by zero there).

use std::ops::Range;

use rcop_datum::Decimal;
use rcop_datum::decimal::DEFAULT_DIV_FRAC_INCR;

use crate::column::{DecT, Elem, RealT, VecCol};
use crate::error::Result;
use crate::exec::agg::registry::wrong_type;
use crate::exec::agg::sum::sum_typing;
use crate::exec::agg::{AggState, Plan, count_col, count_ft, drain_front};
use crate::expr::Node;
use crate::expr::eval::{Value, dec_res};
use crate::types::{EvalType, FieldType};

fn plan(own: &FieldType, arg: &Node, samp: bool) -> Result<Plan> {
    let (et, cast) = sum_typing(arg);
    if own.eval_type().ok() != Some(et) {
        return Err(wrong_type(if samp { "VAR_SAMP" } else { "VAR_POP" }, arg, own));
    }
    let state: Box<dyn AggState> = match et {
        EvalType::Decimal => {
            Box::new(VarDec { samp, cnt: Vec::new(), sum: Vec::new(), var: Vec::new() })
        }
        _ => Box::new(VarReal { samp, cnt: Vec::new(), sum: Vec::new(), var: Vec::new() }),
    };
    Ok(Plan { cast, out: vec![count_ft(), *own, *own], state })
}

/// Plans VAR_POP and VARIANCE.
pub(crate) fn plan_pop(own: &FieldType, arg: &Node) -> Result<Plan> {
    plan(own, arg, false)
}

/// Plans VAR_SAMP.
pub(crate) fn plan_samp(own: &FieldType, arg: &Node) -> Result<Plan> {
    plan(own, arg, true)
}

/// The DOUBLE variance state.
#[derive(Debug)]
pub(crate) struct VarReal {
    samp: bool,
    cnt: Vec<i64>,
    sum: Vec<f64>,
    var: Vec<f64>,
}

impl AggState for VarReal {
    fn grow(&mut self, groups: usize) {
        self.cnt.resize(groups, 0);
        self.sum.resize(groups, 0.0);
        self.var.resize(groups, 0.0);
    }

    fn update(&mut self, g: &[u32], v: &Value<'_>, _arg_ft: &FieldType) -> Result<()> {
        let a = v.arg::<RealT>()?;
        for (i, &gi) in g.iter().enumerate() {
            let gi = gi as usize;
            let Some(x) = a.get(i) else { continue };
            let (Some(n), Some(s), Some(var)) =
                (self.cnt.get_mut(gi), self.sum.get_mut(gi), self.var.get_mut(gi))
            else {
                continue;
            };
            *n += 1;
            *s += x;
            if *n > 1 {
                let c = *n as f64;
                let t = x * c - *s;
                *var += t * t / (c * (c - 1.0));
            }
        }
        Ok(())
    }

    fn finish(&self, groups: Range<usize>, out: &mut Vec<VecCol>) -> Result<()> {
        out.push(count_col(&self.cnt, groups.clone()));
        let (mut sums, mut vars) =
            (VecCol::new(EvalType::Real, groups.len()), VecCol::new(EvalType::Real, groups.len()));
        for gi in groups {
            let n = self.cnt.get(gi).copied().unwrap_or(0);
            let div = if self.samp { n - 1 } else { n };
            RealT::push(&mut sums, (n > 0).then(|| self.sum.get(gi).copied().unwrap_or(0.0)));
            RealT::push(
                &mut vars,
                (n > 0 && div > 0).then(|| self.var.get(gi).copied().unwrap_or(0.0) / div as f64),
            );
        }
        out.push(sums);
        out.push(vars);
        Ok(())
    }

    fn forget_front(&mut self, k: usize) {
        drain_front(&mut self.cnt, k);
        drain_front(&mut self.sum, k);
        drain_front(&mut self.var, k);
    }
}

/// The DECIMAL variance state.
#[derive(Debug)]
pub(crate) struct VarDec {
    samp: bool,
    cnt: Vec<i64>,
    sum: Vec<Decimal>,
    var: Vec<Decimal>,
}

/// `a / b` as TiKV's `Decimal` division (`None` for a zero divisor).
fn div(a: &Decimal, b: &Decimal) -> Result<Option<Decimal>> {
    a.div(b, DEFAULT_DIV_FRAC_INCR).map(dec_res).transpose()
}

impl AggState for VarDec {
    fn grow(&mut self, groups: usize) {
        self.cnt.resize(groups, 0);
        self.sum.resize(groups, Decimal::zero());
        self.var.resize(groups, Decimal::zero());
    }

    fn update(&mut self, g: &[u32], v: &Value<'_>, _arg_ft: &FieldType) -> Result<()> {
        let m = v.materialize();
        let a = m.arg::<DecT>()?;
        for (i, &gi) in g.iter().enumerate() {
            let gi = gi as usize;
            let Some(x) = a.get(i) else { continue };
            let (Some(n), Some(s), Some(var)) =
                (self.cnt.get_mut(gi), self.sum.get_mut(gi), self.var.get_mut(gi))
            else {
                continue;
            };
            *n += 1;
            *s = dec_res(s.add(x))?;
            if *n > 1 {
                let c = Decimal::from_i64(*n);
                let t = dec_res(dec_res(x.mul(&c))?.sub(s))?;
                let d = Decimal::from_i64(*n * (*n - 1));
                if let Some(q) = div(&dec_res(t.mul(&t))?, &d)? {
                    *var = dec_res(var.add(&q))?;
                }
            }
        }
        Ok(())
    }

    fn finish(&self, groups: Range<usize>, out: &mut Vec<VecCol>) -> Result<()> {
        out.push(count_col(&self.cnt, groups.clone()));
        let mut sums = VecCol::new(EvalType::Decimal, groups.len());
        let mut vars = VecCol::new(EvalType::Decimal, groups.len());
        for gi in groups {
            let n = self.cnt.get(gi).copied().unwrap_or(0);
            let d = if self.samp { n - 1 } else { n };
            DecT::push(&mut sums, self.sum.get(gi).filter(|_| n > 0));
            let var = match self.var.get(gi) {
                Some(var) if n > 0 && d > 0 => div(var, &Decimal::from_i64(d))?,
                _ => None,
            };
            DecT::push(&mut vars, var.as_ref());
        }
        out.push(sums);
        out.push(vars);
        Ok(())
    }

    fn forget_front(&mut self, k: usize) {
        drain_front(&mut self.cnt, k);
        drain_front(&mut self.sum, k);
        drain_front(&mut self.var, k);
    }
}
