//! `TIMESTAMPDIFF(unit, t1, t2)` and `EXTRACT(unit FROM t)` over a datetime or a `TIME`.
//!
//! The unit is a string argument (TiDB sends it as a constant); a constant unit is read once
//! per batch. An unknown unit is an error, as TiDB's "invalid time unit".

use rcop_datum::time::calendar::{self, WEEK_FIRST_WEEKDAY, calc_week};
use rcop_datum::{Duration, Time};

use super::null_invalid;
use super::unit::Unit;
use crate::column::{Arg, BytesT, DurT, Elem, IntT, TimeT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::registry::{Args, Call, Registry};
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes, DateTime as T, Duration as D, Int};
    r.add(6108, Args::fixed(&[Bytes, T, T]), Int, timestamp_diff);
    r.add(6090, Args::fixed(&[Bytes, T]), Int, extract_datetime);
    r.add(6091, Args::fixed(&[Bytes, D]), Int, extract_duration);
}

fn unit_of(s: &[u8]) -> Result<Unit> {
    Unit::from_name(s)
        .ok_or_else(|| Error::invalid(format!("invalid time unit {}", String::from_utf8_lossy(s))))
}

/// The unit of row `i`: the constant's, read once, or the row's.
struct UnitArg<'a> {
    arg: Arg<'a, BytesT>,
    constant: Option<Unit>,
}

impl<'a> UnitArg<'a> {
    fn new(arg: Arg<'a, BytesT>) -> Result<UnitArg<'a>> {
        let constant = match arg {
            Arg::Const(Some(s)) => Some(unit_of(s)?),
            _ => None,
        };
        Ok(UnitArg { arg, constant })
    }

    fn get(&self, i: usize) -> Result<Option<Unit>> {
        if let Some(u) = self.constant {
            return Ok(Some(u));
        }
        self.arg.get(i).map(unit_of).transpose()
    }
}

/// Microseconds since day number 0 of a calendar time.
fn micros_of(t: &Time) -> i128 {
    let days = i128::from(calendar::day_number(t.year(), t.month(), t.day()));
    let secs = days * 86_400
        + i128::from(t.hour()) * 3600
        + i128::from(t.minute()) * 60
        + i128::from(t.second());
    secs * 1_000_000 + i128::from(t.micro())
}

/// Whole months from `a` to `b` (`a <= b`), as MySQL's `TIMESTAMPDIFF`: a month is counted
/// once the day and time of day of `b` reach those of `a`.
fn months_between(a: &Time, b: &Time) -> i64 {
    let (ya, ma, da) = (i64::from(a.year()), i64::from(a.month()), i64::from(a.day()));
    let (yb, mb, db) = (i64::from(b.year()), i64::from(b.month()), i64::from(b.day()));
    let mut months = (yb - ya) * 12 + (mb - ma);
    let tod = |t: &Time| {
        (u64::from(t.hour()) * 3600 + u64::from(t.minute()) * 60 + u64::from(t.second()))
            * 1_000_000
            + u64::from(t.micro())
    };
    if db < da || (db == da && tod(b) < tod(a)) {
        months -= 1;
    }
    months
}

/// `TIMESTAMPDIFF(unit, a, b)`: `b - a` in whole units, or `None` for a week-less unit.
fn timestamp_diff_of(unit: Unit, a: &Time, b: &Time) -> Option<i64> {
    let (lo, hi, sign) = if micros_of(b) >= micros_of(a) { (a, b, 1) } else { (b, a, -1) };
    let us = micros_of(hi) - micros_of(lo);
    let secs = us / 1_000_000;
    let v = match unit {
        Unit::Microsecond => us,
        Unit::Second => secs,
        Unit::Minute => secs / 60,
        Unit::Hour => secs / 3600,
        Unit::Day => secs / 86_400,
        Unit::Week => secs / 86_400 / 7,
        Unit::Month => i128::from(months_between(lo, hi)),
        Unit::Quarter => i128::from(months_between(lo, hi) / 3),
        Unit::Year => i128::from(months_between(lo, hi) / 12),
        _ => return None,
    };
    i64::try_from(v * sign).ok()
}

fn timestamp_diff(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let unit = UnitArg::new(c.typed::<BytesT>(0)?)?;
    let (a, b) = (c.typed::<TimeT>(1)?, c.typed::<TimeT>(2)?);
    let mut out = VecCol::new(EvalType::Int, c.n);
    for i in 0..c.n {
        let (Some(u), Some(a), Some(b)) = (unit.get(i)?, a.get(i), b.get(i)) else {
            out.push_null();
            continue;
        };
        if super::zero_in(&a) || super::zero_in(&b) {
            let bad = if super::zero_in(&a) { a } else { b };
            null_invalid::<()>(ctx, bad)?;
            out.push_null();
            continue;
        }
        match timestamp_diff_of(u, &a, &b) {
            Some(v) => IntT::push(&mut out, Some(v)),
            None => return Err(Error::invalid(format!("invalid time unit {u:?}"))),
        }
    }
    Ok(out)
}

/// The fields of a time of day (hours unbounded, for a `TIME`), as TiDB's
/// `ExtractDurationNum`; `None` for a date unit.
fn extract_clock(unit: Unit, h: i64, m: i64, s: i64, us: i64) -> Option<i64> {
    Some(match unit {
        Unit::Microsecond => us,
        Unit::Second => s,
        Unit::Minute => m,
        Unit::Hour => h,
        Unit::SecondMicrosecond => s * 1_000_000 + us,
        Unit::MinuteMicrosecond => (m * 100 + s) * 1_000_000 + us,
        Unit::MinuteSecond => m * 100 + s,
        Unit::HourMicrosecond => (h * 10_000 + m * 100 + s) * 1_000_000 + us,
        Unit::HourSecond => h * 10_000 + m * 100 + s,
        Unit::HourMinute => h * 100 + m,
        Unit::DayMicrosecond => (h * 10_000 + m * 100 + s) * 1_000_000 + us,
        Unit::DaySecond => h * 10_000 + m * 100 + s,
        Unit::DayMinute => h * 100 + m,
        Unit::DayHour => h,
        _ => return None,
    })
}

/// `EXTRACT(unit FROM t)` of a datetime, as MySQL's `Item_extract`.
fn extract_time(unit: Unit, t: &Time) -> Option<i64> {
    let (y, mo, d) = (i64::from(t.year()), i64::from(t.month()), i64::from(t.day()));
    let (h, mi, s, us) =
        (i64::from(t.hour()), i64::from(t.minute()), i64::from(t.second()), i64::from(t.micro()));
    Some(match unit {
        Unit::Year => y,
        Unit::YearMonth => y * 100 + mo,
        Unit::Quarter => (mo + 2) / 3,
        Unit::Month => mo,
        Unit::Week => i64::from(calc_week(t.year(), t.month(), t.day(), WEEK_FIRST_WEEKDAY).1),
        Unit::Day => d,
        Unit::DayHour => d * 100 + h,
        Unit::DayMinute => (d * 100 + h) * 100 + mi,
        Unit::DaySecond => ((d * 100 + h) * 100 + mi) * 100 + s,
        Unit::DayMicrosecond => (((d * 100 + h) * 100 + mi) * 100 + s) * 1_000_000 + us,
        other => extract_clock(other, h, mi, s, us)?,
    })
}

fn extract_datetime(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    extract_rows::<TimeT>(c, ctx, |u, t| extract_time(u, &t))
}

fn extract_duration(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    extract_rows::<DurT>(c, ctx, |u, d: Duration| {
        let us_total = d.nanos().unsigned_abs() / 1000;
        let secs = i64::try_from(us_total / 1_000_000).ok()?;
        let us = i64::try_from(us_total % 1_000_000).ok()?;
        let v = extract_clock(u, secs / 3600, secs / 60 % 60, secs % 60, us)?;
        Some(if d.nanos() < 0 { -v } else { v })
    })
}

fn extract_rows<'a, E: Elem>(
    c: &'a Call<'_, '_>,
    _ctx: &mut EvalContext,
    f: impl Fn(Unit, E::R<'a>) -> Option<i64>,
) -> Result<VecCol> {
    let unit = UnitArg::new(c.typed::<BytesT>(0)?)?;
    let v = c.typed::<E>(1)?;
    let mut out = VecCol::new(EvalType::Int, c.n);
    for i in 0..c.n {
        let (Some(u), Some(x)) = (unit.get(i)?, v.get(i)) else {
            out.push_null();
            continue;
        };
        match f(u, x) {
            Some(r) => IntT::push(&mut out, Some(r)),
            None => return Err(Error::invalid(format!("invalid time unit {u:?} for EXTRACT"))),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcop_datum::TimeType;

    fn t(s: &str) -> Time {
        Time::parse(s, TimeType::DateTime, 6).unwrap()
    }

    #[test]
    fn manual_examples() {
        // The MySQL manual's TIMESTAMPDIFF examples.
        assert_eq!(timestamp_diff_of(Unit::Month, &t("2003-02-01"), &t("2003-05-01")), Some(3));
        assert_eq!(timestamp_diff_of(Unit::Year, &t("2002-05-01"), &t("2001-01-01")), Some(-1));
        assert_eq!(
            timestamp_diff_of(Unit::Minute, &t("2003-02-01"), &t("2003-05-01 12:05:55")),
            Some(128_885)
        );
        // And EXTRACT's.
        assert_eq!(extract_time(Unit::YearMonth, &t("2019-07-02 01:02:03")), Some(201_907));
        assert_eq!(extract_time(Unit::DayMinute, &t("2019-07-02 01:02:03")), Some(20_102));
        assert_eq!(extract_time(Unit::Microsecond, &t("2003-01-02 10:30:00.000123")), Some(123));
    }
}
