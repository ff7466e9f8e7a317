//! Casts to and from dates, times and durations: numbers and strings read as times (with
//! the zero-date rules of the SQL mode), durations clipped to ±838:59:59, and times as
//! numbers.

use rcop_datum::decimal::RoundMode;
use rcop_datum::{Decimal, Duration, Time};

use crate::ctx::{EvalContext, MODE_NO_ZERO_IN_DATE};
use crate::error::{Error, Result};
use crate::expr::kernel::dec_res;
use crate::types::FieldType;

use super::truncated;

/// A string or a number's text read as a date/time of the target type: an invalid one is
/// NULL after TiKV's invalid-time handling, a zero date (or a zero month or day) follows the
/// SQL mode's NO_ZERO_DATE / NO_ZERO_IN_DATE.
pub(super) fn parse_time(
    s: &str,
    to_ft: &FieldType,
    ctx: &mut EvalContext,
) -> Result<Option<Time>> {
    let (tp, fsp) = (to_ft.time_type(), to_ft.fsp());
    let t = if s == "0" { Time::zero(tp, fsp) } else { Time::parse(s.trim(), tp, fsp) };
    match t {
        Ok(t) => checked_zero(t, s, ctx),
        Err(_) => {
            ctx.invalid_time(Error::IncorrectDatetime(shorten(s)))?;
            Ok(None)
        }
    }
}

/// TiKV's `TimeArgs::check` for zero parts: a zero month or day under NO_ZERO_IN_DATE and a
/// zero date under NO_ZERO_DATE are invalid in strict mode (NULL after a warning) and a
/// warning otherwise (the zero date stands).
fn checked_zero(t: Time, s: &str, ctx: &mut EvalContext) -> Result<Option<Time>> {
    let invalid = |ctx: &mut EvalContext| -> Result<Option<Time>> {
        ctx.invalid_time(Error::IncorrectDatetime(shorten(s)))?;
        Ok(None)
    };
    let zero = Time::zero(t.time_type(), t.fsp())?;
    if t.is_zero() {
        return match ctx.zero_date() {
            None | Some(true) => Ok(Some(t)),
            Some(false) => invalid(ctx),
        };
    }
    if (t.month() == 0 || t.day() == 0) && ctx.cfg.sql_mode & MODE_NO_ZERO_IN_DATE != 0 {
        if ctx.cfg.is_strict() && ctx.cfg.flags & crate::ctx::FLAG_IGNORE_TRUNCATE == 0 {
            return invalid(ctx);
        }
        ctx.warn(&Error::DataTruncated);
        return match ctx.zero_date() {
            None | Some(true) => Ok(Some(zero)),
            Some(false) => invalid(ctx),
        };
    }
    Ok(Some(t))
}

fn shorten(s: &str) -> String {
    s.chars().take(64).collect()
}

/// A string or a number's text read as a duration: past ±838:59:59 it is clipped there
/// after an overflow (TiKV's `handle_overflow_err`), otherwise invalid is NULL after a
/// truncation.
pub(super) fn parse_duration(s: &str, fsp: u8, ctx: &mut EvalContext) -> Result<Option<Duration>> {
    match Duration::parse(s, fsp) {
        Ok(d) => Ok(Some(d)),
        Err(rcop_datum::Error::Overflow { .. }) => {
            ctx.overflow(Error::Overflow("TIME"))?;
            let neg = s.trim_start().starts_with('-');
            let max = rcop_datum::duration::MAX_NANOS;
            Ok(Some(Duration::from_nanos(if neg { -max } else { max }, fsp)?))
        }
        Err(_) => {
            ctx.truncated(truncated("TIME", s.as_bytes()))?;
            Ok(None)
        }
    }
}

pub(super) fn time_number(t: &Time) -> u64 {
    let ymd = u64::from(t.year()) * 10_000 + u64::from(t.month()) * 100 + u64::from(t.day());
    if t.time_type() == rcop_datum::TimeType::Date {
        return ymd;
    }
    ymd * 1_000_000
        + u64::from(t.hour()) * 10_000
        + u64::from(t.minute()) * 100
        + u64::from(t.second())
}

pub(super) fn time_decimal(t: &Time) -> Result<Decimal> {
    let whole = Decimal::from_u64(time_number(t));
    if t.fsp() == 0 || t.time_type() == rcop_datum::TimeType::Date {
        return Ok(whole);
    }
    let frac = Decimal::from_u64(u64::from(t.micro()));
    let million = Decimal::from_u64(1_000_000);
    let f = frac.div(&million, 6).ok_or(Error::DivisionByZero)?;
    let f = dec_res(dec_res(f)?.round(i8::try_from(t.fsp()).unwrap_or(6), RoundMode::HalfUp))?;
    dec_res(whole.add(&f))
}

pub(super) fn duration_number(d: &Duration) -> i64 {
    let v = i64::from(d.hours()) * 10_000 + i64::from(d.minutes()) * 100 + i64::from(d.seconds());
    if d.is_neg() { -v } else { v }
}

pub(super) fn duration_decimal(d: &Duration) -> Result<Decimal> {
    let whole = Decimal::from_i64(duration_number(&Duration::from_nanos(
        d.nanos() - d.nanos() % 1_000_000_000,
        0,
    )?));
    if d.fsp() == 0 {
        return Ok(whole);
    }
    let micros = Decimal::from_u64(u64::from(d.micros()));
    let f = dec_res(micros.div(&Decimal::from_u64(1_000_000), 6).ok_or(Error::DivisionByZero)?)?;
    let f = dec_res(f.round(i8::try_from(d.fsp()).unwrap_or(6), RoundMode::HalfUp))?;
    dec_res(if d.is_neg() { whole.sub(&f) } else { whole.add(&f) })
}
