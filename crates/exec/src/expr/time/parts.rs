//! Fields of dates and times, day numbers, and the date and time constructors: `YEAR`,
//! `MONTH`, `DAYOFMONTH`, `QUARTER`, `MONTHNAME`, `DAYNAME`, `DAYOFWEEK`, `DAYOFYEAR`,
//! `WEEKDAY`, `TO_DAYS`, `TO_SECONDS`, `DATE`, `LAST_DAY`, `DATEDIFF`, `HOUR`, `MINUTE`,
//! `SECOND`, `MICROSECOND`, `TIME_TO_SEC`, `FROM_DAYS`, `MAKEDATE`, `MAKETIME`, `PERIOD_ADD`,
//! `PERIOD_DIFF`, `SYSDATE`.

use rcop_datum::time::calendar::{self, MAX_DAY_NUMBER};
use rcop_datum::{Duration, Time, TimeType};

use super::{make_time, null_invalid, ret_fsp, zero_in};
use crate::column::{BytesT, DurT, IntT, RealT, TimeT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::kernel::{map1, map1_infallible, map2};
use crate::expr::registry::{Args, Call, Kernel, Registry};
use crate::types::EvalType;

/// English month names (MySQL's `en_US` locale).
pub const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
/// English weekday names, Monday first.
pub const DAY_NAMES: [&str; 7] =
    ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes, DateTime as T, Duration as D, Int, Real};
    let t_int: [(i32, Kernel); 10] = [
        (6029, year),
        (6017, month),
        (6022, day_of_month),
        (6073, quarter),
        (6023, day_of_week),
        (6024, day_of_year),
        (6027, week_day),
        (6077, to_days),
        (6078, to_seconds),
        (6003, date_diff),
    ];
    for (s, k) in t_int {
        let args = if s == 6003 { Args::same(T, 2) } else { Args::same(T, 1) };
        r.add(s, args, Int, k);
    }
    r.add(6018, Args::same(T, 1), Bytes, month_name);
    r.add(6021, Args::same(T, 1), Bytes, day_name);
    r.add(6012, Args::same(T, 1), T, date);
    r.add(6084, Args::same(T, 1), T, last_day);
    let d_int: [(i32, Kernel); 5] =
        [(6013, hour), (6014, minute), (6015, second), (6016, micro_second), (6075, time_to_sec)];
    for (s, k) in d_int {
        r.add(s, Args::same(D, 1), Int, k);
    }
    r.add(6106, Args::same(Int, 1), T, from_days);
    r.add(6069, Args::same(Int, 2), T, make_date);
    r.add(6070, Args::fixed(&[Int, Int, Real]), D, make_time_kernel);
    r.add(6071, Args::same(Int, 2), Int, period_add);
    r.add(6072, Args::same(Int, 2), Int, period_diff);
    r.add(6033, Args::same(Int, 1), T, sysdate_with_fsp);
    r.add(6034, Args::fixed(&[]), T, sysdate_without_fsp);
}

/// A field of the date, or NULL with a warning when the date has a zero month or day.
fn date_field(c: &Call<'_, '_>, ctx: &mut EvalContext, f: fn(&Time) -> i64) -> Result<VecCol> {
    map1::<TimeT, IntT>(c.n, c.typed(0)?, ctx, |t, ctx| {
        if zero_in(&t) { null_invalid(ctx, t) } else { Ok(Some(f(&t))) }
    })
}

/// `YEAR` and `DAYOFMONTH`: 0 for a zero date, unless `NO_ZERO_DATE` makes it NULL.
fn zero_ok_field(c: &Call<'_, '_>, ctx: &mut EvalContext, f: fn(&Time) -> u32) -> Result<VecCol> {
    let no_zero_date = ctx.cfg.sql_mode & MODE_NO_ZERO_DATE != 0;
    map1::<TimeT, IntT>(c.n, c.typed(0)?, ctx, |t, ctx| {
        if t.is_zero() && no_zero_date {
            return null_invalid(ctx, t);
        }
        Ok(Some(i64::from(f(&t))))
    })
}

/// SQL mode bit: NO_ZERO_DATE.
pub const MODE_NO_ZERO_DATE: u64 = 1 << 24;

fn year(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    zero_ok_field(c, ctx, Time::year)
}

fn day_of_month(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    zero_ok_field(c, ctx, Time::day)
}

fn month(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<TimeT, IntT>(c.n, c.typed(0)?, |t| Some(i64::from(t.month())))
}

fn quarter(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<TimeT, IntT>(c.n, c.typed(0)?, |t| Some(i64::from(t.month() + 2) / 3))
}

fn daynr(t: &Time) -> i64 {
    calendar::day_number(t.year(), t.month(), t.day())
}

fn day_of_week(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    date_field(c, ctx, |t| i64::from(calendar::weekday_of(daynr(t), true)) + 1)
}

fn day_of_year(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    date_field(c, ctx, Time::day_of_year)
}

fn week_day(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    date_field(c, ctx, |t| i64::from(calendar::weekday_of(daynr(t), false)))
}

fn to_days(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    date_field(c, ctx, daynr)
}

fn to_seconds(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    date_field(c, ctx, |t| {
        daynr(t) * 86_400
            + i64::from(t.hour()) * 3600
            + i64::from(t.minute()) * 60
            + i64::from(t.second())
    })
}

fn date_diff(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map2::<TimeT, TimeT, IntT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |a, b, ctx| {
        if zero_in(&a) {
            return null_invalid(ctx, a);
        }
        if zero_in(&b) {
            return null_invalid(ctx, b);
        }
        Ok(Some(daynr(&a) - daynr(&b)))
    })
}

fn name_of(
    c: &Call<'_, '_>,
    ctx: &mut EvalContext,
    f: fn(&Time) -> &'static str,
) -> Result<VecCol> {
    map1::<TimeT, BytesT>(c.n, c.typed(0)?, ctx, |t, ctx| {
        if zero_in(&t) { null_invalid(ctx, t) } else { Ok(Some(f(&t).as_bytes().to_vec())) }
    })
}

/// The English name of the month of `t` (`""` for month 0).
pub fn month_name_of(t: &Time) -> &'static str {
    MONTH_NAMES.get((t.month() as usize).wrapping_sub(1)).copied().unwrap_or("")
}

/// The English name of the weekday of `t`.
pub fn day_name_of(t: &Time) -> &'static str {
    DAY_NAMES.get(calendar::weekday_of(daynr(t), false) as usize).copied().unwrap_or("")
}

fn month_name(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    name_of(c, ctx, month_name_of)
}

fn day_name(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    name_of(c, ctx, day_name_of)
}

fn date(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<TimeT, TimeT>(c.n, c.typed(0)?, ctx, |t, ctx| {
        if zero_in(&t) && !t.is_zero() {
            return null_invalid(ctx, t);
        }
        Ok(make_time(t.year(), t.month(), t.day(), 0, 0, 0, 0, TimeType::Date, 0))
    })
}

fn last_day(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<TimeT, TimeT>(c.n, c.typed(0)?, ctx, |t, ctx| {
        if zero_in(&t) {
            return null_invalid(ctx, t);
        }
        let d = calendar::days_in_month(t.year(), t.month());
        Ok(make_time(t.year(), t.month(), d, 0, 0, 0, 0, TimeType::Date, 0))
    })
}

fn dur_field(c: &Call<'_, '_>, f: fn(&Duration) -> i64) -> Result<VecCol> {
    map1_infallible::<DurT, IntT>(c.n, c.typed(0)?, |d| Some(f(&d)))
}

fn hour(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    dur_field(c, |d| i64::from(d.hours()))
}

fn minute(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    dur_field(c, |d| i64::from(d.minutes()))
}

fn second(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    dur_field(c, |d| i64::from(d.seconds()))
}

fn micro_second(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    dur_field(c, |d| i64::from(d.micros()))
}

fn time_to_sec(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    dur_field(c, |d| d.nanos() / 1_000_000_000)
}

/// The date of a day number: the zero date outside 366..3652500 (MySQL's `FROM_DAYS`).
fn date_of_daynr(n: i64) -> Option<Time> {
    let (y, m, d) = calendar::date_from_day_number(n);
    make_time(y, m, d, 0, 0, 0, 0, TimeType::Date, 0)
}

fn from_days(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<IntT, TimeT>(c.n, c.typed(0)?, date_of_daynr)
}

fn make_date(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_pair(c, |year, day| {
        if !(0..=9999).contains(&year) || day <= 0 {
            return None;
        }
        let year = match year {
            0..=69 => year + 2000,
            70..=99 => year + 1900,
            y => y,
        };
        let n = calendar::day_number(year as u32, 1, 1).checked_add(day - 1)?;
        if !(0..=MAX_DAY_NUMBER).contains(&n) {
            return None;
        }
        date_of_daynr(n).filter(|t| !t.is_zero())
    })
}

fn map1_pair(c: &Call<'_, '_>, f: impl Fn(i64, i64) -> Option<Time>) -> Result<VecCol> {
    let mut ctx = EvalContext::default();
    map2::<IntT, IntT, TimeT>(c.n, c.typed(0)?, c.typed(1)?, &mut ctx, |a, b, _| Ok(f(a, b)))
}

/// The largest `TIME`, in whole seconds.
const MAX_TIME_SECS: u64 = 838 * 3600 + 59 * 60 + 59;

fn make_time_kernel(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let (h, m, s) = (c.typed::<IntT>(0)?, c.typed::<IntT>(1)?, c.typed::<RealT>(2)?);
    let hour_unsigned = c.arg_ft(0).is_unsigned();
    let fsp = ret_fsp(c, 6);
    let mut out = VecCol::new(EvalType::Duration, c.n);
    for i in 0..c.n {
        let v = match (h.get(i), m.get(i), s.get(i)) {
            (Some(h), Some(m), Some(s)) => make_time_value(h, hour_unsigned, m, s, fsp, ctx)?,
            _ => None,
        };
        <DurT as crate::column::Elem>::push(&mut out, v);
    }
    Ok(out)
}

/// MySQL's `MAKETIME`: minutes 0..=59 and seconds in [0, 60) or NULL; beyond 838:59:59 the
/// value is clipped with a warning.
fn make_time_value(
    hour: i64,
    hour_unsigned: bool,
    minute: i64,
    second: f64,
    fsp: u8,
    ctx: &mut EvalContext,
) -> Result<Option<Duration>> {
    if !(0..=59).contains(&minute) {
        return Ok(None);
    }
    if !(0.0..60.0).contains(&second) {
        invalid_time_clip(ctx, hour, minute, second)?;
        return Ok(None);
    }
    let (neg, hours) =
        if hour_unsigned { (false, hour as u64) } else { (hour < 0, hour.unsigned_abs()) };
    // The fraction rounded to the result's digits, carrying into the seconds.
    let scale = 10f64.powi(i32::from(fsp));
    let total_micros_frac = (second * scale).round() / scale;
    let whole = total_micros_frac.trunc() as u64;
    let micros = ((total_micros_frac - total_micros_frac.trunc()) * 1e6).round() as i64;
    let secs = hours
        .checked_mul(3600)
        .and_then(|x| x.checked_add(minute as u64 * 60 + whole))
        .unwrap_or(u64::MAX);
    let nanos = if secs > MAX_TIME_SECS || (secs == MAX_TIME_SECS && micros > 0) {
        invalid_time_clip(ctx, hour, minute, second)?;
        MAX_TIME_SECS as i64 * 1_000_000_000
    } else {
        secs as i64 * 1_000_000_000 + micros * 1000
    };
    let nanos = if neg { -nanos } else { nanos };
    Ok(Some(Duration::from_nanos(nanos, fsp)?))
}

fn invalid_time_clip(ctx: &mut EvalContext, h: i64, m: i64, s: f64) -> Result<()> {
    ctx.truncated(Error::Truncated { what: "time", value: format!("{h}:{m:02}:{s}") })
}

/// MySQL's `convert_period_to_month` (on the period as an unsigned number, as TiKV).
fn period_to_month(p: u64) -> u64 {
    if p == 0 {
        return 0;
    }
    let (mut y, m) = (p / 100, p % 100);
    if y < 70 {
        y += 2000;
    } else if y < 100 {
        y += 1900;
    }
    (y * 12 + m).wrapping_sub(1)
}

/// MySQL's `convert_month_to_period`.
fn month_to_period(m: u64) -> u64 {
    if m == 0 {
        return 0;
    }
    let mut y = m / 12;
    if y < 70 {
        y += 2000;
    } else if y < 100 {
        y += 1900;
    }
    y.wrapping_mul(100).wrapping_add(m % 12 + 1)
}

fn period_add(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map2::<IntT, IntT, IntT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |p, n, _| {
        if p == 0 {
            return Ok(Some(0));
        }
        let month = (period_to_month(p as u64) as i32 as i64).wrapping_add(n);
        Ok(Some(month_to_period(u64::from(month as u32)) as i64))
    })
}

fn period_diff(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map2::<IntT, IntT, IntT>(c.n, c.typed(0)?, c.typed(1)?, ctx, |a, b, _| {
        Ok(Some((period_to_month(a as u64) as i64).wrapping_sub(period_to_month(b as u64) as i64)))
    })
}

fn sysdate_with_fsp(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<IntT, TimeT>(c.n, c.typed(0)?, ctx, |fsp, ctx| {
        let fsp = u8::try_from(fsp).ok().filter(|f| *f <= 6).ok_or_else(|| {
            Error::invalid(format!("SYSDATE precision {fsp} is above the maximum 6"))
        })?;
        Ok(Some(Time::now(&ctx.cfg.tz, fsp)?))
    })
}

fn sysdate_without_fsp(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let mut out = VecCol::new(EvalType::DateTime, c.n);
    for _ in 0..c.n {
        <TimeT as crate::column::Elem>::push(&mut out, Some(Time::now(&ctx.cfg.tz, 0)?));
    }
    Ok(out)
}
