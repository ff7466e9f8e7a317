//! Week numbers: `WEEK(d[, mode])`, `WEEKOFYEAR(d)`, `YEARWEEK(d[, mode])`, by MySQL's
//! `calc_week` ([`rcop_datum::time::calendar`]). The default mode is 0
//! (`default_week_format`).

use rcop_datum::Time;

use super::{null_invalid, zero_in};
use crate::column::{IntT, TimeT, VecCol};
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::expr::kernel::{map1, map2};
use crate::expr::registry::{Args, Call, Registry};
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{DateTime as T, Int};
    r.add(6025, Args::fixed(&[T, Int]), Int, week_with_mode);
    r.add(6026, Args::same(T, 1), Int, week_without_mode);
    r.add(6028, Args::same(T, 1), Int, week_of_year);
    r.add(6030, Args::fixed(&[T, Int]), Int, year_week_with_mode);
    r.add(6031, Args::same(T, 1), Int, year_week_without_mode);
}

/// The mode argument as `calc_week` reads it: the low three bits.
fn mode_of(m: i64) -> u32 {
    (m & 7) as u32
}

fn year_week(t: &Time, mode: u32) -> i64 {
    let (y, w) = t.year_week(mode);
    i64::from(y) * 100 + i64::from(w)
}

fn with_mode(c: &Call<'_, '_>, ctx: &mut EvalContext, f: fn(&Time, u32) -> i64) -> Result<VecCol> {
    map2::<TimeT, IntT, IntT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |t, m, ctx| {
        if zero_in(&t) { null_invalid(ctx, t) } else { Ok(Some(f(&t, mode_of(m)))) }
    })
}

fn fixed_mode(
    c: &Call<'_, '_>,
    ctx: &mut EvalContext,
    mode: u32,
    f: fn(&Time, u32) -> i64,
) -> Result<VecCol> {
    map1::<TimeT, IntT>(c.n, c.typed(0)?, ctx, |t, ctx| {
        if zero_in(&t) { null_invalid(ctx, t) } else { Ok(Some(f(&t, mode))) }
    })
}

fn week(t: &Time, mode: u32) -> i64 {
    i64::from(t.week(mode))
}

fn week_with_mode(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    with_mode(c, ctx, week)
}

fn week_without_mode(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    fixed_mode(c, ctx, 0, week)
}

fn week_of_year(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    fixed_mode(c, ctx, 3, week)
}

fn year_week_with_mode(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    with_mode(c, ctx, year_week)
}

fn year_week_without_mode(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    fixed_mode(c, ctx, 0, year_week)
}
