//! `FROM_UNIXTIME` (one and two arguments) and `UNIX_TIMESTAMP` (integer, decimal and
//! current-time forms), converting through the session time zone (`EvalConfig.tz`).
//!
//! MySQL 8 (and TiDB) accept seconds up to `32536771199.999999` (`3001-01-19 03:14:07`
//! UTC); `FROM_UNIXTIME` of a negative or larger value is NULL. `UNIX_TIMESTAMP` of a time
//! outside the `TIMESTAMP` range, or of a date that is not a calendar date, is 0.

use rcop_datum::decimal::RoundMode;
use rcop_datum::time::calendar;
use rcop_datum::{Decimal, Time, TimeType, Tz};

use super::format::Format;
use super::ret_fsp;
use crate::column::{Arg, BytesT, DecT, Elem, IntT, TimeT, VecCol};
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::expr::kernel::{dec_res, map1};
use crate::expr::registry::{Args, Call, Registry};
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes, DateTime as T, Decimal as Dec, Int};
    r.add(6088, Args::same(Dec, 1), T, from_unixtime_1_arg);
    r.add(6089, Args::fixed(&[Dec, Bytes]), Bytes, from_unixtime_2_arg);
    r.add(6066, Args::same(T, 1), Int, unix_timestamp_int);
    r.add(6067, Args::same(T, 1), Dec, unix_timestamp_dec);
    r.add(6065, Args::fixed(&[]), Int, unix_timestamp_current);
}

/// The largest second `FROM_UNIXTIME` accepts (MySQL 8.0.28+, TiDB).
const MAX_UNIX_SECS: i64 = 32_536_771_199;
/// The day number (`TO_DAYS`) of the epoch, `1970-01-01`.
const EPOCH_DAYNR: i64 = 719_528;
/// The last second of the `TIMESTAMP` range, for `UNIX_TIMESTAMP`.
const MAX_TIMESTAMP_SECS: i64 = 2_147_483_647;

/// A non-negative decimal of seconds as whole seconds and microseconds (rounded half up at
/// the sixth digit), or `None` when it is negative or past [`MAX_UNIX_SECS`].
fn secs_micros(d: &Decimal) -> Option<(i64, u32)> {
    if d.is_negative() {
        return None;
    }
    let d = d.round(6, RoundMode::HalfUp).value();
    let whole = d.round(0, RoundMode::Truncate).value();
    let secs = whole.as_i64();
    if !secs.is_ok() {
        return None;
    }
    let secs = secs.value();
    if secs > MAX_UNIX_SECS {
        return None;
    }
    let frac = d.sub(&whole).value().mul(&Decimal::from_i64(1_000_000)).value();
    let micros = u32::try_from(frac.as_i64().value()).ok()?;
    Some((secs, micros))
}

/// The wall time in `tz` of `secs` + `micros` after the epoch, as a `DATETIME` with `fsp`
/// digits (rounded).
fn wall_time(secs: i64, micros: u32, tz: &Tz, fsp: u8) -> Option<Time> {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, mo, d) = calendar::date_from_day_number(days + EPOCH_DAYNR);
    let (h, mi, s) = (rem / 3600, rem / 60 % 60, rem % 60);
    let (h, mi, s) = (u32::try_from(h).ok()?, u32::try_from(mi).ok()?, u32::try_from(s).ok()?);
    let utc = Time::from_parts(y, mo, d, h, mi, s, micros, TimeType::Timestamp, 6).ok()?;
    utc.from_utc(tz).ok()?.with_type(TimeType::DateTime, 6).ok()?.round_frac(fsp).ok()
}

fn from_unixtime_1_arg(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let fsp = ret_fsp(c, 6);
    let tz = ctx.cfg.tz.clone();
    map1::<DecT, TimeT>(c.n, c.typed(0)?, ctx, |d, _| {
        Ok(secs_micros(d).and_then(|(s, us)| wall_time(s, us, &tz, fsp)))
    })
}

fn from_unixtime_2_arg(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let (a, f) = (c.typed::<DecT>(0)?, c.typed::<BytesT>(1)?);
    // The time's precision is the argument's (at most six digits), as TiDB's `FROM_UNIXTIME`.
    let fsp = u8::try_from(c.arg_ft(0).decimal.clamp(0, 6)).unwrap_or(6);
    let tz = ctx.cfg.tz.clone();
    let constant = match f {
        Arg::Const(Some(f)) => Some(Format::new(f)),
        _ => None,
    };
    let mut out = VecCol::new(EvalType::Bytes, c.n);
    let mut scratch = Format::default();
    let mut buf = Vec::new();
    for i in 0..c.n {
        let (Some(d), Some(fmt)) = (a.get(i), f.get(i)) else {
            out.push_null();
            continue;
        };
        let Some(t) = secs_micros(d).and_then(|(s, us)| wall_time(s, us, &tz, fsp)) else {
            out.push_null();
            continue;
        };
        buf.clear();
        let format = match &constant {
            Some(f) => f,
            None => {
                scratch.reset(fmt);
                &scratch
            }
        };
        let ok = format.write(&t, &mut buf);
        BytesT::push(&mut out, ok.then_some(buf.as_slice()));
    }
    Ok(out)
}

/// Seconds and microseconds after the epoch of the wall time `t` in `tz`, or `None` when it
/// is outside the `TIMESTAMP` range or not a calendar date.
fn unix_secs(t: &Time, tz: &Tz) -> Option<(i64, u32)> {
    if t.is_zero() || super::zero_in(t) {
        return None;
    }
    let ts = t.with_type(TimeType::Timestamp, 6).ok()?;
    let utc = ts.to_utc(tz).ok()?;
    let days = calendar::day_number(utc.year(), utc.month(), utc.day()) - EPOCH_DAYNR;
    let secs = days * 86_400
        + i64::from(utc.hour()) * 3600
        + i64::from(utc.minute()) * 60
        + i64::from(utc.second());
    (0..=MAX_TIMESTAMP_SECS).contains(&secs).then_some((secs, utc.micro()))
}

fn unix_timestamp_int(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let tz = ctx.cfg.tz.clone();
    map1::<TimeT, IntT>(c.n, c.typed(0)?, ctx, |t, _| {
        // An integer result: the argument has no fraction (TiDB picks the decimal form
        // otherwise), so the seconds are exact; a fraction would be rounded, as MySQL.
        Ok(Some(unix_secs(&t, &tz).map_or(0, |(s, us)| s + i64::from(us >= 500_000))))
    })
}

fn unix_timestamp_dec(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let tz = ctx.cfg.tz.clone();
    let frac = i8::try_from(c.ft.decimal.clamp(0, 6)).unwrap_or(6);
    let million = Decimal::from_i64(1_000_000);
    map1::<TimeT, DecT>(c.n, c.typed(0)?, ctx, |t, _| {
        let Some((s, us)) = unix_secs(&t, &tz) else { return Ok(Some(Decimal::from_i64(0))) };
        let micros = Decimal::from_i64(s * 1_000_000 + i64::from(us));
        let v = micros.div(&million, 6).map(dec_res).transpose()?.unwrap_or(micros);
        Ok(Some(dec_res(v.round(frac, RoundMode::HalfUp))?))
    })
}

fn unix_timestamp_current(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let now = Time::now(&ctx.cfg.tz, 0)?;
    let v = unix_secs(&now, &ctx.cfg.tz).map_or(0, |(s, _)| s);
    let mut out = VecCol::new(EvalType::Int, c.n);
    for _ in 0..c.n {
        IntT::push(&mut out, Some(v));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> Decimal {
        Decimal::parse(s).unwrap().value()
    }

    #[test]
    fn seconds_of_a_decimal() {
        assert_eq!(secs_micros(&dec("1.5")), Some((1, 500_000)));
        assert_eq!(secs_micros(&dec("1.0000005")), Some((1, 1)));
        assert_eq!(secs_micros(&dec("-1")), None);
        assert_eq!(secs_micros(&dec("32536771199.999999")), Some((MAX_UNIX_SECS, 999_999)));
        assert_eq!(secs_micros(&dec("32536771200")), None);
    }

    #[test]
    fn round_trip_through_a_zone() {
        let tz = Tz::from_name("Asia/Shanghai").unwrap();
        let t = wall_time(1_000_000_000, 0, &tz, 0).unwrap();
        let mut s = Vec::new();
        t.write_str(&mut s);
        // The MySQL manual: FROM_UNIXTIME(1000000000) at UTC is 2001-09-09 01:46:40.
        assert_eq!(s, b"2001-09-09 09:46:40");
        assert_eq!(unix_secs(&t, &tz), Some((1_000_000_000, 0)));
    }
}
