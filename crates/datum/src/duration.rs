//! MySQL `TIME` values ("durations"): signed nanoseconds within ±838:59:59 plus a precision.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use crate::error::{Error, Result};
use crate::time::{MAX_FSP, Time, TimeType};

const NANOS_PER_SEC: i64 = 1_000_000_000;
const NANOS_PER_MICRO: i64 = 1_000;
/// The largest hour a `TIME` can show.
const MAX_HOURS: u64 = 838;

/// The largest magnitude of a `TIME`, `838:59:59`, in nanoseconds (MySQL's and TiKV's bound; a
/// fraction above it, such as `838:59:59.5`, is out of range).
pub const MAX_NANOS: i64 =
    838 * 3600 * 1_000_000_000 + 59 * 60 * 1_000_000_000 + 59 * 1_000_000_000;

/// Powers of ten up to 10^9.
const POW10: [i64; 10] =
    [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000];

fn check_fsp(fsp: u8) -> Result<u8> {
    if fsp > MAX_FSP {
        Err(Error::Invalid { what: "fsp", reason: "fractional seconds precision above 6" })
    } else {
        Ok(fsp)
    }
}

fn check_range(nanos: i64) -> Result<i64> {
    if (-MAX_NANOS..=MAX_NANOS).contains(&nanos) {
        Ok(nanos)
    } else {
        Err(Error::Overflow { what: "time" })
    }
}

/// Rounds `nanos` to `fsp` fractional digits, half away from zero (MySQL rounds the magnitude),
/// and checks the range before and after.
fn round_nanos(nanos: i64, fsp: u8) -> Result<i64> {
    let nanos = check_range(nanos)?;
    let step = POW10.get(9 - usize::from(fsp.min(MAX_FSP))).copied().unwrap_or(1);
    let rem = nanos % step;
    let truncated = nanos - rem;
    let rounded = if rem.abs() * 2 >= step { truncated + step * nanos.signum() } else { truncated };
    check_range(rounded)
}

/// A MySQL `TIME` value: signed nanoseconds in `-838:59:59 ..= 838:59:59` and a fractional
/// seconds precision 0..=6. The nanoseconds are always rounded to the precision.
///
/// Equality, ordering and hashing look at the nanoseconds only.
#[derive(Clone, Copy)]
pub struct Duration {
    nanos: i64,
    fsp: u8,
}

impl Duration {
    /// `00:00:00` with precision 0.
    pub fn zero() -> Duration {
        Duration { nanos: 0, fsp: 0 }
    }

    /// A duration of `nanos` nanoseconds, rounded half away from zero to `fsp` digits (as TiKV
    /// does when it decodes a stored duration).
    ///
    /// Errors: [`Error::Invalid`] if `fsp > 6`, [`Error::Overflow`] outside ±838:59:59.
    pub fn from_nanos(nanos: i64, fsp: u8) -> Result<Duration> {
        let fsp = check_fsp(fsp)?;
        Ok(Duration { nanos: round_nanos(nanos, fsp)?, fsp })
    }

    /// A duration from its fields, rounded to `fsp` digits.
    ///
    /// Errors: [`Error::Invalid`] for minutes or seconds above 59, micros above 999999 or
    /// `fsp > 6`; [`Error::Overflow`] outside ±838:59:59.
    pub fn from_parts(
        neg: bool,
        hours: u32,
        minutes: u32,
        seconds: u32,
        micros: u32,
        fsp: u8,
    ) -> Result<Duration> {
        if minutes > 59 || seconds > 59 {
            return Err(Error::Invalid { what: "time", reason: "minutes or seconds above 59" });
        }
        if micros > 999_999 {
            return Err(Error::Invalid { what: "time", reason: "microseconds above 999999" });
        }
        let frac = i64::from(micros) * NANOS_PER_MICRO;
        Duration::from_fields(neg, u64::from(hours), minutes, seconds, frac, fsp)
    }

    /// Builds from checked minutes, seconds and fraction (nanoseconds); checks the hours.
    fn from_fields(
        neg: bool,
        hours: u64,
        minutes: u32,
        seconds: u32,
        frac: i64,
        fsp: u8,
    ) -> Result<Duration> {
        let fsp = check_fsp(fsp)?;
        if hours > MAX_HOURS {
            return Err(Error::Overflow { what: "time" });
        }
        // hours <= 838, so this cannot overflow an i64.
        let secs = (hours as i64 * 60 + i64::from(minutes)) * 60 + i64::from(seconds);
        let magnitude = secs * NANOS_PER_SEC + frac;
        Duration::from_nanos(if neg { -magnitude } else { magnitude }, fsp)
    }

    /// The signed nanoseconds.
    #[inline]
    pub fn nanos(&self) -> i64 {
        self.nanos
    }

    /// The fractional seconds precision, 0..=6.
    #[inline]
    pub fn fsp(&self) -> u8 {
        self.fsp
    }

    /// Whether the duration is negative.
    #[inline]
    pub fn is_neg(&self) -> bool {
        self.nanos < 0
    }

    /// The whole hours of the magnitude, 0..=838.
    #[inline]
    pub fn hours(&self) -> u32 {
        (self.nanos.unsigned_abs() / 3_600_000_000_000) as u32
    }

    /// The minutes of the magnitude, 0..=59.
    #[inline]
    pub fn minutes(&self) -> u32 {
        (self.nanos.unsigned_abs() / 60_000_000_000 % 60) as u32
    }

    /// The seconds of the magnitude, 0..=59.
    #[inline]
    pub fn seconds(&self) -> u32 {
        (self.nanos.unsigned_abs() / 1_000_000_000 % 60) as u32
    }

    /// The microseconds of the magnitude's fraction, 0..=999999.
    #[inline]
    pub fn micros(&self) -> u32 {
        (self.nanos.unsigned_abs() % 1_000_000_000 / 1_000) as u32
    }

    /// Parses MySQL's string forms of a `TIME`.
    ///
    /// Accepted, each with an optional leading `-` and an optional fraction `.f…`:
    /// `D HH[:MM[:SS]]` (days, whitespace, hours), `HH:MM[:SS]` (spaces around `:` allowed),
    /// the compact number `[[H…H]MM]SS` (`"101112"` is 10:11:12, `"1112"` 00:11:12, `"12"`
    /// 00:00:12), and a datetime (`"2010-02-12 12:23:34"`, `"20111111000001"`) whose time
    /// part is taken. The fraction is rounded half away from zero to `fsp` digits.
    ///
    /// Unlike MySQL in non-strict mode, trailing garbage is an error rather than a warning, and
    /// an out-of-range value is an error rather than clipped to ±838:59:59.
    ///
    /// Errors: [`Error::Invalid`] if `fsp > 6`, [`Error::Overflow`] outside ±838:59:59,
    /// [`Error::Parse`] otherwise (minutes or seconds above 59 included).
    pub fn parse(s: &str, fsp: u8) -> Result<Duration> {
        let fsp = check_fsp(fsp)?;
        let parse_err = || crate::error::parse_error("time", s);
        let trimmed = s.trim_matches(|c: char| c.is_ascii_whitespace());
        let (neg, body) = match trimmed.strip_prefix('-') {
            Some(rest) => (true, rest.trim_start_matches(|c: char| c.is_ascii_whitespace())),
            None => (false, trimmed),
        };
        let bytes = body.as_bytes();
        let datetime_shape = datetime_shape(bytes);
        if datetime_shape == Some(DatetimeShape::Digits) {
            return if neg {
                Err(parse_err())
            } else {
                from_datetime(body, fsp).ok_or_else(parse_err)
            };
        }
        match parse_body(bytes, fsp) {
            Some(b) => {
                if b.minutes > 59 || b.seconds > 59 {
                    return Err(parse_err());
                }
                Duration::from_fields(neg, b.hours, b.minutes as u32, b.seconds as u32, b.frac, fsp)
            }
            None if datetime_shape.is_some() && !neg => {
                from_datetime(body, fsp).ok_or_else(parse_err)
            }
            None => Err(parse_err()),
        }
    }

    /// Rounds the fraction half away from zero to `fsp` digits and sets the precision.
    ///
    /// Errors: [`Error::Invalid`] if `fsp > 6`, [`Error::Overflow`] if rounding leaves the range.
    pub fn round_frac(&self, fsp: u8) -> Result<Duration> {
        let fsp = check_fsp(fsp)?;
        Ok(Duration { nanos: round_nanos(self.nanos, fsp)?, fsp })
    }

    /// Writes `[-]HH:MM:SS` (three hour digits from 100 hours) followed by `.` and `fsp`
    /// fraction digits when `fsp > 0`.
    pub fn write_str(&self, out: &mut Vec<u8>) {
        let mut buf = [0u8; 18];
        let len = self.format_into(&mut buf);
        out.extend_from_slice(buf.get(..len).unwrap_or(&buf));
    }

    fn format_into(&self, buf: &mut [u8; 18]) -> usize {
        let mut pos = 0;
        if self.is_neg() {
            buf[0] = b'-';
            pos = 1;
        }
        let hours = self.hours();
        let hour_digits = if hours >= 100 { 3 } else { 2 };
        crate::time::put_digits(&mut buf[pos..pos + hour_digits], hours);
        pos += hour_digits;
        buf[pos] = b':';
        crate::time::put_digits(&mut buf[pos + 1..pos + 3], self.minutes());
        buf[pos + 3] = b':';
        crate::time::put_digits(&mut buf[pos + 4..pos + 6], self.seconds());
        pos += 6;
        let fsp = usize::from(self.fsp.min(MAX_FSP));
        if fsp > 0 {
            buf[pos] = b'.';
            let digits = self.micros() / (POW10[6 - fsp] as u32);
            crate::time::put_digits(&mut buf[pos + 1..pos + 1 + fsp], digits);
            pos += 1 + fsp;
        }
        pos
    }
}

/// The fields of a parsed duration body, before range checks.
struct Body {
    hours: u64,
    minutes: u64,
    seconds: u64,
    /// The fraction in nanoseconds, from at most `fsp + 1` digits.
    frac: i64,
}

/// A run of digits as a saturating number, and the rest.
fn number(input: &[u8]) -> Option<(u64, &[u8])> {
    let len = input.iter().position(|c| !c.is_ascii_digit()).unwrap_or(input.len());
    if len == 0 {
        return None;
    }
    let (digits, rest) = input.split_at(len);
    let value = digits
        .iter()
        .fold(0u64, |acc, d| acc.saturating_mul(10).saturating_add(u64::from(d - b'0')));
    Some((value, rest))
}

fn skip_spaces(input: &[u8]) -> &[u8] {
    let len = input.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(input.len());
    input.get(len..).unwrap_or_default()
}

/// `space* ':' space*`, returning the rest.
fn colon(input: &[u8]) -> Option<&[u8]> {
    skip_spaces(input).strip_prefix(b":").map(skip_spaces)
}

/// `HH[:MM[:SS]]`; with `require_colon`, at least `HH:MM`.
fn delimited(input: &[u8], require_colon: bool) -> Option<([u64; 3], &[u8])> {
    let (hours, mut rest) = number(input)?;
    let mut hms = [hours, 0, 0];
    let mut colons = 0;
    for slot in hms.iter_mut().skip(1) {
        let Some(after) = colon(rest) else { break };
        let (value, after) = number(after)?;
        *slot = value;
        rest = after;
        colons += 1;
    }
    if require_colon && colons == 0 {
        return None;
    }
    Some((hms, rest))
}

fn digits_len(input: &[u8]) -> usize {
    input.iter().position(|c| !c.is_ascii_digit()).unwrap_or(input.len())
}

/// The time fields and fraction of a duration body (without sign), or `None` if the syntax is
/// wrong or something follows.
fn parse_body(input: &[u8], fsp: u8) -> Option<Body> {
    // `D HH[:MM[:SS]]`, then `HH:MM[:SS]`, then the compact `HHMMSS` number.
    let day_form = number(input).and_then(|(days, rest)| {
        let after = skip_spaces(rest);
        if after.len() == rest.len() {
            return None;
        }
        let ([h, m, s], rest) = delimited(after, false)?;
        Some(([days.saturating_mul(24).saturating_add(h), m, s], rest))
    });
    let (hms, rest) = match day_form {
        Some(found) => found,
        None => match delimited(input, true) {
            Some(found) => found,
            None => {
                let (n, rest) = number(input)?;
                ([n / 10_000, n / 100 % 100, n % 100], rest)
            }
        },
    };
    let rest = skip_spaces(rest);
    let frac = match rest.strip_prefix(b".") {
        Some(after) => {
            let len = digits_len(after);
            if len != after.len() {
                return None;
            }
            let kept = after.get(..len.min(usize::from(fsp) + 1)).unwrap_or_default();
            let value = kept.iter().fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
            value * POW10.get(9 - kept.len()).copied()?
        }
        None if rest.is_empty() => 0,
        None => return None,
    };
    let [hours, minutes, seconds] = hms;
    Some(Body { hours, minutes, seconds, frac })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DatetimeShape {
    /// 12 or 14 leading digits (`YYMMDDHHMMSS`, `YYYYMMDDHHMMSS`).
    Digits,
    /// `d+ P d+ P d+` followed by `T` or a space.
    Delimited,
}

/// Whether a duration string may be a datetime, by TiKV's rule.
fn datetime_shape(input: &[u8]) -> Option<DatetimeShape> {
    let len = digits_len(input);
    if len == 12 || len == 14 {
        return Some(DatetimeShape::Digits);
    }
    let mut rest = input.get(len..)?;
    if len == 0 {
        return None;
    }
    for _ in 0..2 {
        let (&sep, after) = rest.split_first()?;
        if !sep.is_ascii_punctuation() {
            return None;
        }
        let n = digits_len(after);
        if n == 0 {
            return None;
        }
        rest = after.get(n..)?;
    }
    matches!(rest.first(), Some(b'T' | b' ')).then_some(DatetimeShape::Delimited)
}

/// The time part of a datetime string, as a duration.
fn from_datetime(s: &str, fsp: u8) -> Option<Duration> {
    let t = Time::parse(s, TimeType::DateTime, fsp).ok()?;
    Duration::from_parts(false, t.hour(), t.minute(), t.second(), t.micro(), fsp).ok()
}

impl PartialEq for Duration {
    fn eq(&self, other: &Duration) -> bool {
        self.nanos == other.nanos
    }
}

impl Eq for Duration {}

impl PartialOrd for Duration {
    fn partial_cmp(&self, other: &Duration) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Duration {
    fn cmp(&self, other: &Duration) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}

impl Hash for Duration {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.nanos.hash(state);
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 18];
        let len = self.format_into(&mut buf);
        let text = buf.get(..len).and_then(|b| std::str::from_utf8(b).ok()).ok_or(fmt::Error)?;
        f.write_str(text)
    }
}

impl fmt::Debug for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Duration")
            .field("value", &format_args!("{self}"))
            .field("nanos", &self.nanos)
            .field("fsp", &self.fsp)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_nanos_is_838_59_59() {
        assert_eq!(MAX_NANOS, 3_020_399 * NANOS_PER_SEC);
        assert_eq!(Duration::from_nanos(MAX_NANOS, 0).unwrap().to_string(), "838:59:59");
        assert_eq!(Duration::from_nanos(-MAX_NANOS, 6).unwrap().to_string(), "-838:59:59.000000");
        assert_eq!(Duration::from_nanos(MAX_NANOS + 1, 6), Err(Error::Overflow { what: "time" }));
    }

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(round_nanos(1_500_000_000, 0), Ok(2_000_000_000));
        assert_eq!(round_nanos(-1_500_000_000, 0), Ok(-2_000_000_000));
        assert_eq!(round_nanos(-1_499_999_999, 0), Ok(-1_000_000_000));
        assert_eq!(round_nanos(123_456_500, 6), Ok(123_457_000));
        assert_eq!(round_nanos(MAX_NANOS + 400, 6), Err(Error::Overflow { what: "time" }));
    }

    #[test]
    fn body_forms() {
        let body =
            |s: &str| parse_body(s.as_bytes(), 6).map(|b| (b.hours, b.minutes, b.seconds, b.frac));
        assert_eq!(body("1 10:11:12"), Some((34, 11, 12, 0)));
        assert_eq!(body("10:11"), Some((10, 11, 0, 0)));
        assert_eq!(body("101112.5"), Some((10, 11, 12, 500_000_000)));
        assert_eq!(body("1 .123"), Some((0, 0, 1, 123_000_000)));
        assert_eq!(body("1::2"), None);
        assert_eq!(body("12x"), None);
    }

    #[test]
    fn datetime_shapes() {
        assert_eq!(datetime_shape(b"201112110102"), Some(DatetimeShape::Digits));
        assert_eq!(datetime_shape(b"2010-02-12 12:23:34"), Some(DatetimeShape::Delimited));
        assert_eq!(datetime_shape(b"2010-02-12T12:23:34"), Some(DatetimeShape::Delimited));
        assert_eq!(datetime_shape(b"2010-02-12t12:23:34"), None);
        assert_eq!(datetime_shape(b"2010-02-12"), None);
    }
}
