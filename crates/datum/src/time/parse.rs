//! The MySQL string-to-time parser (TiKV's and TiDB's rules, written from their test vectors).
//!
//! The input is split into runs of digits. A run is followed by one ASCII punctuation character,
//! or (only after the three date fields) by whitespace or `T`. One or two runs mean the
//! delimiter-free form (`YYYYMMDDHHMMSS[.f]`, `YYMMDD` …), three to seven runs the delimited form
//! (year, month, day, hour, minute, second, fraction). With two or seven runs the last one must
//! follow a `.`: it is the fraction.

use super::{POW10, Parts, Time, TimeType, last_day_of_month};

/// The most digit runs a datetime string can have.
const MAX_COMPONENTS: usize = 7;
/// Fraction digits kept: one more than the maximum fsp, enough to round half up.
const FRAC_DIGITS: usize = 7;

/// One run of digits and the byte that preceded it (0 for the first run).
#[derive(Clone, Copy)]
struct Component<'a> {
    digits: &'a [u8],
    sep_before: u8,
}

/// Splits `input` (trimmed, non-empty) into digit runs, or `None` if it is malformed.
fn split(input: &[u8]) -> Option<([Component<'_>; MAX_COMPONENTS], usize)> {
    let mut comps = [Component { digits: &[], sep_before: 0 }; MAX_COMPONENTS];
    let mut n = 0;
    let mut rest = input;
    let mut sep = 0u8;
    while !rest.is_empty() {
        let len = rest.iter().position(|c| !c.is_ascii_digit()).unwrap_or(rest.len());
        if len == 0 {
            return None;
        }
        let (digits, after) = rest.split_at(len);
        *comps.get_mut(n)? = Component { digits, sep_before: sep };
        n += 1;
        rest = after;
        let Some(&c) = rest.first() else { break };
        if c.is_ascii_whitespace() {
            if n != 3 {
                return None;
            }
            let ws = rest.iter().position(|c| !c.is_ascii_whitespace()).unwrap_or(rest.len());
            rest = rest.get(ws..)?;
            sep = b' ';
        } else if c == b'T' {
            if n != 3 {
                return None;
            }
            rest = rest.get(1..)?;
            sep = b'T';
        } else if c.is_ascii_punctuation() {
            rest = rest.get(1..)?;
            sep = c;
        } else {
            return None;
        }
    }
    if (n == 2 || n == MAX_COMPONENTS) && comps.get(n - 1)?.sep_before != b'.' {
        return None;
    }
    Some((comps, n))
}

/// Parses a run of at most 9 digits (callers bound the length) into a number.
fn number(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |acc, &d| {
        if d.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u32::from(d - b'0'))
        } else {
            None
        }
    })
}

/// A two-digit year: 70..=99 are 19xx, 00..=69 are 20xx.
fn adjust_year(year: u32) -> u32 {
    match year {
        0..=69 => year + 2000,
        70..=99 => year + 1900,
        _ => year,
    }
}

/// The delimiter-free date and time: `YYYYMMDD`, `YYYYMMDDHHMMSS`, or a two-digit year followed
/// by pairs of digits (the last pair may be a single digit) for lengths 5..=7 and 9..=12.
fn parse_whole(digits: &[u8]) -> Option<Parts> {
    let year_digits = match digits.len() {
        8 | 14 => 4,
        5..=7 | 9..=12 => 2,
        _ => return None,
    };
    let (year, rest) = digits.split_at(year_digits);
    let mut parts = Parts { year: number(year)?, ..Parts::default() };
    if year_digits == 2 {
        parts.year = adjust_year(parts.year);
    }
    let mut values = [0u32; 5];
    for (slot, pair) in values.iter_mut().zip(rest.chunks(2)) {
        *slot = number(pair)?;
    }
    [parts.month, parts.day, parts.hour, parts.minute, parts.second] = values;
    Some(parts)
}

/// The first [`FRAC_DIGITS`] digits of a fraction, scaled to units of 100 ns.
fn fraction7(digits: &[u8]) -> Option<u32> {
    let kept = digits.get(..FRAC_DIGITS).unwrap_or(digits);
    let value = number(kept)?;
    Some(value * POW10.get(FRAC_DIGITS - kept.len()).copied()?)
}

/// Parses `s` as `tp` with precision `fsp` (already checked to be at most 6).
pub(super) fn parse_time(s: &str, tp: TimeType, fsp: u8) -> Option<Time> {
    let trimmed = s.trim_matches(|c: char| c.is_ascii_whitespace());
    if trimmed.is_empty() {
        return None;
    }
    let (comps, n) = split(trimmed.as_bytes())?;
    let comps = comps.get(..n)?;

    let (mut parts, frac) = match n {
        1 | 2 => {
            let whole = comps.first()?.digits;
            let frac = match comps.get(1) {
                // A fraction only makes sense after the seconds or the minutes.
                Some(c) if matches!(whole.len(), 10 | 12 | 14) => fraction7(c.digits)?,
                Some(_) => return None,
                None => 0,
            };
            (parse_whole(whole)?, frac)
        }
        _ => {
            let mut values = [0u32; 6];
            for (slot, comp) in values.iter_mut().zip(comps) {
                // Longer runs are out of range for every field anyway.
                if comp.digits.len() > 9 {
                    return None;
                }
                *slot = number(comp.digits)?;
            }
            let frac = match comps.get(6) {
                Some(c) => fraction7(c.digits)?,
                None => 0,
            };
            let [year, month, day, hour, minute, second] = values;
            let mut parts = Parts { year, month, day, hour, minute, second, micro: 0 };
            let two_digit_year = comps.first().is_some_and(|c| c.digits.len() == 2);
            if two_digit_year && !(parts.is_zero() && frac == 0) {
                parts.year = adjust_year(parts.year);
            }
            (parts, frac)
        }
    };

    parts.check_ranges().ok()?;
    if parts.month != 0 && parts.day > last_day_of_month(parts.year, parts.month) {
        return None;
    }
    if tp == TimeType::Timestamp
        && (parts.month == 0 || parts.day == 0)
        && !(parts.is_zero() && frac == 0)
    {
        return None;
    }

    if tp == TimeType::Date {
        return Some(Time::pack(&parts, TimeType::Date, 0));
    }

    // Round half up on the digit after `fsp`: `frac` is in units of 100 ns.
    let step = POW10.get(FRAC_DIGITS - usize::from(fsp)).copied()?;
    let rounded = (frac + step / 2) / step * step;
    parts.micro = (rounded % POW10[FRAC_DIGITS]) / 10;
    if rounded >= POW10[FRAC_DIGITS] && (!parts.carry_second() || parts.check_ranges().is_err()) {
        return None;
    }
    Some(Time::pack(&parts, tp, fsp))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(t: &Time) -> [u32; 7] {
        [t.year(), t.month(), t.day(), t.hour(), t.minute(), t.second(), t.micro()]
    }

    #[test]
    fn split_rules() {
        let count = |s: &str| split(s.as_bytes()).map(|(_, n)| n);
        assert_eq!(count("2019-12-31 23:59:59.999999"), Some(7));
        assert_eq!(count("2019*12&31T23(59)59.999999"), Some(7));
        assert_eq!(count("190916101112.111"), Some(2));
        // Whitespace and 'T' only after the date.
        assert_eq!(count("11-12-13 T 12:34:56"), None);
        assert_eq!(count("11:12 13"), None);
        assert_eq!(count("2011-12-13t12:34:56"), None);
        // Two runs or seven runs need a '.' before the last.
        assert_eq!(count("2019-12"), None);
        assert_eq!(count("2019-12-31 23:59:59:99"), None);
        assert_eq!(count("1-2-3-4-5-6-7-8"), None);
        assert_eq!(count("2019--12-31"), None);
    }

    #[test]
    fn whole_forms() {
        let p = |s: &str| {
            parse_whole(s.as_bytes()).map(|p| [p.year, p.month, p.day, p.hour, p.minute, p.second])
        };
        assert_eq!(p("19091"), Some([2019, 9, 1, 0, 0, 0]));
        assert_eq!(p("19091610111"), Some([2019, 9, 16, 10, 11, 1]));
        assert_eq!(p("19091210"), Some([1909, 12, 10, 0, 0, 0]));
        assert_eq!(p("700101"), Some([1970, 1, 1, 0, 0, 0]));
        assert_eq!(p("1112"), None);
        assert_eq!(p("1234567890123"), None);
    }

    #[test]
    fn rounding_uses_only_the_next_digit() {
        let t = parse_time("2019-01-01 00:00:00.4999999", TimeType::DateTime, 0).unwrap();
        assert_eq!(fields(&t), [2019, 1, 1, 0, 0, 0, 0]);
        let t = parse_time("2019-01-01 00:00:00.5", TimeType::DateTime, 0).unwrap();
        assert_eq!(fields(&t), [2019, 1, 1, 0, 0, 1, 0]);
        let t = parse_time("2019-01-01 00:00:00.12345649", TimeType::DateTime, 6).unwrap();
        assert_eq!(t.micro(), 123456);
    }

    #[test]
    fn carry_refused_into_zero_day() {
        assert!(parse_time("1998-11-00 23:59:59.999", TimeType::DateTime, 2).is_none());
        assert!(parse_time("9999-12-31 23:59:59.9999999", TimeType::DateTime, 6).is_none());
    }
}
