//! `memory-upper-threshold`: an absolute size or a percentage of the memory limit, `"4GiB"` or
//! `"80%"`.

use std::fmt;
use std::str::FromStr;

use rcop_units::ReadableSize;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::error::{Error, Result};

/// `memory-upper-threshold`: an absolute size, or a percentage of the memory limit.
///
/// Written as a [`ReadableSize`] (`"4GiB"`, or an integer number of bytes) or as a decimal
/// percentage (`"80%"`, `"12.5%"`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MemoryThreshold {
    /// This many bytes.
    Absolute(ReadableSize),
    /// This percentage (in `(0, 100]`) of the memory limit.
    Percent(f64),
}

impl MemoryThreshold {
    /// The threshold in bytes for a process whose memory limit is `limit` bytes.
    pub fn resolve(&self, limit: u64) -> u64 {
        match *self {
            MemoryThreshold::Absolute(size) => size.as_u64(),
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
            MemoryThreshold::Absolute(size) if size.is_zero() => {
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

/// True for decimal digits with at most one `.` and at least one digit.
fn is_decimal(text: &str) -> bool {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    !(int.is_empty() && frac.is_empty()) && digits(int) && digits(frac)
}

impl FromStr for MemoryThreshold {
    type Err = Error;

    fn from_str(input: &str) -> Result<Self> {
        match input.trim().strip_suffix('%') {
            Some(p) => {
                let bad = || Error::Parse {
                    what: "size",
                    input: input.to_owned(),
                    reason: "expected a percentage like 80%",
                };
                let number = p.trim_end();
                if !is_decimal(number) {
                    return Err(bad());
                }
                number.parse().map(MemoryThreshold::Percent).map_err(|_| bad())
            }
            None => Ok(MemoryThreshold::Absolute(input.parse()?)),
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

impl Serialize for MemoryThreshold {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MemoryThreshold {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct ThresholdVisitor;

        impl Visitor<'_> for ThresholdVisitor {
            type Value = MemoryThreshold;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a size such as \"4GiB\", a number of bytes, or \"80%\"")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<MemoryThreshold, E> {
                v.parse().map_err(E::custom)
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<MemoryThreshold, E> {
                let bytes = u64::try_from(v).map_err(|_| E::custom("size must not be negative"))?;
                Ok(MemoryThreshold::Absolute(ReadableSize(bytes)))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<MemoryThreshold, E> {
                Ok(MemoryThreshold::Absolute(ReadableSize(v)))
            }
        }

        d.deserialize_any(ThresholdVisitor)
    }
}

impl From<ReadableSize> for MemoryThreshold {
    fn from(size: ReadableSize) -> Self {
        MemoryThreshold::Absolute(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcop_units::ReadableDuration;

    #[test]
    fn thresholds_parse_and_resolve() {
        let t = |s: &str| s.parse::<MemoryThreshold>().unwrap();
        assert_eq!(t("80%"), MemoryThreshold::Percent(80.0));
        assert_eq!(t("12.5%"), MemoryThreshold::Percent(12.5));
        assert_eq!(t(" 50 % "), MemoryThreshold::Percent(50.0));
        assert_eq!(t("4GiB"), MemoryThreshold::Absolute(ReadableSize::gib(4)));
        assert_eq!(t("1.5GB"), MemoryThreshold::Absolute(ReadableSize::mib(1536)));
        assert_eq!(t("80%").resolve(1000), 800);
        assert_eq!(t("12.5%").resolve(8 << 30), 1 << 30);
        assert_eq!(t("4GiB").resolve(1), 4 << 30);
        for bad in ["%", "80%%", ".%", "-5%", "1e2%", "80 percent", "4gib", ""] {
            let err = bad.parse::<MemoryThreshold>().unwrap_err();
            assert!(matches!(err, Error::Parse { what: "size", .. }), "{bad:?}: {err}");
        }
        assert!(t("0%").validate("k").is_err());
        assert!(t("100.5%").validate("k").is_err());
        assert!(t("100%").validate("k").is_ok());
        assert!(t("0").validate("k").is_err());
        assert_eq!(t("80%").to_string(), "80%");
        assert_eq!(t("4096").to_string(), "4KiB");
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
                d: ReadableDuration::secs(3),
                s: ReadableSize::mib(1),
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
        let err = toml::from_str::<Doc>("d = \"1s\"\ns = 1\nt = -1").unwrap_err().to_string();
        assert!(err.contains("negative"), "{err}");
    }
}
