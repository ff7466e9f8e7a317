//! CAST among int, real, decimal, string, time and duration.

use rcop_datum::decimal::RoundMode;
use rcop_datum::{Decimal, Duration, Res, Time};

use crate::column::{BytesT, DecT, DurT, IntT, RealT, TimeT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::kernel::{dec_res, map1};
use crate::expr::registry::{Args, Call, Registry};
use crate::expr::sig::type_at;
use crate::expr::value::Value;
use crate::types::{EvalType, FieldType};
use rcop_datum::chunk::mysql_type as mt;

pub(super) fn register(r: &mut Registry) {
    for s in 1..=56 {
        if let Some((from, to)) = cast_types(s) {
            r.add(s, Args::same(from, 1), to, cast_kernel);
        }
    }
}

/// The source and target types of a CAST signature (1–55).
pub fn cast_types(sig: i32) -> Option<(EvalType, EvalType)> {
    if !(1..=56).contains(&sig) {
        return None;
    }
    let (from, to) = if sig < 10 { (0, sig - 1) } else { (sig / 10, sig % 10) };
    // Target order inside a decade: Int, Real, String, Decimal, Time, Duration, Json.
    let to = match to {
        0 => EvalType::Int,
        1 => EvalType::Real,
        2 => EvalType::Bytes,
        3 => EvalType::Decimal,
        4 => EvalType::DateTime,
        5 => EvalType::Duration,
        _ => return None,
    };
    Some((type_at(from)?, to))
}

fn cast_kernel(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let Some((from, to)) = cast_types(c.func.sig) else {
        return Err(Error::invalid("not a cast"));
    };
    cast(from, to, &c.arg_ft(0), c.ft, c.arg(0)?, c.n, ctx)
}

/// Casts `v` (of `from`, typed `from_ft`) to `to` typed `to_ft`.
pub fn cast(
    from: EvalType,
    to: EvalType,
    from_ft: &FieldType,
    to_ft: &FieldType,
    v: &Value<'_>,
    n: usize,
    ctx: &mut EvalContext,
) -> Result<VecCol> {
    use EvalType as T;
    let fu = from_ft.is_unsigned();
    let tu = to_ft.is_unsigned();
    match (from, to) {
        (T::Int, T::Int) => map1::<IntT, IntT>(n, v.arg()?, ctx, |x, _| Ok(Some(x))),
        (T::Int, T::Real) => map1::<IntT, RealT>(n, v.arg()?, ctx, |x, _| {
            Ok(Some(if fu { x as u64 as f64 } else { x as f64 }))
        }),
        (T::Int, T::Decimal) => map1::<IntT, DecT>(n, v.arg()?, ctx, |x, ctx| {
            let d = if fu { Decimal::from_u64(x as u64) } else { Decimal::from_i64(x) };
            fit_decimal(d, to_ft, ctx).map(Some)
        }),
        (T::Int, T::Bytes) => map1::<IntT, BytesT>(n, v.arg()?, ctx, |x, _| {
            Ok(Some(if fu { (x as u64).to_string() } else { x.to_string() }.into_bytes()))
        }),
        (T::Real, T::Int) => {
            map1::<RealT, IntT>(n, v.arg()?, ctx, |x, ctx| real_to_int(x, tu, ctx).map(Some))
        }
        (T::Real, T::Real) => map1::<RealT, RealT>(n, v.arg()?, ctx, |x, _| {
            Ok(Some(if to_ft.tp == mt::FLOAT { f64::from(x as f32) } else { x }))
        }),
        (T::Real, T::Decimal) => map1::<RealT, DecT>(n, v.arg()?, ctx, |x, ctx| {
            let d = dec_res(Decimal::from_f64(x)?)?;
            fit_decimal(d, to_ft, ctx).map(Some)
        }),
        (T::Real, T::Bytes) => {
            map1::<RealT, BytesT>(n, v.arg()?, ctx, |x, _| Ok(Some(real_to_string(x).into_bytes())))
        }
        (T::Decimal, T::Int) => map1::<DecT, IntT>(n, v.arg()?, ctx, |x, ctx| {
            let r = dec_res(x.round(0, RoundMode::HalfUp))?;
            dec_to_int(&r, tu, ctx).map(Some)
        }),
        (T::Decimal, T::Real) => map1::<DecT, RealT>(n, v.arg()?, ctx, |x, _| Ok(Some(x.as_f64()))),
        (T::Decimal, T::Decimal) => {
            map1::<DecT, DecT>(n, v.arg()?, ctx, |x, ctx| fit_decimal(*x, to_ft, ctx).map(Some))
        }
        (T::Decimal, T::Bytes) => map1::<DecT, BytesT>(n, v.arg()?, ctx, |x, _| {
            let mut s = Vec::new();
            x.write_str(&mut s);
            Ok(Some(s))
        }),
        (T::Bytes, T::Int) => {
            map1::<BytesT, IntT>(n, v.arg()?, ctx, |x, ctx| str_to_int(x, tu, ctx).map(Some))
        }
        (T::Bytes, T::Real) => {
            map1::<BytesT, RealT>(n, v.arg()?, ctx, |x, ctx| str_to_real(x, ctx).map(Some))
        }
        (T::Bytes, T::Decimal) => map1::<BytesT, DecT>(n, v.arg()?, ctx, |x, ctx| {
            let d = match Decimal::parse_bytes(trim_space(x)) {
                Ok(Res::Ok(d)) => d,
                Ok(Res::Truncated(d)) => {
                    ctx.truncated(truncated("DECIMAL", x))?;
                    d
                }
                Ok(Res::Overflow(d)) => {
                    ctx.overflow(Error::Overflow("DECIMAL"))?;
                    d
                }
                Err(_) => {
                    ctx.truncated(truncated("DECIMAL", x))?;
                    Decimal::zero()
                }
            };
            fit_decimal(d, to_ft, ctx).map(Some)
        }),
        (T::Bytes, T::Bytes) => {
            map1::<BytesT, BytesT>(n, v.arg()?, ctx, |x, _| Ok(Some(x.to_vec())))
        }
        (T::Bytes, T::DateTime) => map1::<BytesT, TimeT>(n, v.arg()?, ctx, |x, ctx| {
            let s = String::from_utf8_lossy(x);
            match Time::parse(s.trim(), to_ft.time_type(), to_ft.fsp()) {
                Ok(t) => Ok(Some(t)),
                Err(_) => {
                    ctx.truncated(truncated("time", x))?;
                    Ok(None)
                }
            }
        }),
        (T::Bytes, T::Duration) => map1::<BytesT, DurT>(n, v.arg()?, ctx, |x, ctx| {
            let s = String::from_utf8_lossy(x);
            match Duration::parse(s.trim(), to_ft.fsp()) {
                Ok(d) => Ok(Some(d)),
                Err(_) => {
                    ctx.truncated(truncated("time", x))?;
                    Ok(None)
                }
            }
        }),
        (T::DateTime, T::Int) => map1::<TimeT, IntT>(n, v.arg()?, ctx, |t, _| {
            let r = t.round_frac(0)?;
            Ok(Some(time_number(&r) as i64))
        }),
        (T::DateTime, T::Real) => {
            map1::<TimeT, RealT>(n, v.arg()?, ctx, |t, _| Ok(Some(time_decimal(&t)?.as_f64())))
        }
        (T::DateTime, T::Decimal) => map1::<TimeT, DecT>(n, v.arg()?, ctx, |t, ctx| {
            fit_decimal(time_decimal(&t)?, to_ft, ctx).map(Some)
        }),
        (T::DateTime, T::Bytes) => map1::<TimeT, BytesT>(n, v.arg()?, ctx, |t, _| {
            let mut s = Vec::new();
            t.write_str(&mut s);
            Ok(Some(s))
        }),
        (T::DateTime, T::DateTime) => map1::<TimeT, TimeT>(n, v.arg()?, ctx, |t, _| {
            Ok(Some(t.with_type(to_ft.time_type(), to_ft.fsp())?))
        }),
        (T::Duration, T::Int) => map1::<DurT, IntT>(n, v.arg()?, ctx, |d, _| {
            let r = d.round_frac(0)?;
            Ok(Some(duration_number(&r)))
        }),
        (T::Duration, T::Real) => {
            map1::<DurT, RealT>(n, v.arg()?, ctx, |d, _| Ok(Some(duration_decimal(&d)?.as_f64())))
        }
        (T::Duration, T::Decimal) => map1::<DurT, DecT>(n, v.arg()?, ctx, |d, ctx| {
            fit_decimal(duration_decimal(&d)?, to_ft, ctx).map(Some)
        }),
        (T::Duration, T::Bytes) => map1::<DurT, BytesT>(n, v.arg()?, ctx, |d, _| {
            let mut s = Vec::new();
            d.write_str(&mut s);
            Ok(Some(s))
        }),
        (T::Duration, T::Duration) => {
            map1::<DurT, DurT>(n, v.arg()?, ctx, |d, _| Ok(Some(d.round_frac(to_ft.fsp())?)))
        }
        (T::Int, T::DateTime) => map1::<IntT, TimeT>(n, v.arg()?, ctx, |x, ctx| {
            let s = if fu { (x as u64).to_string() } else { x.to_string() };
            num_to_time(&s, to_ft, ctx)
        }),
        (T::Real, T::DateTime) => map1::<RealT, TimeT>(n, v.arg()?, ctx, |x, ctx| {
            num_to_time(&format!("{x}"), to_ft, ctx)
        }),
        (T::Decimal, T::DateTime) => {
            map1::<DecT, TimeT>(n, v.arg()?, ctx, |x, ctx| num_to_time(&x.to_string(), to_ft, ctx))
        }
        (T::Int, T::Duration) => map1::<IntT, DurT>(n, v.arg()?, ctx, |x, ctx| {
            num_to_duration(&x.to_string(), to_ft, ctx)
        }),
        (T::Real, T::Duration) => map1::<RealT, DurT>(n, v.arg()?, ctx, |x, ctx| {
            num_to_duration(&format!("{x}"), to_ft, ctx)
        }),
        (T::Decimal, T::Duration) => map1::<DecT, DurT>(n, v.arg()?, ctx, |x, ctx| {
            num_to_duration(&x.to_string(), to_ft, ctx)
        }),
        (T::DateTime, T::Duration) => map1::<TimeT, DurT>(n, v.arg()?, ctx, |t, _| {
            // The time-of-day part of the value rounded to the target precision.
            let t = t.round_frac(to_ft.fsp())?;
            let nanos = ((i64::from(t.hour()) * 60 + i64::from(t.minute())) * 60
                + i64::from(t.second()))
                * 1_000_000_000
                + i64::from(t.micro()) * 1_000;
            Ok(Some(Duration::from_nanos(nanos, to_ft.fsp())?))
        }),
        (T::Duration, T::DateTime) => {
            // MySQL adds the duration to the session's current date.
            let today = Time::today(&ctx.cfg.tz)?;
            let (tp, fsp) = (to_ft.time_type(), to_ft.fsp());
            map1::<DurT, TimeT>(n, v.arg()?, ctx, |d, _| Ok(Some(today.add_duration(&d, tp, fsp)?)))
        }
        // Casts to and from JSON live in `expr/json.rs`; ENUM casts are not supported.
        (T::Json | T::Enum, _) | (_, T::Json | T::Enum) => {
            Err(Error::invalid(format!("no cast from {from:?} to {to:?} here")))
        }
    }
}

/// A number (as its decimal text) read as a date/time in MySQL's numeric form
/// (`YYYYMMDD`, `YYYYMMDDhhmmss[.f]`, `YYMMDD` …); an invalid one is NULL after a truncation.
fn num_to_time(s: &str, to_ft: &FieldType, ctx: &mut EvalContext) -> Result<Option<Time>> {
    if s == "0" {
        return Ok(Some(Time::zero(to_ft.time_type(), to_ft.fsp())?));
    }
    match Time::parse(s, to_ft.time_type(), to_ft.fsp()) {
        Ok(t) => Ok(Some(t)),
        Err(_) => {
            ctx.truncated(truncated("time", s.as_bytes()))?;
            Ok(None)
        }
    }
}

/// A number read as a duration in MySQL's numeric form (`hhmmss[.f]`).
fn num_to_duration(s: &str, to_ft: &FieldType, ctx: &mut EvalContext) -> Result<Option<Duration>> {
    match Duration::parse(s, to_ft.fsp()) {
        Ok(d) => Ok(Some(d)),
        Err(_) => {
            ctx.truncated(truncated("time", s.as_bytes()))?;
            Ok(None)
        }
    }
}

fn truncated(what: &'static str, v: &[u8]) -> Error {
    let s = String::from_utf8_lossy(v.get(..v.len().min(64)).unwrap_or(v)).into_owned();
    Error::Truncated { what, value: s }
}

fn trim_space(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |e| e + 1);
    s.get(start..end).unwrap_or(&[])
}

/// Rounds a decimal to the target's fraction digits and clamps it to its precision
/// (overflow handled by the context).
pub fn fit_decimal(d: Decimal, ft: &FieldType, ctx: &mut EvalContext) -> Result<Decimal> {
    let (flen, frac) = (ft.flen, ft.decimal);
    if !(1..=65).contains(&flen) || !(0..=30).contains(&frac) || frac > flen {
        return Ok(d);
    }
    let rounded = dec_res(d.round(frac as i8, RoundMode::HalfUp))?;
    let int_digits = i32::from(rounded.int_cnt());
    if int_digits > flen - frac {
        ctx.overflow(Error::Overflow("DECIMAL"))?;
        let max = Decimal::max_for(flen as u8, frac as u8);
        return Ok(if d.is_negative() { -max } else { max });
    }
    Ok(rounded)
}

fn real_to_int(x: f64, unsigned: bool, ctx: &mut EvalContext) -> Result<i64> {
    let r = x.round();
    if unsigned {
        if r < 0.0 {
            ctx.overflow(Error::Overflow("BIGINT UNSIGNED"))?;
            return Ok(0);
        }
        if r >= 18_446_744_073_709_551_616.0 {
            ctx.overflow(Error::Overflow("BIGINT UNSIGNED"))?;
            return Ok(-1);
        }
        Ok(r as u64 as i64)
    } else {
        if r < -9_223_372_036_854_775_808.0 {
            ctx.overflow(Error::Overflow("BIGINT"))?;
            return Ok(i64::MIN);
        }
        if r >= 9_223_372_036_854_775_808.0 {
            ctx.overflow(Error::Overflow("BIGINT"))?;
            return Ok(i64::MAX);
        }
        Ok(r as i64)
    }
}

fn dec_to_int(d: &Decimal, unsigned: bool, ctx: &mut EvalContext) -> Result<i64> {
    if unsigned {
        if d.is_negative() {
            ctx.overflow(Error::Overflow("BIGINT UNSIGNED"))?;
            return Ok(0);
        }
        match d.as_u64() {
            Res::Overflow(_) => {
                ctx.overflow(Error::Overflow("BIGINT UNSIGNED"))?;
                Ok(-1)
            }
            r => Ok(r.value() as i64),
        }
    } else {
        match d.as_i64() {
            Res::Overflow(_) => {
                ctx.overflow(Error::Overflow("BIGINT"))?;
                Ok(if d.is_negative() { i64::MIN } else { i64::MAX })
            }
            r => Ok(r.value()),
        }
    }
}

/// MySQL's string-to-integer conversion: leading spaces, a sign, digits; anything after the
/// digits is a truncation.
fn str_to_int(s: &[u8], unsigned: bool, ctx: &mut EvalContext) -> Result<i64> {
    let t = trim_space(s);
    let (neg, digits) = match t.first() {
        Some(b'-') => (true, t.get(1..).unwrap_or(&[])),
        Some(b'+') => (false, t.get(1..).unwrap_or(&[])),
        _ => (false, t),
    };
    let end = digits.iter().position(|b| !b.is_ascii_digit()).unwrap_or(digits.len());
    if end != digits.len() || end == 0 {
        ctx.truncated(truncated("INTEGER", s))?;
    }
    let mut v: i128 = 0;
    for &b in digits.get(..end).unwrap_or(&[]) {
        v = v * 10 + i128::from(b - b'0');
        if v > i128::from(u64::MAX) {
            ctx.overflow(Error::Overflow(if unsigned { "BIGINT UNSIGNED" } else { "BIGINT" }))?;
            return Ok(match (unsigned, neg) {
                (true, _) => -1,
                (false, true) => i64::MIN,
                (false, false) => i64::MAX,
            });
        }
    }
    if neg {
        v = -v;
    }
    if unsigned {
        if v < 0 {
            // MySQL wraps a negative string into the unsigned range.
            return Ok(v as i64);
        }
        return Ok(v as u64 as i64);
    }
    match i64::try_from(v) {
        Ok(x) => Ok(x),
        Err(_) => {
            ctx.overflow(Error::Overflow("BIGINT"))?;
            Ok(if neg { i64::MIN } else { i64::MAX })
        }
    }
}

/// The longest prefix of `s` that parses as a float; the rest is a truncation.
fn str_to_real(s: &[u8], ctx: &mut EvalContext) -> Result<f64> {
    let t = trim_space(s);
    let end = float_prefix_len(t);
    let v = t.get(..end).and_then(|p| std::str::from_utf8(p).ok()).and_then(|p| p.parse().ok());
    match v {
        Some(v) if end == t.len() => Ok(v),
        Some(v) => {
            ctx.truncated(truncated("DOUBLE", s))?;
            Ok(v)
        }
        None => {
            ctx.truncated(truncated("DOUBLE", s))?;
            Ok(0.0)
        }
    }
}

/// Length of the longest prefix of `t` of the form `[+-] digits [. digits] [e [+-] digits]`
/// (at least one digit before the exponent), found in one pass: trying every prefix with
/// `str::parse` was quadratic in the string's length.
fn float_prefix_len(t: &[u8]) -> usize {
    let digits_from = |mut i: usize| {
        while t.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let start = usize::from(matches!(t.first(), Some(b'+' | b'-')));
    let mut end = digits_from(start);
    let mut ndigits = end - start;
    if t.get(end) == Some(&b'.') {
        let frac_end = digits_from(end + 1);
        ndigits += frac_end - (end + 1);
        end = frac_end;
    }
    if ndigits == 0 {
        return 0;
    }
    if matches!(t.get(end), Some(b'e' | b'E')) {
        let exp_start = end + 1 + usize::from(matches!(t.get(end + 1), Some(b'+' | b'-')));
        let exp_end = digits_from(exp_start);
        if exp_end > exp_start {
            end = exp_end;
        }
    }
    end
}

/// Formats a double the way TiDB prints it: plain notation for moderate magnitudes,
/// exponent notation otherwise.
pub fn real_to_string(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 || (1e-4..1e15).contains(&a) {
        format!("{x}")
    } else {
        let s = format!("{x:e}");
        match s.split_once('e') {
            Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
            _ => s,
        }
    }
}

fn time_number(t: &Time) -> u64 {
    let ymd = u64::from(t.year()) * 10_000 + u64::from(t.month()) * 100 + u64::from(t.day());
    if t.time_type() == rcop_datum::TimeType::Date {
        return ymd;
    }
    ymd * 1_000_000
        + u64::from(t.hour()) * 10_000
        + u64::from(t.minute()) * 100
        + u64::from(t.second())
}

fn time_decimal(t: &Time) -> Result<Decimal> {
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

fn duration_number(d: &Duration) -> i64 {
    let v = i64::from(d.hours()) * 10_000 + i64::from(d.minutes()) * 100 + i64::from(d.seconds());
    if d.is_neg() { -v } else { v }
}

fn duration_decimal(d: &Duration) -> Result<Decimal> {
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

#[cfg(test)]
mod tests {

    #[test]
    fn float_prefixes() {
        let cases: [(&str, usize); 12] = [
            ("1.5e3x", 5),
            ("-.5", 3),
            ("+1.", 3),
            (".", 0),
            ("-", 0),
            ("e5", 0),
            ("1e", 1),
            ("1e+", 1),
            ("12abc", 2),
            ("0x1A", 1),
            ("", 0),
            ("3.25E-2 ", 7),
        ];
        for (s, n) in cases {
            assert_eq!(super::float_prefix_len(s.as_bytes()), n, "{s:?}");
        }
        // A megabyte of digits then junk is one linear pass.
        let long = format!("{}{}", "1".repeat(1 << 20), "z".repeat(1 << 20));
        assert_eq!(super::float_prefix_len(long.as_bytes()), 1 << 20);
    }

    use super::*;

    #[test]
    fn string_to_int_and_real() {
        let mut ctx = EvalContext::default();
        assert_eq!(str_to_int(b" 42", false, &mut ctx).unwrap(), 42);
        assert_eq!(str_to_int(b"-7", false, &mut ctx).unwrap(), -7);
        assert!(str_to_int(b"12abc", false, &mut ctx).is_err());
        let mut warn = EvalContext::new(crate::ctx::EvalConfig {
            flags: crate::ctx::FLAG_TRUNCATE_AS_WARNING,
            ..Default::default()
        });
        assert_eq!(str_to_int(b"12abc", false, &mut warn).unwrap(), 12);
        assert_eq!(str_to_real(b"1.5e2x", &mut warn).unwrap(), 150.0);
        assert_eq!(warn.take_warnings().1, 2);
        assert_eq!(real_to_string(1.5), "1.5");
        assert_eq!(real_to_string(1e21), "1e+21");
    }

    #[test]
    fn decimal_fit() {
        let mut ctx = EvalContext::default();
        let ft = FieldType { flen: 4, decimal: 2, ..FieldType::new(mt::NEW_DECIMAL) };
        let d: Decimal = "1.235".parse().unwrap();
        assert_eq!(fit_decimal(d, &ft, &mut ctx).unwrap().to_string(), "1.24");
        let big: Decimal = "123.4".parse().unwrap();
        assert!(fit_decimal(big, &ft, &mut ctx).is_err());
    }
}
