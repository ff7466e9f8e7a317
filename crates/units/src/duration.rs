//! [`ReadableDuration`]: `"100ms"`, `"3s"`, `"1h30m"`.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::error::ParseError;
use crate::number::{Decimal, split_number};

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Units with their length in nanoseconds, largest first: the order parts must come in, and
/// the order `Display` writes them.
const UNITS: [(&str, u128); 7] = [
    ("d", 86_400 * NANOS_PER_SEC),
    ("h", 3_600 * NANOS_PER_SEC),
    ("m", 60 * NANOS_PER_SEC),
    ("s", NANOS_PER_SEC),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

/// A [`Duration`] written as one or more `<number><unit>` parts: `"100ms"`, `"3s"`,
/// `"1h30m"`, `"1.5s"`, `"2d10ms"`.
///
/// # Grammar
///
/// As TiKV's `ReadableDuration` (`components/tikv_util/src/config.rs`):
///
/// - units `d`, `h`, `m`, `s`, `ms`, case-sensitive (`"1H"`, `"1MS"` are errors);
/// - parts go from the largest unit to the smallest, each unit at most once: `"1h30m"`, not
///   `"30m1h"` or `"1s1s"`;
/// - each number is decimal digits with an optional fraction (`"0.5h"`, `".25s"`);
/// - whitespace is allowed around the whole text, before each number and between a number and
///   its unit (`" 0.5 h2m "`, `"1 s"`, `"1h 30m"`), not inside a number or a unit;
/// - **a bare number is an error** (`"100"`, and a TOML integer `100`), so a value cannot
///   silently mean seconds or milliseconds; so is a number after the last unit (`"1s2"`);
/// - anything that is not ASCII is an error, so `"10µs"` is rejected: write `"10us"`;
/// - the empty string is zero, as in TiKV (validation then rejects it where zero is invalid).
///
/// Where this parser differs from TiKV's, by choice:
///
/// - `us` and `ns` are accepted after `ms` (TiKV rejects them, so no string TiKV reads changes
///   meaning), and fractions below a millisecond are kept to the nanosecond (`"1.5ms"` is
///   1.5 ms; TiKV rounds every duration down to whole milliseconds, so there it is 1 ms);
/// - TiKV reads each number as an `f64`; here numbers are exact and a sign, exponent, `inf`
///   or `nan` is an error (TiKV takes `"1e3s"` as 1000 s and `"1h-30m"` as 30 minutes);
/// - a duration longer than `u64::MAX` seconds is an error; TiKV saturates.
///
/// # Display and serde
///
/// `Display` writes every non-zero unit from days down, `"0s"` for zero: `"1d1h"`, `"1m30s"`,
/// `"2d10ms"`, exactly as TiKV for whole milliseconds; a sub-millisecond remainder follows as
/// `us`/`ns` (`"1ms500us"`), which TiKV would drop. Serialization writes that string;
/// deserialization takes only a string, as TiKV.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ReadableDuration(pub Duration);

impl ReadableDuration {
    /// `n` milliseconds.
    pub const fn millis(n: u64) -> Self {
        ReadableDuration(Duration::from_millis(n))
    }

    /// `n` seconds.
    pub const fn secs(n: u64) -> Self {
        ReadableDuration(Duration::from_secs(n))
    }

    /// The duration.
    pub const fn as_duration(self) -> Duration {
        self.0
    }

    /// True for a zero duration.
    pub const fn is_zero(self) -> bool {
        self.0.is_zero()
    }
}

/// The index in [`UNITS`] and the length of a unit spelled exactly.
fn find_unit(text: &str) -> Option<(usize, u128)> {
    UNITS.iter().enumerate().find_map(|(i, &(name, length))| (name == text).then_some((i, length)))
}

impl FromStr for ReadableDuration {
    type Err = ParseError;

    fn from_str(input: &str) -> Result<Self, ParseError> {
        let error = |reason| ParseError::duration(input, reason);
        let mut rest = input.trim();
        if !rest.is_ascii() {
            return Err(error("only ASCII is accepted (write `us`, not `µs`)"));
        }
        let mut nanos: u128 = 0;
        let mut last_unit: Option<usize> = None;
        while !rest.is_empty() {
            let (number, after) = split_number(rest.trim_start());
            let after = after.trim_start();
            let unit_end = after.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(after.len());
            let (unit_text, after) = after.split_at(unit_end);
            if number.is_empty() {
                return Err(error("expected a number"));
            }
            if unit_text.is_empty() {
                return Err(error(if after.is_empty() {
                    "a number needs a unit: d, h, m, s, ms, us or ns"
                } else {
                    "expected a unit: d, h, m, s, ms, us or ns"
                }));
            }
            let (index, length) = find_unit(unit_text)
                .ok_or_else(|| error("unknown unit; expected d, h, m, s, ms, us or ns"))?;
            if last_unit.is_some_and(|last| index <= last) {
                return Err(error("units must go from the largest to the smallest, each once"));
            }
            last_unit = Some(index);
            let part = Decimal::parse(number).map_err(error)?;
            nanos = part
                .times(length)
                .and_then(|n| nanos.checked_add(n))
                .ok_or_else(|| error("too large"))?;
            rest = after;
        }
        let secs = u64::try_from(nanos / NANOS_PER_SEC).map_err(|_| error("too large"))?;
        // Below 10^9: fits.
        let subsec = u32::try_from(nanos % NANOS_PER_SEC).map_err(|_| error("too large"))?;
        Ok(ReadableDuration(Duration::new(secs, subsec)))
    }
}

impl fmt::Display for ReadableDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut nanos = self.0.as_nanos();
        if nanos == 0 {
            return f.write_str("0s");
        }
        for (name, length) in UNITS {
            let n = nanos / length;
            if n > 0 {
                write!(f, "{n}{name}")?;
                nanos %= length;
            }
        }
        Ok(())
    }
}

impl From<Duration> for ReadableDuration {
    fn from(d: Duration) -> Self {
        ReadableDuration(d)
    }
}

impl From<ReadableDuration> for Duration {
    fn from(d: ReadableDuration) -> Self {
        d.0
    }
}

impl Serialize for ReadableDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ReadableDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct DurationVisitor;

        impl Visitor<'_> for DurationVisitor {
            type Value = ReadableDuration;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration string such as \"100ms\" or \"1h30m\"")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<ReadableDuration, E> {
                v.parse().map_err(E::custom)
            }
        }

        d.deserialize_str(DurationVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dur(s: &str) -> Result<Duration, ParseError> {
        s.parse::<ReadableDuration>().map(ReadableDuration::as_duration)
    }

    #[test]
    fn tikv_and_rcop_spellings_parse() {
        let ms = Duration::from_millis;
        let s = Duration::from_secs;
        for (text, d) in [
            // TiKV's own cases.
            ("0s", s(0)),
            ("1ms", ms(1)),
            ("2s", s(2)),
            ("1d", s(86_400)),
            ("2d10ms", s(172_800) + ms(10)),
            ("4m", s(240)),
            ("5h", s(18_000)),
            ("1h2m", s(3_720)),
            ("5d1h2m", s(435_720)),
            ("1h2s5ms", s(3_602) + ms(5)),
            ("3d7h2s5ms", s(284_402) + ms(5)),
            (" 0.5 h2m ", s(1_920)),
            // Ours.
            ("100ms", ms(100)),
            ("1m30s", s(90)),
            ("1h30m", s(5_400)),
            ("1h 30m", s(5_400)),
            ("1 s", s(1)),
            ("1.5s", ms(1_500)),
            (".25s", ms(250)),
            ("5.s", s(5)),
            ("1.5ms", Duration::from_micros(1_500)),
            ("7us", Duration::from_micros(7)),
            ("9ns", Duration::from_nanos(9)),
            ("1ms1us1ns", Duration::from_nanos(1_001_001)),
            ("", s(0)),
            ("  ", s(0)),
            ("0.000000001s", Duration::from_nanos(1)),
            ("18446744073709551615s", s(u64::MAX)),
        ] {
            assert_eq!(dur(text), Ok(d), "{text:?}");
        }
    }

    #[test]
    fn bad_durations_are_errors() {
        for bad in [
            // TiKV's illegal cases.
            "1H",
            "1M",
            "1S",
            "1MS",
            "1h1h",
            "h",
            // TiKV rejects these too.
            "100",
            "ms",
            "1x",
            "1s2",
            "30m1h",
            "1ms1s",
            "1.2.3s",
            "-1s",
            "1 m s",
            "1m s",
            "10µs",
            "1μs",
            // TiKV takes these (f64 numbers); we do not.
            "1e3s",
            "1h-30m",
            "+1s",
            "infs",
            "nans",
            // Too large.
            "18446744073709551616s",
            "213503982334602d",
            "100000000000000000000000000000000000000d",
        ] {
            let err = dur(bad).expect_err(bad);
            assert!(matches!(err, ParseError::Duration { .. }), "{bad:?}: {err}");
        }
        assert_eq!(
            dur("100").unwrap_err().reason(),
            "a number needs a unit: d, h, m, s, ms, us or ns"
        );
        assert!(dur("30m1h").unwrap_err().reason().starts_with("units must go"));
        assert!(dur("10µs").unwrap_err().reason().contains("`us`"));
    }

    #[test]
    fn display_matches_tikv_for_whole_milliseconds() {
        let ms = Duration::from_millis;
        for (d, text) in [
            (Duration::ZERO, "0s"),
            (ms(1), "1ms"),
            (ms(100), "100ms"),
            (ms(90_000), "1m30s"),
            (ms(86_400_000), "1d"),
            (ms(90_000_000), "1d1h"),
            (ms(172_800_010), "2d10ms"),
            (ms(3_602_005), "1h2s5ms"),
            (Duration::from_nanos(1_001), "1us1ns"),
            (Duration::from_micros(1_500), "1ms500us"),
            (Duration::MAX, "213503982334601d7h15s999ms999us999ns"),
        ] {
            assert_eq!(ReadableDuration(d).to_string(), text);
            assert_eq!(dur(text), Ok(d), "{text} parses back");
        }
    }

    #[test]
    fn constructors_and_accessors() {
        const WAIT: ReadableDuration = ReadableDuration::millis(100);
        assert_eq!(WAIT.as_duration(), Duration::from_millis(100));
        assert_eq!(ReadableDuration::secs(3).as_duration(), Duration::from_secs(3));
        assert!(ReadableDuration::default().is_zero() && !WAIT.is_zero());
        assert_eq!(Duration::from(ReadableDuration::from(Duration::from_secs(1))).as_secs(), 1);
    }
}
