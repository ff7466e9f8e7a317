//! `GREATEST` and `LEAST` over ints, reals, decimals, datetimes, dates and durations (the
//! string forms live with the string functions), and `INTERVAL` over ints and reals.
//!
//! Any NULL argument makes `GREATEST`/`LEAST` NULL (as MySQL and TiKV). Ints compare as
//! unsigned when the call's type is unsigned (TiDB makes it so only when every argument
//! is). `INTERVAL(N, N1, N2, …)` binary-searches the (assumed sorted) list as MySQL and
//! TiDB do: the index of the first `Ni` greater than `N`, a NULL `Ni` counting as equal to
//! `N`; a NULL `N` is -1.

use std::cmp::Ordering;

use crate::column::{Arg, DecT, DurT, Elem, IntT, RealT, TimeT, VecCol};
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::expr::registry::{Args, Call, Kernel, Registry};
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{DateTime as T, Decimal as D, Duration as U, Int as I, Real as R};
    let defs: [(i32, EvalType, Kernel); 12] = [
        (4215, I, greatest_int),
        (4216, R, greatest_real),
        (4217, D, greatest_dec),
        (4219, T, greatest_time),
        (4220, I, least_int),
        (4221, R, least_real),
        (4222, D, least_dec),
        (4224, T, least_time),
        (7067, U, greatest_dur),
        (7069, U, least_dur),
        (7075, T, greatest_time), // GreatestDate
        (7076, T, least_time),    // LeastDate
    ];
    for (s, t, k) in defs {
        r.add(s, Args::Variadic(t), t, k);
    }
    r.add(4225, Args::Variadic(I), I, interval_int);
    r.add(4226, Args::Variadic(R), I, interval_real);
}

/// Folds every argument of each row with `pick` (true: keep the new value); NULL if any is.
fn fold<E: Elem>(
    c: &Call<'_, '_>,
    pick: impl for<'x> Fn(E::R<'x>, E::R<'x>) -> bool,
) -> Result<VecCol> {
    let args: Vec<Arg<'_, E>> =
        (0..c.args.len()).map(|i| c.typed::<E>(i)).collect::<Result<_>>()?;
    let mut out = VecCol::new(E::ET, c.n);
    for i in 0..c.n {
        let mut best: Option<E::R<'_>> = None;
        let mut null = false;
        for a in &args {
            match a.get(i) {
                None => {
                    null = true;
                    break;
                }
                Some(v) => {
                    best = Some(match best {
                        Some(b) if !pick(b, v) => b,
                        _ => v,
                    })
                }
            }
        }
        E::push(&mut out, if null { None } else { best });
    }
    Ok(out)
}

fn int_cmp(unsigned: bool) -> impl Fn(i64, i64) -> Ordering {
    move |a, b| if unsigned { (a as u64).cmp(&(b as u64)) } else { a.cmp(&b) }
}

fn greatest_int(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let cmp = int_cmp(c.ft.is_unsigned());
    fold::<IntT>(c, |b, v| cmp(v, b) == Ordering::Greater)
}

fn least_int(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let cmp = int_cmp(c.ft.is_unsigned());
    fold::<IntT>(c, |b, v| cmp(v, b) == Ordering::Less)
}

fn greatest_real(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    fold::<RealT>(c, |b, v| v > b)
}

fn least_real(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    fold::<RealT>(c, |b, v| v < b)
}

fn greatest_dec(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    fold::<DecT>(c, |b, v| v > b)
}

fn least_dec(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    fold::<DecT>(c, |b, v| v < b)
}

fn greatest_time(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    fold::<TimeT>(c, |b, v| v > b)
}

fn least_time(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    fold::<TimeT>(c, |b, v| v < b)
}

fn greatest_dur(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    fold::<DurT>(c, |b, v| v > b)
}

fn least_dur(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    fold::<DurT>(c, |b, v| v < b)
}

/// The binary search of `INTERVAL`: `lt(target, i)` is "target < list[i]" (NULLs are
/// equal, so false).
fn interval_search(len: usize, lt: impl Fn(usize) -> bool) -> i64 {
    let (mut lo, mut hi) = (0usize, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if lt(mid) { hi = mid } else { lo = mid + 1 }
    }
    lo as i64
}

fn interval_int(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let args: Vec<Arg<'_, IntT>> = (0..c.args.len()).map(|i| c.typed(i)).collect::<Result<_>>()?;
    let uns: Vec<bool> = (0..c.args.len()).map(|i| c.arg_ft(i).is_unsigned()).collect();
    let (Some(target), Some(&tu)) = (args.first(), uns.first()) else {
        return Ok(VecCol::new(EvalType::Int, c.n));
    };
    let mut out = VecCol::new(EvalType::Int, c.n);
    for i in 0..c.n {
        let r = match target.get(i) {
            None => -1,
            Some(t) => interval_search(args.len() - 1, |k| {
                let (Some(a), Some(&u)) = (args.get(k + 1), uns.get(k + 1)) else {
                    return false;
                };
                let v = a.get(i).unwrap_or(t);
                match (tu, u) {
                    (false, false) => t < v,
                    (true, true) => (t as u64) < (v as u64),
                    (false, true) => t < 0 || (t as u64) < (v as u64),
                    (true, false) => v > 0 && (t as u64) < (v as u64),
                }
            }),
        };
        IntT::push(&mut out, Some(r));
    }
    Ok(out)
}

fn interval_real(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let args: Vec<Arg<'_, RealT>> = (0..c.args.len()).map(|i| c.typed(i)).collect::<Result<_>>()?;
    let Some(target) = args.first() else {
        return Ok(VecCol::new(EvalType::Int, c.n));
    };
    let mut out = VecCol::new(EvalType::Int, c.n);
    for i in 0..c.n {
        let r = match target.get(i) {
            None => -1,
            Some(t) => interval_search(args.len() - 1, |k| {
                args.get(k + 1).is_some_and(|a| a.get(i).is_some_and(|v| t < v))
            }),
        };
        IntT::push(&mut out, Some(r));
    }
    Ok(out)
}
