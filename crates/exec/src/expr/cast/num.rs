//! Casts to numbers: strings, reals and decimals to INT and strings to DOUBLE, with TiKV's
//! clamping, wrapping and warning codes.

use rcop_datum::{Decimal, Res};

use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::types::FieldType;

use super::{trim_space, truncated};

/// A double to BIGINT: rounded half away from zero (TiKV's `f64::round`; MySQL 8 uses `rint`,
/// half to even, for a DOUBLE column), clamped with an overflow past the range.
pub(super) fn real_to_int(x: f64, unsigned: bool, ctx: &mut EvalContext) -> Result<i64> {
    let r = x.round();
    if unsigned {
        if r < 0.0 {
            // TiKV keeps the two's complement unless an INSERT clips it to zero.
            ctx.overflow(Error::Overflow("BIGINT UNSIGNED"))?;
            let clip = ctx.cfg.flags & crate::ctx::FLAG_IN_INSERT_STMT != 0;
            return Ok(if clip { 0 } else { r as i64 });
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

/// An integral (already rounded) decimal to BIGINT: an overflow is a warning with code 1292
/// (TiKV's `truncated_wrong_val("DECIMAL")`) and the bound of the range.
pub(super) fn dec_to_int(d: &Decimal, unsigned: bool, ctx: &mut EvalContext) -> Result<i64> {
    let over = |ctx: &mut EvalContext| ctx.overflow(truncated("DECIMAL", d.to_string().as_bytes()));
    if unsigned {
        if d.is_negative() {
            // `as_u64` of a negative decimal overflows: 0 after the warning.
            over(ctx)?;
            return Ok(0);
        }
        match d.as_u64() {
            Res::Overflow(_) => {
                over(ctx)?;
                Ok(-1)
            }
            r => Ok(r.value() as i64),
        }
    } else {
        match d.as_i64() {
            Res::Overflow(_) => {
                over(ctx)?;
                Ok(if d.is_negative() { i64::MIN } else { i64::MAX })
            }
            r => Ok(r.value()),
        }
    }
}

/// TiKV's `cast_string_as_int`: both ends trimmed, the longest `[+-]digits` prefix (anything
/// after it a truncation); a positive value above the signed range wraps to its negative
/// complement and a negative one cast to UNSIGNED wraps to its positive complement, each with
/// warning 1105; a value past 64 bits is clamped with warning 1292.
///
/// With `neg_to_zero` (an UNSIGNED cast in a union), a negative string is 0 with no warning.
pub(super) fn str_to_int(
    s: &[u8],
    unsigned: bool,
    neg_to_zero: bool,
    ctx: &mut EvalContext,
) -> Result<i64> {
    let valid = valid_utf8_prefix(s, ctx)?;
    let t = trim_space(valid);
    let neg = t.first() == Some(&b'-');
    if neg && neg_to_zero {
        return Ok(0);
    }
    let sign = usize::from(matches!(t.first(), Some(b'+' | b'-')));
    let digits = t.get(sign..).unwrap_or(&[]);
    let end = digits.iter().position(|b| !b.is_ascii_digit()).unwrap_or(digits.len());
    if end == 0 || end != digits.len() {
        ctx.truncated(truncated("INTEGER", t))?;
    }
    let mut v: u128 = 0;
    let mut overflow = false;
    for &b in digits.get(..end).unwrap_or(&[]) {
        v = v * 10 + u128::from(b - b'0');
        if v > u128::from(u64::MAX) {
            overflow = true;
            break;
        }
    }
    let too_big = if neg { overflow || v > 1 << 63 } else { overflow };
    if too_big {
        if ctx.cfg.flags & crate::ctx::FLAG_OVERFLOW_AS_WARNING == 0 {
            return Err(Error::Overflow(if neg { "BIGINT UNSIGNED" } else { "BIGINT" }));
        }
        ctx.warn(&truncated("INTEGER", t));
        return Ok(if neg { i64::MIN } else { -1 });
    }
    if neg {
        let x = (v as u64).wrapping_neg() as i64;
        if unsigned && x != 0 {
            ctx.warn(&Error::CastNegIntAsUnsigned);
        }
        return Ok(x);
    }
    if !unsigned && v > i64::MAX as u128 {
        ctx.warn(&Error::CastAsSignedOverflow);
    }
    Ok(v as u64 as i64)
}

/// A constant binary string (`x'010203'`, `b'…'`) as an unsigned integer, big-endian:
/// TiKV's `binary_literal::to_uint` (more than 8 significant bytes overflow).
pub(super) fn binary_to_uint(s: &[u8], ctx: &mut EvalContext) -> Result<i64> {
    let start = s.iter().position(|&b| b != 0).unwrap_or(s.len());
    let sig = s.get(start..).unwrap_or(&[]);
    if sig.len() > 8 {
        ctx.overflow(Error::Overflow("BIGINT UNSIGNED"))?;
        return Ok(-1);
    }
    Ok(sig.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b)) as i64)
}

/// The valid UTF-8 prefix of `s`; cutting invalid bytes is a truncation (TiKV's
/// `get_valid_utf8_prefix`).
fn valid_utf8_prefix<'a>(s: &'a [u8], ctx: &mut EvalContext) -> Result<&'a [u8]> {
    match std::str::from_utf8(s) {
        Ok(_) => Ok(s),
        Err(e) => {
            ctx.truncated(Error::DataTruncated)?;
            Ok(s.get(..e.valid_up_to()).unwrap_or(&[]))
        }
    }
}

/// TiKV's string-to-double: the longest float prefix (the rest a truncation, code 1292),
/// ±`f64::MAX` for a value past the range, 0 without a warning for the empty string.
pub(super) fn str_to_real(s: &[u8], ctx: &mut EvalContext) -> Result<f64> {
    if s.is_empty() {
        return Ok(0.0);
    }
    let valid = valid_utf8_prefix(s, ctx)?;
    let t = trim_space(valid);
    let end = float_prefix_len(t);
    if end == 0 || end != t.len() {
        ctx.truncated(truncated("DOUBLE", t))?;
    }
    let v: f64 = t
        .get(..end)
        .and_then(|p| std::str::from_utf8(p).ok())
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    if v.is_infinite() {
        ctx.truncated(truncated("DOUBLE", t))?;
        return Ok(if v < 0.0 { f64::MIN } else { f64::MAX });
    }
    Ok(v)
}

/// TiKV's `produce_float_with_specified_tp`: a DOUBLE(M,D) result rounded to D digits and
/// clamped to ±(10^(M−D) − 10^−D) with an overflow; an UNSIGNED one clips negatives to 0.
pub(super) fn fit_real(x: f64, ft: &FieldType, ctx: &mut EvalContext) -> Result<f64> {
    let mut r = x;
    if (1..=255).contains(&ft.flen) && (0..=255).contains(&ft.decimal) && ft.decimal <= ft.flen {
        let shift = 10f64.powi(ft.decimal);
        let max = 10f64.powi(ft.flen - ft.decimal) - 1.0 / shift;
        let scaled = r * shift;
        if scaled.is_finite() {
            r = scaled.round() / shift;
        }
        if r > max || r < -max {
            ctx.overflow(Error::Overflow("DOUBLE"))?;
            r = if r > 0.0 { max } else { -max };
        }
    }
    if ft.is_unsigned() && r < 0.0 {
        ctx.overflow(Error::Overflow("DOUBLE"))?;
        return Ok(0.0);
    }
    Ok(r)
}

/// Length of the longest prefix of `t` of the form `[+-] digits [. digits] [e [+-] digits]`
/// (at least one digit before the exponent), found in one pass: trying every prefix with
/// `str::parse` was quadratic in the string's length.
pub(super) fn float_prefix_len(t: &[u8]) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ctx::{EvalConfig, FLAG_OVERFLOW_AS_WARNING, FLAG_TRUNCATE_AS_WARNING};

    fn select() -> EvalContext {
        EvalContext::new(EvalConfig {
            flags: FLAG_TRUNCATE_AS_WARNING | FLAG_OVERFLOW_AS_WARNING,
            ..Default::default()
        })
    }

    fn codes(ctx: &mut EvalContext) -> Vec<i32> {
        ctx.take_warnings().0.iter().filter_map(|w| w.code).collect()
    }

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
            assert_eq!(float_prefix_len(s.as_bytes()), n, "{s:?}");
        }
        // A megabyte of digits then junk is one linear pass.
        let long = format!("{}{}", "1".repeat(1 << 20), "z".repeat(1 << 20));
        assert_eq!(float_prefix_len(long.as_bytes()), 1 << 20);
    }

    fn str_to_int_t(s: &[u8], unsigned: bool, ctx: &mut EvalContext) -> Result<i64> {
        str_to_int(s, unsigned, false, ctx)
    }

    #[test]
    fn string_to_int_as_tikv() {
        let mut ctx = EvalContext::default();
        assert_eq!(str_to_int_t(b" 42", false, &mut ctx).unwrap(), 42);
        assert_eq!(str_to_int_t(b"-7", false, &mut ctx).unwrap(), -7);
        assert!(str_to_int_t(b"12abc", false, &mut ctx).is_err());
        assert_eq!(
            str_to_int_t(b"18446744073709551616", false, &mut ctx),
            Err(Error::Overflow("BIGINT"))
        );
        let mut c = select();
        assert_eq!(str_to_int_t(b"12abc", false, &mut c).unwrap(), 12);
        assert_eq!(codes(&mut c), [1292]);
        // Wraps past the signed range, with TiKV's 1105.
        assert_eq!(str_to_int_t(b"9223372036854775808", false, &mut c).unwrap(), i64::MIN);
        assert_eq!(codes(&mut c), [1105]);
        assert_eq!(str_to_int_t(b"-1", true, &mut c).unwrap(), -1);
        assert_eq!(codes(&mut c), [1105]);
        assert_eq!(str_to_int_t(b"-0", true, &mut c).unwrap(), 0);
        assert_eq!(codes(&mut c), Vec::<i32>::new());
        // Past 64 bits: clamped, 1292.
        assert_eq!(str_to_int_t(b"-9223372036854775809", false, &mut c).unwrap(), i64::MIN);
        assert_eq!(str_to_int_t(b"18446744073709551616", true, &mut c).unwrap(), -1);
        assert_eq!(codes(&mut c), [1292, 1292]);
        assert_eq!(str_to_int_t(b" 12 ", false, &mut c).unwrap(), 12);
        assert_eq!(c.take_warnings().1, 0);
    }

    #[test]
    fn string_to_real_as_tikv() {
        let mut c = select();
        assert_eq!(str_to_real(b"1.5e2x", &mut c).unwrap(), 150.0);
        assert_eq!(str_to_real(b"1e309", &mut c).unwrap(), f64::MAX);
        assert_eq!(str_to_real(b"-1e309", &mut c).unwrap(), f64::MIN);
        assert_eq!(codes(&mut c), [1292, 1292, 1292]);
        assert_eq!(str_to_real(b"", &mut c).unwrap(), 0.0);
        assert_eq!(c.take_warnings().1, 0);
        let ft = FieldType { flen: 5, decimal: 2, ..FieldType::new(5) };
        assert_eq!(fit_real(1.235, &ft, &mut c).unwrap(), 1.24);
        assert_eq!(fit_real(-1234.5, &ft, &mut c).unwrap(), -999.99);
        assert_eq!(codes(&mut c), [1690]);
    }

    #[test]
    fn binary_literals() {
        let mut c = select();
        assert_eq!(binary_to_uint(&[1, 2, 3], &mut c).unwrap(), 66051);
        assert_eq!(binary_to_uint(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 1], &mut c).unwrap(), 1);
        assert_eq!(binary_to_uint(&[1; 9], &mut c).unwrap(), -1);
        assert_eq!(codes(&mut c), [1690]);
    }

    #[test]
    fn decimal_to_int_codes() {
        let mut c = select();
        let big: Decimal = "9223372036854775808".parse().unwrap();
        assert_eq!(dec_to_int(&big, false, &mut c).unwrap(), i64::MAX);
        assert_eq!(dec_to_int(&-Decimal::from_i64(1), true, &mut c).unwrap(), 0);
        assert_eq!(codes(&mut c), [1292, 1292]);
    }
}
