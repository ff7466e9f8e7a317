//! `DATE`, `DATETIME` and `TIMESTAMP` values with MySQL semantics.
//!
//! A [`Time`] is TiDB's `CoreTime` (TiKV's `Time(u64)`): every calendar field lives in a bit range
//! of one `u64`, so the value is `Copy`, compares with one integer comparison and is written to a
//! TypeChunk column as is ([`Time::to_chunk_u64`]). Storage, keys and TypeDefault rows use the
//! *packed* form instead ([`Time::to_packed_u64`]).
//!
//! Zone handling is explicit: a `TIMESTAMP` held in a [`Time`] is a wall-clock time in whatever
//! zone the caller says it is. Packed timestamps are UTC; use [`Time::from_utc`] after unpacking
//! and [`Time::to_utc`] before packing, with the session's [`Tz`].
//!
//! Like MySQL without `NO_ZERO_DATE`/`NO_ZERO_IN_DATE`, the zero date `0000-00-00` and dates with
//! a zero month or day are representable.

pub mod calendar;
mod civil;
mod parse;
mod tz;

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

pub use tz::Tz;

use crate::error::{Error, Result};

/// Which of the three MySQL temporal types a [`Time`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeType {
    /// `DATE`: no time-of-day part, fsp is always 0.
    Date,
    /// `DATETIME[(fsp)]`: a zone-less wall-clock time.
    DateTime,
    /// `TIMESTAMP[(fsp)]`: an instant, stored in UTC and shown in the session zone.
    Timestamp,
}

/// The largest fractional seconds precision (digits after the point).
pub const MAX_FSP: u8 = 6;

/// The largest year MySQL accepts.
const MAX_YEAR: u32 = 9999;
/// Microseconds per second.
const MICROS_PER_SEC: u32 = 1_000_000;

const YEAR_SHIFT: u32 = 50;
const MONTH_SHIFT: u32 = 46;
const DAY_SHIFT: u32 = 41;
const HOUR_SHIFT: u32 = 36;
const MINUTE_SHIFT: u32 = 30;
const SECOND_SHIFT: u32 = 24;
const MICRO_SHIFT: u32 = 4;
const YEAR_MASK: u64 = (1 << 14) - 1;
const MONTH_MASK: u64 = (1 << 4) - 1;
const DAY_MASK: u64 = (1 << 5) - 1;
const HOUR_MASK: u64 = (1 << 5) - 1;
const MINUTE_MASK: u64 = (1 << 6) - 1;
const SECOND_MASK: u64 = (1 << 6) - 1;
const MICRO_MASK: u64 = (1 << 20) - 1;
/// The low nibble (`fsp_tt`): fsp in bits 3..1, type in bit 0.
const FSP_TT_MASK: u64 = 0b1111;
/// `fsp_tt` of a `DATE`.
const DATE_FSP_TT: u64 = 0b1110;

/// Powers of ten up to 10^7.
const POW10: [u32; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/// `10^(6 - fsp)`: the microsecond step of a fractional precision (`fsp <= 6`).
fn micro_step(fsp: u8) -> u32 {
    POW10.get(usize::from(MAX_FSP.saturating_sub(fsp))).copied().unwrap_or(1)
}

/// Whether `year` is a Gregorian leap year (year 0 is).
pub(crate) fn is_leap_year(year: u32) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

/// The number of days in `month` of `year`; 31 for month 0, as MySQL treats a zero month.
pub(crate) fn last_day_of_month(year: u32, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 31,
    }
}

fn check_fsp(fsp: u8) -> Result<u8> {
    if fsp > MAX_FSP {
        Err(Error::Invalid { what: "fsp", reason: "fractional seconds precision above 6" })
    } else {
        Ok(fsp)
    }
}

/// The seven calendar fields of a time, unpacked, with room for out-of-range values while they
/// are being validated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Parts {
    pub(crate) year: u32,
    pub(crate) month: u32,
    pub(crate) day: u32,
    pub(crate) hour: u32,
    pub(crate) minute: u32,
    pub(crate) second: u32,
    pub(crate) micro: u32,
}

impl Parts {
    /// Checks each field against its MySQL range; zero month and day are allowed.
    fn check_ranges(&self) -> std::result::Result<(), &'static str> {
        if self.year > MAX_YEAR {
            Err("year out of range")
        } else if self.month > 12 {
            Err("month out of range")
        } else if self.day > 31 {
            Err("day out of range")
        } else if self.hour > 23 {
            Err("hour out of range")
        } else if self.minute > 59 {
            Err("minute out of range")
        } else if self.second > 59 {
            Err("second out of range")
        } else if self.micro >= MICROS_PER_SEC {
            Err("microsecond out of range")
        } else {
            Ok(())
        }
    }

    fn has_time(&self) -> bool {
        self.hour != 0 || self.minute != 0 || self.second != 0 || self.micro != 0
    }

    fn is_zero(&self) -> bool {
        *self == Parts::default()
    }

    /// Adds one second, carrying into minutes, hours, days, months and years.
    ///
    /// Returns `false` where MySQL refuses the carry: into a zero day or month, past a day that
    /// does not exist in its month, or out of year 0. The year may end above 9999; callers check.
    fn carry_second(&mut self) -> bool {
        self.second += 1;
        if self.second < 60 {
            return true;
        }
        self.second = 0;
        self.minute += 1;
        if self.minute < 60 {
            return true;
        }
        self.minute = 0;
        self.hour += 1;
        if self.hour < 24 {
            return true;
        }
        self.hour = 0;
        if self.day == 0 {
            return false;
        }
        let last = last_day_of_month(self.year, self.month);
        if self.day > last {
            return false;
        }
        self.day += 1;
        if self.day <= last {
            return true;
        }
        self.day = 1;
        if self.month == 0 {
            return false;
        }
        self.month += 1;
        if self.month <= 12 {
            return true;
        }
        self.month = 1;
        if self.year == 0 {
            return false;
        }
        self.year += 1;
        true
    }
}

/// Rounds `micro` half up to `fsp` digits; returns the result and whether it carried into the
/// seconds (the result is then 0).
fn round_micro(micro: u32, fsp: u8) -> (u32, bool) {
    let step = micro_step(fsp);
    let rounded = (micro + step / 2) / step * step;
    if rounded >= MICROS_PER_SEC { (0, true) } else { (rounded, false) }
}

/// A MySQL `DATE`, `DATETIME` or `TIMESTAMP` value in TiDB's `CoreTime` bit layout.
///
/// Bits, high to low: year 63..50, month 49..46, day 45..41, hour 40..36, minute 35..30,
/// second 29..24, microsecond 23..4, then `fsp_tt` 3..0 (fsp in 3..1, type in bit 0:
/// 0 = `DATETIME`, 1 = `TIMESTAMP`; `0b1110` = `DATE`).
///
/// Every constructor validates the fields, so a `Time` always holds in-range fields.
/// Equality, ordering and hashing look at the instant (year through microsecond) only, not at
/// the fsp or the type, as TiKV does.
#[derive(Clone, Copy)]
pub struct Time(u64);

impl Time {
    /// Packs validated parts; the caller guarantees ranges and `fsp <= 6`.
    fn pack(p: &Parts, tp: TimeType, fsp: u8) -> Time {
        let fsp_tt = match tp {
            TimeType::Date => DATE_FSP_TT,
            TimeType::DateTime => u64::from(fsp) << 1,
            TimeType::Timestamp => (u64::from(fsp) << 1) | 1,
        };
        let (hour, minute, second, micro) = match tp {
            TimeType::Date => (0, 0, 0, 0),
            _ => (p.hour, p.minute, p.second, p.micro),
        };
        Time(
            (u64::from(p.year) << YEAR_SHIFT)
                | (u64::from(p.month) << MONTH_SHIFT)
                | (u64::from(p.day) << DAY_SHIFT)
                | (u64::from(hour) << HOUR_SHIFT)
                | (u64::from(minute) << MINUTE_SHIFT)
                | (u64::from(second) << SECOND_SHIFT)
                | (u64::from(micro) << MICRO_SHIFT)
                | fsp_tt,
        )
    }

    /// Validates parts (ranges; `DATE` must have no time part) and packs them.
    fn checked(p: &Parts, tp: TimeType, fsp: u8) -> Result<Time> {
        let fsp = check_fsp(fsp)?;
        p.check_ranges().map_err(|reason| Error::Invalid { what: "time", reason })?;
        if tp == TimeType::Date && p.has_time() {
            return Err(Error::Invalid { what: "date", reason: "a DATE has no time part" });
        }
        Ok(Time::pack(p, tp, fsp))
    }

    pub(crate) fn parts(&self) -> Parts {
        Parts {
            year: self.year(),
            month: self.month(),
            day: self.day(),
            hour: self.hour(),
            minute: self.minute(),
            second: self.second(),
            micro: self.micro(),
        }
    }

    /// The zero value `0000-00-00 00:00:00` of the given type.
    ///
    /// Errors with [`Error::Invalid`] if `fsp > 6`.
    pub fn zero(tp: TimeType, fsp: u8) -> Result<Time> {
        Time::checked(&Parts::default(), tp, fsp)
    }

    /// Builds a time from its fields, range-checking each one.
    ///
    /// Ranges: year 0..=9999, month 0..=12, day 0..=31, hour 0..=23, minute and second 0..=59,
    /// micro 0..=999999, fsp 0..=6. Zero months and days are accepted (MySQL stores them);
    /// whether the day exists in its month is *not* checked, as MySQL's `ALLOW_INVALID_DATES`
    /// can store such values ([`Time::parse`] does check it). A `DATE` must have a zero time
    /// part. `micro` is kept as given, even with more digits than `fsp`.
    ///
    /// Errors: [`Error::Invalid`] naming the offending field.
    #[expect(clippy::too_many_arguments, reason = "the field list is the required public API")]
    pub fn from_parts(
        year: u32,
        month: u32,
        day: u32,
        hour: u32,
        minute: u32,
        second: u32,
        micro: u32,
        tp: TimeType,
        fsp: u8,
    ) -> Result<Time> {
        Time::checked(&Parts { year, month, day, hour, minute, second, micro }, tp, fsp)
    }

    /// The year, 0..=9999.
    #[inline]
    pub fn year(&self) -> u32 {
        ((self.0 >> YEAR_SHIFT) & YEAR_MASK) as u32
    }

    /// The month, 0..=12 (0 only in zero dates).
    #[inline]
    pub fn month(&self) -> u32 {
        ((self.0 >> MONTH_SHIFT) & MONTH_MASK) as u32
    }

    /// The day of the month, 0..=31 (0 only in zero dates).
    #[inline]
    pub fn day(&self) -> u32 {
        ((self.0 >> DAY_SHIFT) & DAY_MASK) as u32
    }

    /// The hour, 0..=23.
    #[inline]
    pub fn hour(&self) -> u32 {
        ((self.0 >> HOUR_SHIFT) & HOUR_MASK) as u32
    }

    /// The minute, 0..=59.
    #[inline]
    pub fn minute(&self) -> u32 {
        ((self.0 >> MINUTE_SHIFT) & MINUTE_MASK) as u32
    }

    /// The second, 0..=59.
    #[inline]
    pub fn second(&self) -> u32 {
        ((self.0 >> SECOND_SHIFT) & SECOND_MASK) as u32
    }

    /// The microseconds within the second, 0..=999999.
    #[inline]
    pub fn micro(&self) -> u32 {
        ((self.0 >> MICRO_SHIFT) & MICRO_MASK) as u32
    }

    /// The type encoded in the `fsp_tt` nibble.
    #[inline]
    pub fn time_type(&self) -> TimeType {
        let fsp_tt = self.0 & FSP_TT_MASK;
        if fsp_tt == DATE_FSP_TT {
            TimeType::Date
        } else if fsp_tt & 1 == 0 {
            TimeType::DateTime
        } else {
            TimeType::Timestamp
        }
    }

    /// The fractional seconds precision, 0..=6 (always 0 for a `DATE`).
    #[inline]
    pub fn fsp(&self) -> u8 {
        match self.time_type() {
            TimeType::Date => 0,
            _ => ((self.0 & FSP_TT_MASK) >> 1) as u8,
        }
    }

    /// Whether this is the zero value `0000-00-00 00:00:00.000000`.
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.0 >> MICRO_SHIFT == 0
    }

    /// The packed u64 used in storage, keys and TypeDefault rows:
    /// `((((year*13 + month) << 5 | day) << 17 | hour << 12 | minute << 6 | second) << 24) | micro`.
    ///
    /// The fields are packed as they are: convert a `TIMESTAMP` to UTC ([`Time::to_utc`]) first.
    /// The zero time packs to 0.
    pub fn to_packed_u64(&self) -> u64 {
        let ymd =
            ((u64::from(self.year()) * 13 + u64::from(self.month())) << 5) | u64::from(self.day());
        let hms = (u64::from(self.hour()) << 12)
            | (u64::from(self.minute()) << 6)
            | u64::from(self.second());
        (((ymd << 17) | hms) << 24) | u64::from(self.micro())
    }

    /// Where the time a packed `DATE` decodes to sorts, without decoding it: `packed` itself
    /// when [`Time::from_packed_u64`] takes it checking the year only (no time part, a year
    /// up to 9999, `fsp` at most 6), `None` otherwise. Then, for every time `t`,
    /// `Time::from_packed_u64(packed, tp, fsp)?.cmp(&t)` is `packed.cmp(&t.to_packed_u64())`:
    /// a comparison with a constant needs no decoding.
    #[inline]
    pub fn date_order(packed: u64, tp: TimeType, fsp: u8) -> Option<u64> {
        // `packed >> 46` is `year * 13 + month`.
        let year_ok = packed >> 46 < (u64::from(MAX_YEAR) + 1) * 13;
        (tp == TimeType::Date && packed & ((1 << 41) - 1) == 0 && fsp <= MAX_FSP && year_ok)
            .then_some(packed)
    }

    /// Decodes a packed u64 (see [`Time::to_packed_u64`]) as type `tp` with precision `fsp`.
    ///
    /// The fields are validated like [`Time::from_parts`]; 0 decodes to the zero time. A packed
    /// `TIMESTAMP` is UTC: follow with [`Time::from_utc`] for the session zone.
    ///
    /// Errors: [`Error::Invalid`] for an out-of-range field, a `DATE` with a time part or
    /// `fsp > 6`.
    #[inline]
    pub fn from_packed_u64(packed: u64, tp: TimeType, fsp: u8) -> Result<Time> {
        // Fast path for the common `DATE`: no time part (the low 41 bits are zero), so only
        // the year needs a range check (the month is a remainder mod 13, the day 5 bits).
        if tp == TimeType::Date && packed & ((1 << 41) - 1) == 0 && fsp <= MAX_FSP {
            let ymd = packed >> 41;
            let ym = ymd >> 5;
            // `packed >> 46` fits in 18 bits, so `year` fits in 15.
            let year = ym / 13;
            if year <= u64::from(MAX_YEAR) {
                return Ok(Time(
                    (year << YEAR_SHIFT)
                        | ((ym % 13) << MONTH_SHIFT)
                        | ((ymd & 31) << DAY_SHIFT)
                        | DATE_FSP_TT,
                ));
            }
        }
        Time::from_packed_u64_checked(packed, tp, fsp)
    }

    /// The general path of [`Time::from_packed_u64`]: unpacks and validates every field.
    fn from_packed_u64_checked(packed: u64, tp: TimeType, fsp: u8) -> Result<Time> {
        let micro = (packed & ((1 << 24) - 1)) as u32;
        let ymdhms = packed >> 24;
        let hms = ymdhms & ((1 << 17) - 1);
        let ymd = ymdhms >> 17;
        let ym = ymd >> 5;
        let parts = Parts {
            // `packed >> 46` fits in 18 bits.
            year: (ym / 13) as u32,
            month: (ym % 13) as u32,
            day: (ymd & 31) as u32,
            hour: (hms >> 12) as u32,
            minute: ((hms >> 6) & 63) as u32,
            second: (hms & 63) as u32,
            micro,
        };
        Time::checked(&parts, tp, fsp)
    }

    /// The `CoreTime` bits, as written to TypeChunk columns (little-endian) and held in memory.
    #[inline]
    pub fn to_chunk_u64(&self) -> u64 {
        self.0
    }

    /// Reads `CoreTime` bits, validating every field and the `fsp_tt` nibble.
    ///
    /// Errors: [`Error::Invalid`] for an out-of-range field, the nibble `0b1111` (fsp 7) or a
    /// `DATE` with a time part.
    pub fn from_chunk_u64(v: u64) -> Result<Time> {
        let fsp_tt = v & FSP_TT_MASK;
        if fsp_tt == 0b1111 {
            return Err(Error::Invalid { what: "time", reason: "fsp_tt nibble 0b1111" });
        }
        let t = Time(v);
        Time::checked(&t.parts(), t.time_type(), t.fsp())
    }

    /// Parses MySQL's string forms of a date and time.
    ///
    /// Accepted: `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS[.ffffff]` (any ASCII punctuation as a
    /// delimiter, whitespace or `T` between date and time, one- or two-digit fields, trailing
    /// fields optional), the delimiter-free `YYYYMMDD`, `YYYYMMDDHHMMSS[.f]`, `YYMMDD`,
    /// `YYMMDDHHMM[SS][.f]` forms (and the 5-, 7-, 9- and 11-digit forms MySQL reads in pairs),
    /// and `0000-00-00 00:00:00`. Two-digit years 70..=99 mean 19xx and 00..=69 mean 20xx.
    ///
    /// The fraction is rounded half up to `fsp` digits, carrying into seconds, minutes … years
    /// (`'2019-12-31 23:59:59.9999995'` at fsp 6 is `2020-01-01 00:00:00.000000`); a carry into a
    /// zero day or month is refused. A `DATE` drops the time part without rounding, as TiKV does.
    /// The day must exist in its month (`2019-02-30` is refused) unless it is 0; a `TIMESTAMP`
    /// may not have a zero month or day unless the whole value is zero. The `TIMESTAMP` range is
    /// a UTC range and is checked by [`Time::to_utc`]; the result here is the wall time as written.
    ///
    /// Unlike MySQL in non-strict mode, trailing garbage is an error rather than a warning.
    ///
    /// Errors: [`Error::Invalid`] if `fsp > 6`, [`Error::Parse`] for anything else.
    pub fn parse(s: &str, tp: TimeType, fsp: u8) -> Result<Time> {
        let fsp = check_fsp(fsp)?;
        parse::parse_time(s, tp, fsp).ok_or_else(|| crate::error::parse_error(what_of(tp), s))
    }

    /// Rounds the fraction half up to `fsp` digits (carrying into the seconds and up) and sets
    /// the precision to `fsp`.
    ///
    /// A `DATE` and the zero time only take the new precision. As in TiKV, a carry MySQL refuses
    /// (`2012-01-00 23:59:59.9999` or `2012-04-31 23:59:59.9999` rounded to 0 digits) gives the
    /// zero time.
    ///
    /// Errors: [`Error::Invalid`] if `fsp > 6`, [`Error::Overflow`] past year 9999.
    pub fn round_frac(&self, fsp: u8) -> Result<Time> {
        let fsp = check_fsp(fsp)?;
        let tp = self.time_type();
        if tp == TimeType::Date {
            return Ok(*self);
        }
        let mut p = self.parts();
        let (micro, carry) = round_micro(p.micro, fsp);
        p.micro = micro;
        if carry && !p.carry_second() {
            return Ok(Time::pack(&Parts::default(), tp, fsp));
        }
        if p.year > MAX_YEAR {
            return Err(Error::Overflow { what: what_of(tp) });
        }
        Ok(Time::pack(&p, tp, fsp))
    }

    /// Converts to another temporal type and precision, without any zone conversion.
    ///
    /// To `DATE`: the time part is rounded to whole seconds and dropped, so
    /// `1999-12-31 23:59:59.5` becomes `2000-01-01` (MySQL's documented DATETIME-to-DATE rule).
    /// To `DATETIME` or `TIMESTAMP`: the fraction is rounded to `fsp` as in [`Time::round_frac`].
    ///
    /// Errors: [`Error::Invalid`] if `fsp > 6`, [`Error::Overflow`] past year 9999.
    pub fn with_type(&self, tp: TimeType, fsp: u8) -> Result<Time> {
        let fsp = check_fsp(fsp)?;
        let parts = self.parts();
        match tp {
            TimeType::Date if self.time_type() == TimeType::Date => Ok(*self),
            TimeType::Date => {
                let whole = Time::pack(&parts, TimeType::DateTime, MAX_FSP).round_frac(0)?;
                Ok(Time::pack(&whole.parts(), TimeType::Date, 0))
            }
            _ => Time::pack(&parts, tp, MAX_FSP).round_frac(fsp),
        }
    }

    /// Writes the MySQL text form into `out`: `YYYY-MM-DD` for a `DATE`, otherwise
    /// `YYYY-MM-DD HH:MM:SS` followed by `.` and the first `fsp` digits of the microseconds when
    /// `fsp > 0`.
    pub fn write_str(&self, out: &mut Vec<u8>) {
        let mut buf = [0u8; 26];
        let len = self.format_into(&mut buf);
        out.extend_from_slice(buf.get(..len).unwrap_or(&buf));
    }

    /// Formats into a stack buffer, returning the length used (at most 26).
    fn format_into(&self, buf: &mut [u8; 26]) -> usize {
        put_digits(&mut buf[0..4], self.year());
        buf[4] = b'-';
        put_digits(&mut buf[5..7], self.month());
        buf[7] = b'-';
        put_digits(&mut buf[8..10], self.day());
        if self.time_type() == TimeType::Date {
            return 10;
        }
        buf[10] = b' ';
        put_digits(&mut buf[11..13], self.hour());
        buf[13] = b':';
        put_digits(&mut buf[14..16], self.minute());
        buf[16] = b':';
        put_digits(&mut buf[17..19], self.second());
        let fsp = usize::from(self.fsp());
        if fsp == 0 {
            return 19;
        }
        buf[19] = b'.';
        put_digits(&mut buf[20..20 + fsp], self.micro() / micro_step(fsp as u8));
        20 + fsp
    }

    /// The day number MySQL's `TO_DAYS()` returns (days since year 0, `0000-01-01` = 1), or
    /// `None` for a date with a zero month or day.
    pub fn day_number(&self) -> Option<u32> {
        let (year, month, day) =
            (i64::from(self.year()), i64::from(self.month()), i64::from(self.day()));
        if month == 0 || day == 0 {
            return None;
        }
        let mut delsum = 365 * year + 31 * (month - 1) + day;
        let mut y = year;
        if month <= 2 {
            y -= 1;
        } else {
            delsum -= (month * 4 + 23) / 10;
        }
        let temp = ((y / 100 + 1) * 3) / 4;
        u32::try_from(delsum + y / 4 - temp).ok()
    }

    /// The day of the week as MySQL's `WEEKDAY()`: 0 = Monday … 6 = Sunday, or `None` for a
    /// date with a zero month or day.
    pub fn weekday(&self) -> Option<u32> {
        self.day_number().map(|n| (n + 5) % 7)
    }
}

/// The type name used in errors.
fn what_of(tp: TimeType) -> &'static str {
    match tp {
        TimeType::Date => "date",
        TimeType::DateTime => "datetime",
        TimeType::Timestamp => "timestamp",
    }
}

/// Writes `value` as `out.len()` zero-padded decimal digits (the high digits are dropped if it
/// does not fit).
pub(crate) fn put_digits(out: &mut [u8], mut value: u32) {
    for slot in out.iter_mut().rev() {
        *slot = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

impl PartialEq for Time {
    fn eq(&self, other: &Time) -> bool {
        self.0 >> MICRO_SHIFT == other.0 >> MICRO_SHIFT
    }
}

impl Eq for Time {}

impl PartialOrd for Time {
    fn partial_cmp(&self, other: &Time) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Time {
    fn cmp(&self, other: &Time) -> Ordering {
        (self.0 >> MICRO_SHIFT).cmp(&(other.0 >> MICRO_SHIFT))
    }
}

impl Hash for Time {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.0 >> MICRO_SHIFT).hash(state);
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 26];
        let len = self.format_into(&mut buf);
        let text = buf.get(..len).and_then(|b| std::str::from_utf8(b).ok()).ok_or(fmt::Error)?;
        f.write_str(text)
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Time")
            .field("value", &format_args!("{self}"))
            .field("micro", &self.micro())
            .field("type", &self.time_type())
            .field("fsp", &self.fsp())
            .finish()
    }
}

#[cfg(test)]
mod tests;
