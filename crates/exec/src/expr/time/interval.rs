//! `DATE_ADD`/`DATE_SUB` (`ADDDATE`/`SUBDATE`, `+ INTERVAL`): every `AddDate<Date><Interval>`
//! and `SubDate<Date><Interval>` signature, the date a string, an int, a real, a decimal, a
//! datetime or a duration, the interval a string, an int, a real or a decimal, and the unit a
//! constant string (the call's third argument, read once per batch).
//!
//! As TiKV: a string, int, real or decimal date gives a string result (`YYYY-MM-DD` when the
//! date has no time part and the unit is not a clock unit, six fraction digits when the result
//! has a fraction); a datetime gives a datetime; a duration gives a `TIME` when the call's
//! type is `TIME` (clock units), else a datetime on today's date. The interval is read as
//! MySQL's `get_interval_value`: simple units take one integer (rounded from a real or a
//! decimal; `SECOND` keeps a fraction to the microsecond), compound units read the value's
//! text as fields. A result outside years 0..=9999 is NULL with a warning.

use rcop_datum::{Decimal, Duration, Time, TimeType};

use super::unit::{Fields, Interval, Unit, add_interval};
use super::{
    make_time, null_invalid, null_overflow, parse_datetime, ret_fsp, text, time_string, zero_in,
};
use crate::column::{BytesT, DurT, Elem, Scalar, TimeT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::registry::{Args, Call, Registry};
use crate::expr::value::Value;
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes as S, DateTime as T, Decimal as Dec, Duration as D, Int as I, Real as R};
    // (date, interval, AddDate sig, SubDate sig)
    let sigs: [(EvalType, EvalType, i32, i32); 24] = [
        (S, S, 6092, 6099),
        (S, I, 6093, 6100),
        (S, Dec, 6094, 6101),
        (S, R, 6118, 6109),
        (I, S, 6095, 6102),
        (I, I, 6096, 6103),
        (I, R, 6119, 6110),
        (I, Dec, 6120, 6111),
        (T, S, 6097, 6104),
        (T, I, 6098, 6105),
        (T, R, 6121, 6112),
        (T, Dec, 6122, 6113),
        (D, S, 6123, 6114),
        (D, I, 6124, 6115),
        (D, R, 6125, 6116),
        (D, Dec, 6126, 6117),
        (R, S, 6128, 6136),
        (R, I, 6129, 6137),
        (R, R, 6130, 6138),
        (R, Dec, 6131, 6139),
        (Dec, S, 6132, 6140),
        (Dec, I, 6133, 6141),
        (Dec, R, 6134, 6142),
        (Dec, Dec, 6135, 6143),
    ];
    for (date, iv, add, sub) in sigs {
        let ret = match date {
            T => T,
            D => D,
            _ => S,
        };
        let args = Args::fixed(&[date, iv, S]);
        let a = r.add(add, args, ret, add_date);
        if date == D {
            a.ret_by_field_type();
        }
        let s = r.add(sub, args, ret, sub_date);
        if date == D {
            s.ret_by_field_type();
        }
    }
}

fn add_date(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    date_arith(c, ctx, false)
}

fn sub_date(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    date_arith(c, ctx, true)
}

/// The constant unit of a call.
fn unit_of(c: &Call<'_, '_>) -> Result<Unit> {
    match c.arg(2)? {
        Value::Scalar(Scalar::Bytes(b)) => Unit::from_name(b).ok_or_else(|| {
            Error::invalid(format!("unknown interval unit {:?}", String::from_utf8_lossy(b)))
        }),
        _ => Err(Error::invalid("the interval unit of DATE_ADD/DATE_SUB is not a constant string")),
    }
}

fn et_of(c: &Call<'_, '_>, i: usize) -> EvalType {
    c.func.children.get(i).map_or(EvalType::Int, |n| n.et)
}

fn date_arith(c: &Call<'_, '_>, ctx: &mut EvalContext, sub: bool) -> Result<VecCol> {
    let unit = unit_of(c)?;
    let date_et = et_of(c, 0);
    let out_et = c.et;
    let fsp = ret_fsp(c, 6);
    let iv_unsigned = c.arg_ft(1).is_unsigned();
    let iv_frac = c.arg_ft(1).decimal;
    let today = if date_et == EvalType::Duration && out_et == EvalType::DateTime {
        Some(Time::today(&ctx.cfg.tz)?)
    } else {
        None
    };
    // A constant interval is read once, unless reading it warns (each row warns then).
    let const_iv = match c.arg(1)? {
        Value::Scalar(s) if !s.is_null() => {
            let mut probe = EvalContext::new(ctx.cfg.clone());
            match interval(s, unit, iv_unsigned, iv_frac, &mut probe) {
                Ok(iv) if probe.take_warnings().1 == 0 => Some(iv),
                _ => None,
            }
        }
        _ => None,
    };
    let (date_arg, iv_arg) = (c.arg(0)?, c.arg(1)?);
    let mut out = VecCol::new(out_et, c.n);
    for i in 0..c.n {
        let date = date_arg.scalar_at(i);
        if date.is_null() {
            out.push_null();
            continue;
        }
        let iv = match const_iv {
            Some(iv) => iv,
            None => {
                let iv = iv_arg.scalar_at(i);
                if iv.is_null() {
                    out.push_null();
                    continue;
                }
                interval(&iv, unit, iv_unsigned, iv_frac, ctx)?
            }
        };
        let Some(mut iv) = iv else {
            out.push_null();
            continue;
        };
        if sub {
            iv = iv.negate();
        }
        if let (Scalar::Duration(d), EvalType::Duration) = (&date, out_et) {
            let r = duration_plus(d, &iv, fsp, ctx)?;
            DurT::push(&mut out, r);
            continue;
        }
        let Some(t) = date_value(&date, today, ctx)? else {
            out.push_null();
            continue;
        };
        let r = time_plus(t, &iv, unit, ctx)?;
        match out_et {
            EvalType::Bytes => BytesT::push(&mut out, r.map(|t| time_string(&t)).as_deref()),
            _ => {
                let r = r.and_then(|t| {
                    make_time(
                        t.year(),
                        t.month(),
                        t.day(),
                        t.hour(),
                        t.minute(),
                        t.second(),
                        t.micro(),
                        t.time_type(),
                        fsp,
                    )
                });
                TimeT::push(&mut out, r);
            }
        }
    }
    Ok(out)
}

/// The date argument as a time, or NULL with a warning when it is not a valid date.
fn date_value(s: &Scalar, today: Option<Time>, ctx: &mut EvalContext) -> Result<Option<Time>> {
    let t = match s {
        Scalar::Bytes(b) => text(b).and_then(parse_datetime),
        Scalar::Int(v) => number_date(&v.to_string()),
        Scalar::Real(v) => number_date(&format!("{v}")),
        Scalar::Decimal(d) => number_date(&d.to_string()),
        Scalar::DateTime(t) => Some(*t),
        Scalar::Duration(d) => match today {
            Some(day) => day.add_duration(d, TimeType::DateTime, 6).ok(),
            None => None,
        },
        _ => None,
    };
    match t {
        Some(t) if !zero_in(&t) => Ok(Some(t)),
        _ => null_invalid(ctx, scalar_text(s)),
    }
}

/// A number read as a date: `YYYYMMDD` (a `DATE`) or `YYYYMMDDhhmmss[.f]`.
fn number_date(s: &str) -> Option<Time> {
    let whole = s.split('.').next().unwrap_or(s);
    if whole.len() <= 8 {
        Time::parse(whole, TimeType::Date, 0).ok()
    } else {
        Time::parse(s, TimeType::DateTime, 6).ok()
    }
}

fn scalar_text(s: &Scalar) -> String {
    match s {
        Scalar::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Scalar::Int(v) => v.to_string(),
        Scalar::Real(v) => v.to_string(),
        Scalar::Decimal(d) => d.to_string(),
        Scalar::DateTime(t) => t.to_string(),
        Scalar::Duration(d) => d.to_string(),
        s => format!("{s:?}"),
    }
}

/// `t` plus `iv`: a `DATE` stays one for a date unit, else the result is a `DATETIME`.
fn time_plus(t: Time, iv: &Interval, unit: Unit, ctx: &mut EvalContext) -> Result<Option<Time>> {
    let tp = if unit.is_clock() || t.time_type() != TimeType::Date {
        TimeType::DateTime
    } else {
        TimeType::Date
    };
    let f = Fields {
        year: t.year(),
        month: t.month(),
        day: t.day(),
        hour: t.hour(),
        minute: t.minute(),
        second: t.second(),
        micro: t.micro(),
    };
    match add_interval(f, iv, unit.is_months()) {
        Some(r) => {
            Ok(make_time(r.year, r.month, r.day, r.hour, r.minute, r.second, r.micro, tp, 6))
        }
        None => null_overflow(ctx),
    }
}

fn duration_plus(
    d: &Duration,
    iv: &Interval,
    fsp: u8,
    ctx: &mut EvalContext,
) -> Result<Option<Duration>> {
    let sum = iv.nanos().and_then(|n| n.checked_add(d.nanos()));
    match sum.map(|n| Duration::from_nanos(n, fsp)) {
        Some(Ok(r)) => Ok(Some(r)),
        _ => null_overflow(ctx),
    }
}

/// Whole seconds and microseconds (truncated) of a number's text `[-]int[.frac]`.
fn split_seconds(s: &str) -> Option<Interval> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let secs: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let digits: String = frac.chars().take(6).collect();
    if !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let micro = if digits.is_empty() {
        0
    } else {
        digits.parse::<u64>().ok()? * 10u64.pow(6 - digits.len() as u32)
    };
    Some(Interval::seconds(neg, secs, micro))
}

/// The interval value of a row, or `None` (NULL) when MySQL cannot read it.
fn interval(
    v: &Scalar,
    unit: Unit,
    unsigned: bool,
    frac: i32,
    ctx: &mut EvalContext,
) -> Result<Option<Interval>> {
    if !unit.is_simple() {
        let s = match v {
            Scalar::Int(x) if unsigned => (*x as u64).to_string(),
            Scalar::Bytes(b) => return Ok(Interval::parse_fields(unit, b)),
            other => scalar_text(other),
        };
        return Ok(Interval::parse_fields(unit, s.as_bytes()));
    }
    Ok(match v {
        Scalar::Int(x) if unsigned => {
            let mut iv = Interval::simple(unit, (*x as u64).min(i64::MAX as u64) as i64);
            iv.neg = false;
            Some(iv)
        }
        Scalar::Int(x) => Some(Interval::simple(unit, *x)),
        Scalar::Real(x) if unit == Unit::Second => split_seconds(&format!("{x}")),
        Scalar::Real(x) => Some(Interval::simple(unit, x.round() as i64)),
        Scalar::Decimal(d) if unit == Unit::Second && frac > 0 => split_seconds(&d.to_string()),
        Scalar::Decimal(d) => Some(Interval::simple(unit, d.as_i64().value())),
        Scalar::Bytes(b) if unit == Unit::Second => {
            let d = Decimal::parse_bytes(b.trim_ascii())
                .map(|r| r.value())
                .unwrap_or_else(|_| Decimal::zero());
            split_seconds(&d.to_string())
        }
        Scalar::Bytes(b) => Some(Interval::simple(unit, str_int(b, ctx)?)),
        _ => None,
    })
}

/// A string read as an integer the way MySQL's `val_int` does: leading spaces, a sign and
/// digits; anything after them is dropped with a truncation warning.
fn str_int(b: &[u8], ctx: &mut EvalContext) -> Result<i64> {
    let s = b.trim_ascii_start();
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, s.get(1..).unwrap_or(&[])),
        Some(b'+') => (false, s.get(1..).unwrap_or(&[])),
        _ => (false, s),
    };
    let len = digits.iter().position(|c| !c.is_ascii_digit()).unwrap_or(digits.len());
    let mut v: i64 = 0;
    for d in digits.get(..len).unwrap_or(&[]) {
        v = v.saturating_mul(10).saturating_add(i64::from(d - b'0'));
    }
    if len < digits.len() || len == 0 {
        ctx.truncated(Error::Truncated {
            what: "INTEGER",
            value: String::from_utf8_lossy(b).chars().take(64).collect(),
        })?;
    }
    Ok(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_split() {
        assert_eq!(split_seconds("1.5"), Some(Interval::seconds(false, 1, 500_000)));
        assert_eq!(split_seconds("-0.0000019"), Some(Interval::seconds(true, 0, 1)));
        assert_eq!(split_seconds("2"), Some(Interval::seconds(false, 2, 0)));
    }
}
