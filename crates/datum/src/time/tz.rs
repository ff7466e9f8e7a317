//! The session time zone.

use jiff::tz::{Offset, TimeZone};

use crate::error::{Error, Result};

/// Seconds in a day: fixed offsets must be strictly smaller in magnitude (TiKV's rule for
/// `DAGRequest.time_zone_offset`).
const SECS_PER_DAY: i64 = 24 * 60 * 60;
/// `+14:00`, the largest offset MySQL 8 accepts as a `time_zone` value.
const MAX_NAMED_OFFSET_EAST: i64 = 14 * 3600;
/// `-13:59`, the most negative offset MySQL 8 accepts as a `time_zone` value.
const MAX_NAMED_OFFSET_WEST: i64 = 13 * 3600 + 59 * 60;

/// A session time zone: an IANA zone from the bundled database or a fixed UTC offset.
///
/// Only `TIMESTAMP` conversions use it ([`Time::from_utc`](super::Time::from_utc),
/// [`Time::to_utc`](super::Time::to_utc)).
#[derive(Debug, Clone)]
pub struct Tz {
    zone: TimeZone,
}

impl Tz {
    /// UTC.
    pub fn utc() -> Tz {
        Tz { zone: TimeZone::UTC }
    }

    /// A zone by name, as TiDB sends `DAGRequest.time_zone_name`.
    ///
    /// Accepts IANA names (`"Asia/Shanghai"`, `"UTC"`, case-insensitively), MySQL offset
    /// strings `"+08:00"` / `"-05:30"` (`[+-]H[H]:MM`, from `-13:59` to `+14:00` as MySQL 8
    /// allows, a superset of TiDB's `-12:59`..`+13:00`), and `"SYSTEM"`, which is taken as UTC:
    /// this process has no business guessing the TiDB server's system zone, and TiDB resolves it
    /// before sending a request.
    ///
    /// Errors: [`Error::TimeZone`] for an unknown name or an offset out of range.
    pub fn from_name(name: &str) -> Result<Tz> {
        if name.eq_ignore_ascii_case("SYSTEM") {
            return Ok(Tz::utc());
        }
        if let Some(rest) = name.strip_prefix('+') {
            let secs = parse_hh_mm(rest).filter(|&s| s <= MAX_NAMED_OFFSET_EAST);
            return secs.map_or_else(|| Err(zone_error(name)), Tz::from_offset_secs);
        }
        if let Some(rest) = name.strip_prefix('-') {
            let secs = parse_hh_mm(rest).filter(|&s| s <= MAX_NAMED_OFFSET_WEST);
            return secs.map_or_else(|| Err(zone_error(name)), |s| Tz::from_offset_secs(-s));
        }
        if name.is_empty() {
            return Err(zone_error(name));
        }
        TimeZone::get(name).map(|zone| Tz { zone }).map_err(|_| zone_error(name))
    }

    /// A fixed offset in seconds east of UTC, as in `DAGRequest.time_zone_offset`.
    ///
    /// Errors: [`Error::TimeZone`] unless `|secs| < 86400`.
    pub fn from_offset_secs(secs: i64) -> Result<Tz> {
        if secs.unsigned_abs() >= SECS_PER_DAY.unsigned_abs() {
            return Err(Error::TimeZone(secs.to_string()));
        }
        let offset = i32::try_from(secs)
            .ok()
            .and_then(|s| Offset::from_seconds(s).ok())
            .ok_or_else(|| Error::TimeZone(secs.to_string()))?;
        Ok(Tz { zone: TimeZone::fixed(offset) })
    }

    /// The zone of a request, by TiKV's rule: the name when present and non-empty, otherwise the
    /// offset, otherwise UTC.
    ///
    /// Errors: as [`Tz::from_name`] and [`Tz::from_offset_secs`].
    pub fn from_request(name: Option<&str>, offset_secs: Option<i64>) -> Result<Tz> {
        match (name, offset_secs) {
            (Some(name), _) if !name.is_empty() => Tz::from_name(name),
            (_, Some(secs)) => Tz::from_offset_secs(secs),
            _ => Ok(Tz::utc()),
        }
    }

    /// The IANA name of the zone, if it has one (fixed offsets do not).
    pub fn iana_name(&self) -> Option<&str> {
        self.zone.iana_name()
    }

    pub(super) fn zone(&self) -> &TimeZone {
        &self.zone
    }
}

/// `H:MM` or `HH:MM` as seconds.
fn parse_hh_mm(s: &str) -> Option<i64> {
    let (hh, mm) = s.split_once(':')?;
    let all_digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if hh.len() > 2 || mm.len() != 2 || !all_digits(hh) || !all_digits(mm) {
        return None;
    }
    let (h, m): (i64, i64) = (hh.parse().ok()?, mm.parse().ok()?);
    (m < 60).then_some(h * 3600 + m * 60)
}

/// [`Error::TimeZone`] with the name cut to 64 bytes.
fn zone_error(name: &str) -> Error {
    let mut end = name.len().min(64);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    Error::TimeZone(name.get(..end).unwrap_or_default().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_by_name() {
        let secs = |name: &str| {
            Tz::from_name(name).map(|tz| tz.zone.to_fixed_offset().map(|o| o.seconds()).ok())
        };
        assert_eq!(secs("+08:00"), Ok(Some(8 * 3600)));
        assert_eq!(secs("-05:30"), Ok(Some(-(5 * 3600 + 30 * 60))));
        assert_eq!(secs("+8:00"), Ok(Some(8 * 3600)));
        assert_eq!(secs("+14:00"), Ok(Some(14 * 3600)));
        assert_eq!(secs("-13:59"), Ok(Some(-(13 * 3600 + 59 * 60))));
        for bad in ["+14:01", "-14:00", "+08", "+08:60", "+008:00", "+08:0", "+", "-:30", ""] {
            assert!(matches!(Tz::from_name(bad), Err(Error::TimeZone(_))), "{bad}");
        }
    }

    #[test]
    fn error_name_is_cut() {
        let long = "x".repeat(200);
        assert_eq!(Tz::from_name(&long).unwrap_err(), Error::TimeZone("x".repeat(64)));
    }
}
