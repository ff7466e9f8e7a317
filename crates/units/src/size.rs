//! [`ReadableSize`]: `"512MiB"`, `"1.5GB"`, `"4096"`.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::error::ParseError;
use crate::number::{Decimal, split_number};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;
const PIB: u64 = 1 << 50;

/// Binary units, largest first: what `Display` picks from.
const UNITS: [(&str, u64); 5] =
    [("PiB", PIB), ("TiB", TIB), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)];

/// A byte count, written `<number>[unit]`: `"512MiB"`, `"1.5GB"`, `"2 KiB"`, `"4096"`.
///
/// # Grammar
///
/// As TiKV's `ReadableSize` (`components/tikv_util/src/config.rs`):
///
/// - surrounding whitespace is ignored, and so is whitespace between the number and the unit
///   (`"2 KiB"`); anything that is not ASCII is an error;
/// - the number is decimal digits with an optional fraction (`"1.5GB"`, `".5K"`, `"5.K"`);
/// - every unit is **binary** whatever the spelling, and units are **case-sensitive**, exactly
///   these: `B` or none (bytes), `K`/`KB`/`KiB` (1024), `M`/`MB`/`MiB`, `G`/`GB`/`GiB`,
///   `T`/`TB`/`TiB`, `P`/`PB`/`PiB`. So `"512mb"`, `"1k"` and `"1b"` are errors, as in TiKV;
/// - a fractional result is rounded down to whole bytes (`"1.1K"` is 1126 bytes).
///
/// Where this parser is stricter or finer than TiKV's, by choice:
///
/// - TiKV reads the number as an `f64`; here it is read exactly, so `"9007199254740993"` is
///   that many bytes rather than the nearest `f64`, and a sign or exponent (which TiKV's digit
///   scan never lets through anyway) is an error;
/// - a size above `u64::MAX` bytes is an error here; TiKV saturates to `u64::MAX`.
///
/// # Display and serde
///
/// `Display` writes the largest binary unit that divides the size exactly, as TiKV serializes
/// it: `"4GiB"`, `"1536MiB"`, and `"0KiB"` for zero. A size that is not a whole number of KiB
/// is written `"1000B"`, where TiKV writes the bare integer `1000`; both parse back in both
/// parsers, and a string keeps TOML happy above `i64::MAX`. Serialization writes the `Display`
/// string; deserialization takes a string or a non-negative integer (bytes), as TiKV.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ReadableSize(pub u64);

impl ReadableSize {
    /// `n` KiB; saturates at `u64::MAX` bytes.
    pub const fn kib(n: u64) -> Self {
        ReadableSize(n.saturating_mul(KIB))
    }

    /// `n` MiB; saturates at `u64::MAX` bytes.
    pub const fn mib(n: u64) -> Self {
        ReadableSize(n.saturating_mul(MIB))
    }

    /// `n` GiB; saturates at `u64::MAX` bytes.
    pub const fn gib(n: u64) -> Self {
        ReadableSize(n.saturating_mul(GIB))
    }

    /// The size in bytes.
    pub const fn as_u64(self) -> u64 {
        self.0
    }

    /// True for zero bytes.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

/// The multiplier of a unit spelled exactly as TiKV accepts it.
fn unit(text: &str) -> Option<u64> {
    Some(match text {
        "" | "B" => 1,
        "K" | "KB" | "KiB" => KIB,
        "M" | "MB" | "MiB" => MIB,
        "G" | "GB" | "GiB" => GIB,
        "T" | "TB" | "TiB" => TIB,
        "P" | "PB" | "PiB" => PIB,
        _ => return None,
    })
}

impl FromStr for ReadableSize {
    type Err = ParseError;

    fn from_str(input: &str) -> Result<Self, ParseError> {
        let error = |reason| ParseError::size(input, reason);
        let text = input.trim();
        if text.is_empty() {
            return Err(error("empty"));
        }
        if !text.is_ascii() {
            return Err(error("only ASCII is accepted"));
        }
        let (number, unit_text) = split_number(text);
        let multiplier = unit(unit_text.trim_start()).ok_or_else(|| {
            error("unknown unit; expected B, K, KB, KiB, M, MB, MiB, G, GB, GiB, T, TB, TiB, P, PB or PiB (case-sensitive)")
        })?;
        let number = Decimal::parse(number).map_err(error)?;
        let bytes = number
            .times(u128::from(multiplier))
            .and_then(|b| u64::try_from(b).ok())
            .ok_or_else(|| error("too large"))?;
        Ok(ReadableSize(bytes))
    }
}

impl fmt::Display for ReadableSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("0KiB");
        }
        for (name, unit) in UNITS {
            if self.0.is_multiple_of(unit) {
                return write!(f, "{}{name}", self.0 / unit);
            }
        }
        write!(f, "{}B", self.0)
    }
}

impl From<u64> for ReadableSize {
    fn from(bytes: u64) -> Self {
        ReadableSize(bytes)
    }
}

impl From<ReadableSize> for u64 {
    fn from(size: ReadableSize) -> Self {
        size.0
    }
}

impl Serialize for ReadableSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ReadableSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct SizeVisitor;

        impl Visitor<'_> for SizeVisitor {
            type Value = ReadableSize;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a size such as \"512MiB\" or a number of bytes")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<ReadableSize, E> {
                v.parse().map_err(E::custom)
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ReadableSize, E> {
                u64::try_from(v)
                    .map(ReadableSize)
                    .map_err(|_| E::custom(format!("a size must not be negative, got {v}")))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ReadableSize, E> {
                Ok(ReadableSize(v))
            }
        }

        d.deserialize_any(SizeVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(s: &str) -> Result<u64, ParseError> {
        s.parse::<ReadableSize>().map(ReadableSize::as_u64)
    }

    #[test]
    fn every_tikv_spelling_parses() {
        for (text, bytes) in [
            ("23", 23),
            ("1024B", KIB),
            ("0.5K", KIB / 2),
            ("0.5KB", KIB / 2),
            ("0.5KiB", KIB / 2),
            ("1 KiB", KIB),
            ("3MiB", 3 * MIB),
            ("0.5M", MIB / 2),
            ("512MB", 512 * MIB),
            ("1.5GB", 3 * GIB / 2),
            ("787GiB ", 787 * GIB),
            ("0.5GB ", GIB / 2),
            ("4G", 4 * GIB),
            ("2 TiB", 2 * TIB),
            ("0.5T", TIB / 2),
            (" 0.5 PB", PIB / 2),
            ("1PiB", PIB),
            (".5K", 512),
            ("5.K", 5 * KIB),
            ("0", 0),
            ("1.1K", 1126),
            ("9007199254740993", 9_007_199_254_740_993),
            ("18446744073709551615", u64::MAX),
            ("15.999999999999999999PiB", 18_014_398_509_481_983),
        ] {
            assert_eq!(size(text), Ok(bytes), "{text:?}");
        }
    }

    #[test]
    fn what_tikv_rejects_is_an_error() {
        // TiKV's own illegal cases, then ours.
        for bad in [
            "0.5kb",
            "0.5kB",
            "0.5Kb",
            "0.5k",
            "0.5g",
            "b",
            "gb",
            "1b",
            "B",
            "1K24B",
            " 5_KB",
            "4B7",
            "5M_",
            "",
            "  ",
            "GiB",
            "4XB",
            "4GiBs",
            "-1",
            "+1",
            "1e3",
            "1..2K",
            ".K",
            "1 . 5K",
            "512mb",
            "1kib",
            "1µB",
            "٣K",
            "1K B",
            "16384PiB",
            "18446744073709551616",
        ] {
            let err = size(bad).expect_err(bad);
            assert!(matches!(err, ParseError::Size { .. }), "{bad:?}: {err}");
        }
        assert_eq!(size("512mb").unwrap_err().reason().split(';').next(), Some("unknown unit"));
        assert_eq!(size("16384PiB").unwrap_err().reason(), "too large");
        assert_eq!(size("٣K").unwrap_err().reason(), "only ASCII is accepted");
    }

    #[test]
    fn display_picks_the_largest_exact_unit() {
        for (bytes, text) in [
            (0, "0KiB"),
            (1000, "1000B"),
            (KIB, "1KiB"),
            (1536 * MIB, "1536MiB"),
            (4 * GIB, "4GiB"),
            (7 * TIB, "7TiB"),
            (11 * PIB, "11PiB"),
            (u64::MAX, "18446744073709551615B"),
        ] {
            assert_eq!(ReadableSize(bytes).to_string(), text);
            assert_eq!(size(text), Ok(bytes), "{text} parses back");
        }
    }

    #[test]
    fn constructors_and_accessors() {
        const CACHE: ReadableSize = ReadableSize::mib(64);
        assert_eq!(CACHE.as_u64(), 64 << 20);
        assert_eq!(ReadableSize::kib(3), ReadableSize(3072));
        assert_eq!(ReadableSize::gib(2).as_u64(), 2 << 30);
        assert_eq!(ReadableSize::gib(u64::MAX), ReadableSize(u64::MAX), "saturates");
        assert!(ReadableSize(0).is_zero() && !ReadableSize(1).is_zero());
        assert_eq!(u64::from(ReadableSize::from(5)), 5);
        assert_eq!(ReadableSize::default(), ReadableSize(0));
    }
}
