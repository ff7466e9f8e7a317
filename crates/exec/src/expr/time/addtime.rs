//! `ADDTIME`/`SUBTIME` and `TIMEDIFF` in the typed variants TiDB pushes: a datetime, a
//! duration or a string (read as a `TIME` or a datetime) with a duration or a string.
//!
//! Results outside their range (years past 9999, `TIME` beyond ±838:59:59) are NULL with a
//! warning; `TIMEDIFF` clips to ±838:59:59 instead, as MySQL.

use rcop_datum::duration::MAX_NANOS;
use rcop_datum::{Duration, Time, TimeType};

use super::{
    duration_string, null_invalid, null_overflow, parse_datetime, ret_fsp, text, time_string,
    zero_in,
};
use crate::column::{BytesT, DurT, TimeT, VecCol};
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::expr::kernel::map2;
use crate::expr::registry::{Args, Call, Kernel, Registry};
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes as S, DateTime as T, Duration as D};
    r.add(6043, Args::fixed(&[T, D]), T, add_datetime_and_duration);
    r.add(6054, Args::fixed(&[T, D]), T, sub_datetime_and_duration);
    r.add(6044, Args::fixed(&[T, S]), T, add_datetime_and_string);
    r.add(6055, Args::fixed(&[T, S]), T, sub_datetime_and_string);
    r.add(6053, Args::fixed(&[T, S]), T, add_date_and_string);
    r.add(6049, Args::same(D, 2), D, add_duration_and_duration);
    r.add(6060, Args::same(D, 2), D, sub_duration_and_duration);
    r.add(6050, Args::fixed(&[D, S]), D, add_duration_and_string);
    r.add(6061, Args::fixed(&[D, S]), D, sub_duration_and_string);
    r.add(6046, Args::fixed(&[S, D]), S, add_string_and_duration);
    r.add(6057, Args::fixed(&[S, D]), S, sub_string_and_duration);
    // The `*Null` variants: TiDB's ADDTIME/SUBTIME of argument types with no answer.
    let nulls: [(i32, EvalType, Kernel); 6] = [
        (6045, T, null_time),
        (6056, T, null_time),
        (6051, D, null_duration),
        (6062, D, null_duration),
        (6048, S, null_bytes),
        (6059, S, null_bytes),
    ];
    for (s, ret, k) in nulls {
        r.add(s, Args::same(T, 2), ret, k);
    }
    r.add(6004, Args::fixed(&[]), D, null_duration);
    r.add(6007, Args::same(D, 2), D, duration_duration_time_diff);
    r.add(6009, Args::fixed(&[S, D]), D, string_duration_time_diff);
    r.add(6006, Args::fixed(&[D, S]), D, duration_string_time_diff);
    r.add(6010, Args::same(S, 2), D, string_string_time_diff);
    r.add(6011, Args::same(T, 2), D, time_time_time_diff);
    r.add(6008, Args::fixed(&[S, T]), D, string_time_time_diff);
    r.add(6005, Args::fixed(&[T, S]), D, time_string_time_diff);
}

fn nulls(c: &Call<'_, '_>, et: EvalType) -> Result<VecCol> {
    let mut out = VecCol::new(et, c.n);
    out.push_nulls(c.n);
    Ok(out)
}

fn null_time(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    nulls(c, EvalType::DateTime)
}

fn null_duration(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    nulls(c, EvalType::Duration)
}

fn null_bytes(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    nulls(c, EvalType::Bytes)
}

/// `d` negated (a `TIME` range is symmetric, so this cannot leave it).
fn neg(d: &Duration) -> Duration {
    Duration::from_nanos(-d.nanos(), d.fsp()).unwrap_or(*d)
}

/// A string argument read as a `TIME`: `None` when it is not one (a datetime included).
fn str_duration(s: &[u8]) -> Option<Duration> {
    let s = text(s)?;
    if looks_like_datetime(s) {
        return None;
    }
    Duration::parse(s.trim(), 6).ok()
}

/// Whether a string is a datetime rather than a `TIME`: its first separator is a date one
/// (not `:`, not the space of `D HH:MM:SS`, not the `.` of a fraction) or it is a number of
/// more than seven digits.
fn looks_like_datetime(s: &str) -> bool {
    let s = s.trim();
    let s = s.strip_prefix('-').unwrap_or(s);
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    match s.as_bytes().get(digits) {
        None => digits > 7,
        Some(b':' | b'.') => false,
        Some(b' ') => digits > 2,
        Some(_) => true,
    }
}

/// `t + d` (`sign` -1 subtracts) as a `tp` with `fsp` digits, or NULL with a warning.
fn add_time(
    t: Time,
    d: &Duration,
    tp: TimeType,
    fsp: u8,
    ctx: &mut EvalContext,
) -> Result<Option<Time>> {
    if zero_in(&t) {
        return null_invalid(ctx, t);
    }
    let base = match t.with_type(TimeType::DateTime, 6) {
        Ok(b) => b,
        Err(_) => return null_invalid(ctx, t),
    };
    match base.add_duration(d, TimeType::DateTime, 6) {
        Ok(r) => match r.with_type(tp, fsp) {
            Ok(r) => Ok(Some(r)),
            Err(_) => null_overflow(ctx),
        },
        Err(_) => null_overflow(ctx),
    }
}

fn datetime_and_duration(c: &Call<'_, '_>, ctx: &mut EvalContext, sub: bool) -> Result<VecCol> {
    let fsp_default = 6;
    let fsp = ret_fsp(c, fsp_default);
    map2::<TimeT, DurT, TimeT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |t, d, ctx| {
        let d = if sub { neg(&d) } else { d };
        add_time(t, &d, TimeType::DateTime, fsp, ctx)
    })
}

fn add_datetime_and_duration(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    datetime_and_duration(c, ctx, false)
}

fn sub_datetime_and_duration(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    datetime_and_duration(c, ctx, true)
}

fn datetime_and_string(
    c: &Call<'_, '_>,
    ctx: &mut EvalContext,
    sub: bool,
    tp: TimeType,
) -> Result<VecCol> {
    let fsp = ret_fsp(c, 6);
    map2::<TimeT, BytesT, TimeT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |t, s, ctx| {
        let Some(d) = str_duration(s) else { return null_invalid(ctx, String::from_utf8_lossy(s)) };
        let d = if sub { neg(&d) } else { d };
        add_time(t, &d, tp, fsp, ctx)
    })
}

fn add_datetime_and_string(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    datetime_and_string(c, ctx, false, TimeType::DateTime)
}

fn sub_datetime_and_string(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    datetime_and_string(c, ctx, true, TimeType::DateTime)
}

fn add_date_and_string(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    datetime_and_string(c, ctx, false, TimeType::Date)
}

/// `a + b` as a `TIME` with `fsp` digits, or NULL with a warning beyond ±838:59:59.
fn add_durations(
    a: &Duration,
    b: &Duration,
    fsp: u8,
    ctx: &mut EvalContext,
) -> Result<Option<Duration>> {
    match a.nanos().checked_add(b.nanos()).map(|n| Duration::from_nanos(n, fsp)) {
        Some(Ok(d)) => Ok(Some(d)),
        _ => null_overflow(ctx),
    }
}

fn durations(c: &Call<'_, '_>, ctx: &mut EvalContext, sub: bool) -> Result<VecCol> {
    let fsp = ret_fsp(c, 6);
    map2::<DurT, DurT, DurT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |a, b, ctx| {
        let b = if sub { neg(&b) } else { b };
        add_durations(&a, &b, fsp, ctx)
    })
}

fn add_duration_and_duration(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    durations(c, ctx, false)
}

fn sub_duration_and_duration(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    durations(c, ctx, true)
}

fn duration_and_string(c: &Call<'_, '_>, ctx: &mut EvalContext, sub: bool) -> Result<VecCol> {
    let fsp = ret_fsp(c, 6);
    map2::<DurT, BytesT, DurT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |a, s, ctx| {
        let Some(b) = str_duration(s) else { return null_invalid(ctx, String::from_utf8_lossy(s)) };
        let b = if sub { neg(&b) } else { b };
        add_durations(&a, &b, fsp, ctx)
    })
}

fn add_duration_and_string(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    duration_and_string(c, ctx, false)
}

fn sub_duration_and_string(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    duration_and_string(c, ctx, true)
}

fn string_and_duration(c: &Call<'_, '_>, ctx: &mut EvalContext, sub: bool) -> Result<VecCol> {
    map2::<BytesT, DurT, BytesT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |s, d, ctx| {
        let d = if sub { neg(&d) } else { d };
        if let Some(a) = str_duration(s) {
            return Ok(add_durations(&a, &d, 6, ctx)?.map(|r| duration_string(&r)));
        }
        let parsed = text(s).filter(|s| looks_like_datetime(s)).and_then(parse_datetime);
        let Some(t) = parsed else { return null_invalid(ctx, String::from_utf8_lossy(s)) };
        Ok(add_time(t, &d, TimeType::DateTime, 6, ctx)?.map(|r| time_string(&r)))
    })
}

fn add_string_and_duration(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    string_and_duration(c, ctx, false)
}

fn sub_string_and_duration(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    string_and_duration(c, ctx, true)
}

/// `a - b` clipped to ±838:59:59 (with a truncation warning), as MySQL's `TIMEDIFF`.
fn time_diff(
    a: &Duration,
    b: &Duration,
    fsp: u8,
    ctx: &mut EvalContext,
) -> Result<Option<Duration>> {
    let n = a.nanos() - b.nanos();
    let clipped = n.clamp(-MAX_NANOS, MAX_NANOS);
    if clipped != n {
        ctx.truncated(crate::error::Error::Truncated { what: "time", value: n.to_string() })?;
    }
    Ok(Some(Duration::from_nanos(clipped, fsp)?))
}

fn duration_duration_time_diff(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let fsp = ret_fsp(c, 6);
    map2::<DurT, DurT, DurT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |a, b, ctx| {
        time_diff(&a, &b, fsp, ctx)
    })
}

fn string_duration_time_diff(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let fsp = ret_fsp(c, 6);
    map2::<BytesT, DurT, DurT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |s, b, ctx| {
        match str_duration(s) {
            Some(a) => time_diff(&a, &b, fsp, ctx),
            None => Ok(None),
        }
    })
}

fn duration_string_time_diff(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let fsp = ret_fsp(c, 6);
    map2::<DurT, BytesT, DurT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |a, s, ctx| {
        match str_duration(s) {
            Some(b) => time_diff(&a, &b, fsp, ctx),
            None => Ok(None),
        }
    })
}

fn string_string_time_diff(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let fsp = ret_fsp(c, 6);
    map2::<BytesT, BytesT, DurT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |s, t, ctx| {
        match (str_duration(s), str_duration(t)) {
            (Some(a), Some(b)) => time_diff(&a, &b, fsp, ctx),
            _ => Ok(None),
        }
    })
}

/// `a - b` of two datetimes as a clipped `TIME` (MySQL's `TIMEDIFF`).
fn datetime_diff(a: &Time, b: &Time, fsp: u8, ctx: &mut EvalContext) -> Result<Option<Duration>> {
    let micros = |t: &Time| {
        let days = i128::from(rcop_datum::time::calendar::day_number(t.year(), t.month(), t.day()));
        let secs = days * 86_400
            + i128::from(t.hour()) * 3600
            + i128::from(t.minute()) * 60
            + i128::from(t.second());
        secs * 1_000_000 + i128::from(t.micro())
    };
    let n = (micros(a) - micros(b)).saturating_mul(1000);
    let n = i64::try_from(n).unwrap_or(if n < 0 { i64::MIN } else { i64::MAX });
    let clipped = n.clamp(-MAX_NANOS, MAX_NANOS);
    if clipped != n {
        ctx.truncated(crate::error::Error::Truncated { what: "time", value: n.to_string() })?;
    }
    Ok(Some(Duration::from_nanos(clipped, fsp)?))
}

/// A string argument of `TIMEDIFF` beside a datetime: `None` (NULL) when it is a `TIME`,
/// as TiDB's mixed-type rule; a warning and NULL when it is not a datetime either.
fn str_datetime(s: &[u8], ctx: &mut EvalContext) -> Result<Option<Time>> {
    match text(s) {
        Some(t) if !looks_like_datetime(t) && str_duration(s).is_some() => Ok(None),
        Some(t) => match parse_datetime(t) {
            Some(t) => Ok(Some(t)),
            None => null_invalid(ctx, t),
        },
        None => null_invalid(ctx, String::from_utf8_lossy(s)),
    }
}

fn time_time_time_diff(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let fsp = ret_fsp(c, 6);
    map2::<TimeT, TimeT, DurT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |a, b, ctx| {
        datetime_diff(&a, &b, fsp, ctx)
    })
}

fn string_time_time_diff(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let fsp = ret_fsp(c, 6);
    map2::<BytesT, TimeT, DurT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |s, b, ctx| match str_datetime(
        s, ctx,
    )? {
        Some(a) => datetime_diff(&a, &b, fsp, ctx),
        None => Ok(None),
    })
}

fn time_string_time_diff(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let fsp = ret_fsp(c, 6);
    map2::<TimeT, BytesT, DurT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |a, s, ctx| match str_datetime(
        s, ctx,
    )? {
        Some(b) => datetime_diff(&a, &b, fsp, ctx),
        None => Ok(None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_or_datetime_strings() {
        for s in ["10:00:00", "-1:00", "1 10:00:00", "12.5", "101112", "838:59:59"] {
            assert!(!looks_like_datetime(s), "{s}");
        }
        for s in ["2020-01-01", "2020-01-01 10:00:00", "20200101101112", "2020/1/1"] {
            assert!(looks_like_datetime(s), "{s}");
        }
    }
}
