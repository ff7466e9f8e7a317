//! Human-readable durations and sizes for configuration files: `"100ms"`, `"1m30s"`, `"4GiB"`,
//! `"80%"`.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::error::{Error, Result};

/// A [`Duration`] written as one or more `<number><unit>` parts: `"100ms"`, `"3s"`,
/// `"1m30s"`, `"1.5s"`.
///
/// Units: `ns`, `us`, `ms`, `s`, `m`, `h`, `d`. A bare number without a unit is an error, so
/// `wait-min-duration = 100` cannot silently mean seconds or milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ReadableDuration(pub Duration);

/// A byte count written as `<number>[unit]`: `"512MB"`, `"4GiB"`, `"1.5G"`, `"1024"`.
///
/// As in TiKV's configuration, every unit is binary: `K`, `KB` and `KiB` all mean 1024 bytes,
/// `M`/`MB`/`MiB` 1024², and so on up to `P`. Units are case-insensitive; `B` means bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ReadableSize(pub u64);

/// `memory-upper-threshold`: an absolute size, or a percentage of the memory limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MemoryThreshold {
    /// This many bytes.
    Absolute(ReadableSize),
    /// This percentage (in `(0, 100]`) of the memory limit.
    Percent(f64),
}

const NANOS_PER_MILLI: u128 = 1_000_000;
const NANOS_PER_SEC: u128 = 1_000_000_000;

/// Duration units, longest spelling first where one is a prefix of another (`ms` before `m`).
const DURATION_UNITS: [(&str, u128); 7] = [
    ("ns", 1),
    ("us", 1_000),
    ("ms", NANOS_PER_MILLI),
    ("s", NANOS_PER_SEC),
    ("m", 60 * NANOS_PER_SEC),
    ("h", 3_600 * NANOS_PER_SEC),
    ("d", 86_400 * NANOS_PER_SEC),
];

const KIB: u64 = 1 << 10;
const SIZE_UNITS: [(&str, u64); 5] =
    [("P", 1 << 50), ("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", KIB)];

/// A non-negative decimal number `int.frac`, exactly: `int + num / den`.
struct Decimal {
    int: u128,
    num: u128,
    den: u128,
}

impl Decimal {
    /// `self × unit`, rounded down; `None` on overflow.
    fn times(&self, unit: u128) -> Option<u128> {
        let whole = self.int.checked_mul(unit)?;
        let frac = self.num.checked_mul(unit)? / self.den;
        whole.checked_add(frac)
    }
}

/// Splits a leading decimal number (`12`, `1.5`, `.5`) off `s`.
fn split_number(s: &str) -> Option<(Decimal, &str)> {
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, rest) = s.split_at(end);
    let (int_text, frac_text) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if (int_text.is_empty() && frac_text.is_empty()) || frac_text.contains('.') {
        return None;
    }
    // 30 digits keep `num × unit` (unit < 2^57) inside u128.
    if frac_text.len() > 18 || int_text.len() > 30 {
        return None;
    }
    let digits = |t: &str| -> Option<u128> {
        t.bytes().try_fold(0u128, |acc, b| acc.checked_mul(10)?.checked_add(u128::from(b - b'0')))
    };
    let int = digits(int_text)?;
    let num = digits(frac_text)?;
    let den = 10u128.checked_pow(u32::try_from(frac_text.len()).ok()?)?;
    Some((Decimal { int, num, den }, rest))
}

fn duration_error(input: &str, reason: &'static str) -> Error {
    Error::Parse { what: "duration", input: input.to_owned(), reason }
}

fn size_error(input: &str, reason: &'static str) -> Error {
    Error::Parse { what: "size", input: input.to_owned(), reason }
}

impl FromStr for ReadableDuration {
    type Err = Error;

    fn from_str(input: &str) -> Result<Self> {
        let mut rest = input.trim();
        if rest.is_empty() {
            return Err(duration_error(input, "empty"));
        }
        let mut nanos: u128 = 0;
        while !rest.is_empty() {
            let (number, after) =
                split_number(rest).ok_or_else(|| duration_error(input, "expected a number"))?;
            let (unit, after) = DURATION_UNITS
                .iter()
                .find_map(|&(name, unit)| after.strip_prefix(name).map(|a| (unit, a)))
                .ok_or_else(|| duration_error(input, "expected a unit: ns, us, ms, s, m, h, d"))?;
            nanos = number
                .times(unit)
                .and_then(|n| nanos.checked_add(n))
                .ok_or_else(|| duration_error(input, "too large"))?;
            rest = after;
        }
        let nanos = u64::try_from(nanos).map_err(|_| duration_error(input, "too large"))?;
        Ok(ReadableDuration(Duration::from_nanos(nanos)))
    }
}

impl fmt::Display for ReadableDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut nanos = self.0.as_nanos();
        if nanos == 0 {
            return f.write_str("0s");
        }
        // Hours and smaller, so the text stays readable and round-trips exactly.
        for (name, unit) in DURATION_UNITS[..6].iter().rev() {
            let n = nanos / unit;
            if n > 0 {
                write!(f, "{n}{name}")?;
                nanos %= unit;
            }
        }
        Ok(())
    }
}

impl FromStr for ReadableSize {
    type Err = Error;

    fn from_str(input: &str) -> Result<Self> {
        let text = input.trim();
        let (number, unit_text) =
            split_number(text).ok_or_else(|| size_error(input, "expected a number"))?;
        let unit_text = unit_text.trim_start();
        let unit = if unit_text.is_empty() || unit_text.eq_ignore_ascii_case("B") {
            1
        } else {
            SIZE_UNITS
                .iter()
                .find(|(prefix, _)| {
                    let p = prefix;
                    unit_text.eq_ignore_ascii_case(p)
                        || unit_text.eq_ignore_ascii_case(&format!("{p}B"))
                        || unit_text.eq_ignore_ascii_case(&format!("{p}iB"))
                })
                .map(|&(_, unit)| unit)
                .ok_or_else(|| size_error(input, "expected a unit: B, KiB, MiB, GiB, TiB, PiB"))?
        };
        let bytes = number
            .times(u128::from(unit))
            .and_then(|b| u64::try_from(b).ok())
            .ok_or_else(|| size_error(input, "too large"))?;
        Ok(ReadableSize(bytes))
    }
}

impl fmt::Display for ReadableSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (prefix, unit) in SIZE_UNITS {
            if self.0 >= unit && self.0.is_multiple_of(unit) {
                return write!(f, "{}{prefix}iB", self.0 / unit);
            }
        }
        write!(f, "{}B", self.0)
    }
}

impl MemoryThreshold {
    /// The threshold in bytes for a process whose memory limit is `limit` bytes.
    pub fn resolve(&self, limit: u64) -> u64 {
        match *self {
            MemoryThreshold::Absolute(size) => size.0,
            MemoryThreshold::Percent(p) => {
                // A float product is exact enough for a limit; `as` saturates and maps NaN to 0.
                (limit as f64 * p / 100.0) as u64
            }
        }
    }

    /// Checks the percentage is in `(0, 100]` and an absolute size is not zero.
    pub fn validate(&self, key: &'static str) -> Result<()> {
        match *self {
            MemoryThreshold::Percent(p) if !(p > 0.0 && p <= 100.0) => {
                Err(Error::config(key, format!("{p}% is not in (0%, 100%]")))
            }
            MemoryThreshold::Absolute(ReadableSize(0)) => {
                Err(Error::config(key, "must be greater than 0"))
            }
            _ => Ok(()),
        }
    }
}

impl Default for MemoryThreshold {
    /// 80% of the memory limit, as upstream.
    fn default() -> Self {
        MemoryThreshold::Percent(80.0)
    }
}

impl FromStr for MemoryThreshold {
    type Err = Error;

    fn from_str(input: &str) -> Result<Self> {
        match input.trim().strip_suffix('%') {
            Some(p) => {
                let (number, _) = split_number(p.trim_end())
                    .filter(|(_, rest)| rest.is_empty())
                    .ok_or_else(|| size_error(input, "expected a percentage like 80%"))?;
                let percent = number.int as f64 + number.num as f64 / number.den as f64;
                Ok(MemoryThreshold::Percent(percent))
            }
            None => input.parse().map(MemoryThreshold::Absolute),
        }
    }
}

impl fmt::Display for MemoryThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryThreshold::Absolute(size) => size.fmt(f),
            MemoryThreshold::Percent(p) => write!(f, "{p}%"),
        }
    }
}

macro_rules! string_serde {
    ($ty:ty, $expecting:literal, $($int:ident),*) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<$ty, E> {
                        v.parse().map_err(E::custom)
                    }
                    $(
                    fn $int<E: de::Error>(self, v: i64) -> std::result::Result<$ty, E> {
                        let bytes = u64::try_from(v).map_err(|_| E::custom("size must not be negative"))?;
                        Ok(<$ty>::from(ReadableSize(bytes)))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<$ty, E> {
                        Ok(<$ty>::from(ReadableSize(v)))
                    }
                    )*
                }
                d.deserialize_any(V)
            }
        }
    };
}

string_serde!(ReadableDuration, "a duration such as \"100ms\" or \"3s\"",);
string_serde!(ReadableSize, "a size such as \"512MiB\" or a number of bytes", visit_i64);
string_serde!(MemoryThreshold, "a size such as \"4GiB\", a number of bytes, or \"80%\"", visit_i64);

impl From<ReadableSize> for MemoryThreshold {
    fn from(size: ReadableSize) -> Self {
        MemoryThreshold::Absolute(size)
    }
}

impl From<Duration> for ReadableDuration {
    fn from(d: Duration) -> Self {
        ReadableDuration(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn dur(s: &str) -> Duration {
        s.parse::<ReadableDuration>().unwrap().0
    }

    #[test]
    fn durations_parse() {
        assert_eq!(dur("100ms"), Duration::from_millis(100));
        assert_eq!(dur("3s"), Duration::from_secs(3));
        assert_eq!(dur("60s"), Duration::from_secs(60));
        assert_eq!(dur("1m30s"), Duration::from_secs(90));
        assert_eq!(dur("1h2m3s4ms"), Duration::from_millis(3_723_004));
        assert_eq!(dur("1.5s"), Duration::from_millis(1500));
        assert_eq!(dur(".25s"), Duration::from_millis(250));
        assert_eq!(dur("2d"), Duration::from_secs(172_800));
        assert_eq!(dur("7us"), Duration::from_micros(7));
        assert_eq!(dur("9ns"), Duration::from_nanos(9));
        assert_eq!(dur(" 0ms "), Duration::ZERO);
    }

    #[test]
    fn bad_durations_are_errors() {
        for bad in ["", "100", "ms", "1x", "1.2.3s", "-1s", "1 s", "1s2", "100000000000000000000h"]
        {
            let err = bad.parse::<ReadableDuration>().unwrap_err();
            assert!(matches!(err, Error::Parse { what: "duration", .. }), "{bad}: {err}");
        }
    }

    #[test]
    fn durations_display() {
        assert_eq!(ReadableDuration(Duration::from_millis(100)).to_string(), "100ms");
        assert_eq!(ReadableDuration(Duration::from_secs(90)).to_string(), "1m30s");
        assert_eq!(ReadableDuration(Duration::ZERO).to_string(), "0s");
        assert_eq!(ReadableDuration(Duration::from_nanos(1_001)).to_string(), "1us1ns");
    }

    #[test]
    fn sizes_parse() {
        let size = |s: &str| s.parse::<ReadableSize>().unwrap().0;
        assert_eq!(size("4GiB"), 4 << 30);
        assert_eq!(size("512MB"), 512 << 20);
        assert_eq!(size("512mb"), 512 << 20);
        assert_eq!(size("1.5G"), 3 << 29);
        assert_eq!(size("1024"), 1024);
        assert_eq!(size("10B"), 10);
        assert_eq!(size("2 KiB"), 2048);
        assert_eq!(size("1PiB"), 1 << 50);
        for bad in ["", "GiB", "4XB", "4GiBs", "-1", "99999999999PiB", "1..2K"] {
            assert!(bad.parse::<ReadableSize>().is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes_display() {
        assert_eq!(ReadableSize(4 << 30).to_string(), "4GiB");
        assert_eq!(ReadableSize(1536 << 20).to_string(), "1536MiB");
        assert_eq!(ReadableSize(1000).to_string(), "1000B");
        assert_eq!(ReadableSize(0).to_string(), "0B");
    }

    #[test]
    fn thresholds_parse_and_resolve() {
        let t = |s: &str| s.parse::<MemoryThreshold>().unwrap();
        assert_eq!(t("80%"), MemoryThreshold::Percent(80.0));
        assert_eq!(t("12.5%"), MemoryThreshold::Percent(12.5));
        assert_eq!(t("4GiB"), MemoryThreshold::Absolute(ReadableSize(4 << 30)));
        assert_eq!(t("80%").resolve(1000), 800);
        assert_eq!(t("12.5%").resolve(8 << 30), 1 << 30);
        assert_eq!(t("4GiB").resolve(1), 4 << 30);
        assert!("%".parse::<MemoryThreshold>().is_err());
        assert!("80%%".parse::<MemoryThreshold>().is_err());
        assert!(t("0%").validate("k").is_err());
        assert!(t("100.5%").validate("k").is_err());
        assert!(t("100%").validate("k").is_ok());
        assert!(t("0").validate("k").is_err());
    }

    #[derive(Debug, Deserialize, Serialize, PartialEq)]
    struct Doc {
        d: ReadableDuration,
        s: ReadableSize,
        t: MemoryThreshold,
    }

    #[test]
    fn serde_from_toml() {
        let doc: Doc = toml::from_str("d = \"3s\"\ns = 1048576\nt = \"75%\"").unwrap();
        assert_eq!(
            doc,
            Doc {
                d: ReadableDuration(Duration::from_secs(3)),
                s: ReadableSize(1 << 20),
                t: MemoryThreshold::Percent(75.0)
            }
        );
        let doc: Doc = toml::from_str("d = \"1m\"\ns = \"2GiB\"\nt = 4096").unwrap();
        assert_eq!(doc.t, MemoryThreshold::Absolute(ReadableSize(4096)));
        let text = format!("d = \"{}\"\ns = \"{}\"\nt = \"{}\"", doc.d, doc.s, doc.t);
        let back: Doc = toml::from_str(&text).unwrap();
        assert_eq!(back, doc);
        let err = toml::from_str::<Doc>("d = 100\ns = 1\nt = 1").unwrap_err().to_string();
        assert!(err.contains("duration"), "{err}");
        let err = toml::from_str::<Doc>("d = \"1s\"\ns = -1\nt = 1").unwrap_err().to_string();
        assert!(err.contains("negative"), "{err}");
    }

    proptest! {
        #[test]
        fn duration_display_round_trips(nanos in 0u64..u64::MAX / 2) {
            let d = ReadableDuration(Duration::from_nanos(nanos));
            prop_assert_eq!(d.to_string().parse::<ReadableDuration>().unwrap(), d);
        }

        #[test]
        fn size_display_round_trips(bytes: u64) {
            let s = ReadableSize(bytes);
            prop_assert_eq!(s.to_string().parse::<ReadableSize>().unwrap(), s);
        }
    }
}
