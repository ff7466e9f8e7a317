//! `INTERVAL expr unit`: the units, and an interval value read from a number or a string
//! as MySQL's `get_interval_value` reads it, and applied as its `date_add_interval`.

use rcop_datum::time::calendar::{self, MAX_DAY_NUMBER};

/// An interval unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// `MICROSECOND`.
    Microsecond,
    /// `SECOND`.
    Second,
    /// `MINUTE`.
    Minute,
    /// `HOUR`.
    Hour,
    /// `DAY`.
    Day,
    /// `WEEK`.
    Week,
    /// `MONTH`.
    Month,
    /// `QUARTER`.
    Quarter,
    /// `YEAR`.
    Year,
    /// `SECOND_MICROSECOND`.
    SecondMicrosecond,
    /// `MINUTE_MICROSECOND`.
    MinuteMicrosecond,
    /// `MINUTE_SECOND`.
    MinuteSecond,
    /// `HOUR_MICROSECOND`.
    HourMicrosecond,
    /// `HOUR_SECOND`.
    HourSecond,
    /// `HOUR_MINUTE`.
    HourMinute,
    /// `DAY_MICROSECOND`.
    DayMicrosecond,
    /// `DAY_SECOND`.
    DaySecond,
    /// `DAY_MINUTE`.
    DayMinute,
    /// `DAY_HOUR`.
    DayHour,
    /// `YEAR_MONTH`.
    YearMonth,
}

impl Unit {
    /// The unit of its SQL name (any case).
    pub fn from_name(s: &[u8]) -> Option<Unit> {
        use Unit::*;
        let s = std::str::from_utf8(s).ok()?.trim().to_ascii_uppercase();
        Some(match s.as_str() {
            "MICROSECOND" => Microsecond,
            "SECOND" => Second,
            "MINUTE" => Minute,
            "HOUR" => Hour,
            "DAY" => Day,
            "WEEK" => Week,
            "MONTH" => Month,
            "QUARTER" => Quarter,
            "YEAR" => Year,
            "SECOND_MICROSECOND" => SecondMicrosecond,
            "MINUTE_MICROSECOND" => MinuteMicrosecond,
            "MINUTE_SECOND" => MinuteSecond,
            "HOUR_MICROSECOND" => HourMicrosecond,
            "HOUR_SECOND" => HourSecond,
            "HOUR_MINUTE" => HourMinute,
            "DAY_MICROSECOND" => DayMicrosecond,
            "DAY_SECOND" => DaySecond,
            "DAY_MINUTE" => DayMinute,
            "DAY_HOUR" => DayHour,
            "YEAR_MONTH" => YearMonth,
            _ => return None,
        })
    }

    /// Whether the unit counts whole months (the result keeps the day of the month).
    pub fn is_months(self) -> bool {
        matches!(self, Unit::Month | Unit::Quarter | Unit::Year | Unit::YearMonth)
    }

    /// Whether the unit has a time-of-day part: a `DATE` plus it is a `DATETIME`.
    pub fn is_clock(self) -> bool {
        !matches!(
            self,
            Unit::Day | Unit::Week | Unit::Month | Unit::Quarter | Unit::Year | Unit::YearMonth
        )
    }

    /// Whether a value is one number (the simple units) rather than a string of fields.
    pub fn is_simple(self) -> bool {
        matches!(
            self,
            Unit::Microsecond
                | Unit::Second
                | Unit::Minute
                | Unit::Hour
                | Unit::Day
                | Unit::Week
                | Unit::Month
                | Unit::Quarter
                | Unit::Year
        )
    }

    /// The fields of a compound unit, and whether the last is microseconds.
    fn fields(self) -> (usize, bool) {
        use Unit::*;
        match self {
            YearMonth | DayHour | HourMinute | MinuteSecond => (2, false),
            DayMinute | HourSecond => (3, false),
            DaySecond => (4, false),
            SecondMicrosecond => (2, true),
            MinuteMicrosecond => (3, true),
            HourMicrosecond => (4, true),
            DayMicrosecond => (5, true),
            _ => (1, false),
        }
    }
}

/// An interval value: MySQL's `Interval` (magnitudes and a sign).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Interval {
    /// Negative.
    pub neg: bool,
    /// Years.
    pub year: u64,
    /// Months.
    pub month: u64,
    /// Days.
    pub day: u64,
    /// Hours.
    pub hour: u64,
    /// Minutes.
    pub minute: u64,
    /// Seconds.
    pub second: u64,
    /// Microseconds.
    pub micro: u64,
}

impl Interval {
    /// A simple unit's value of `v` units.
    pub fn simple(unit: Unit, v: i64) -> Interval {
        let mut iv = Interval { neg: v < 0, ..Interval::default() };
        let m = v.unsigned_abs();
        match unit {
            Unit::Microsecond => iv.micro = m,
            Unit::Second => iv.second = m,
            Unit::Minute => iv.minute = m,
            Unit::Hour => iv.hour = m,
            Unit::Day => iv.day = m,
            Unit::Week => iv.day = m.saturating_mul(7),
            Unit::Month => iv.month = m,
            Unit::Quarter => iv.month = m.saturating_mul(3),
            Unit::Year => iv.year = m,
            _ => {}
        }
        iv
    }

    /// `SECOND` with a fraction: whole seconds and microseconds (truncated).
    pub fn seconds(neg: bool, secs: u64, micro: u64) -> Interval {
        Interval { neg, second: secs, micro, ..Interval::default() }
    }

    /// A compound unit's value read from `s` (MySQL's `get_interval_info`): an optional `-`,
    /// then up to the unit's number of digit runs, separated by anything; fewer runs fill the
    /// unit's last fields. `None` for too many runs or a value too large.
    pub fn parse_fields(unit: Unit, s: &[u8]) -> Option<Interval> {
        let (count, msec) = unit.fields();
        let mut s = s.trim_ascii_start();
        let mut iv = Interval::default();
        if let Some(rest) = s.strip_prefix(b"-") {
            iv.neg = true;
            s = rest;
        }
        let mut values = [0u64; 5];
        let skip = |s: &[u8]| s.iter().position(u8::is_ascii_digit).unwrap_or(s.len());
        let mut rest = s.get(skip(s)..)?;
        let mut i = 0;
        while i < count {
            let len = rest.iter().position(|b| !b.is_ascii_digit()).unwrap_or(rest.len());
            let (digits, tail) = rest.split_at(len);
            let mut v: u64 = 0;
            for d in digits {
                if v > (i64::MAX as u64 - 10) / 10 {
                    return None;
                }
                v = v * 10 + u64::from(d - b'0');
            }
            if msec && i == count - 1 && digits.len() < 6 {
                v *= 10u64.pow(6 - digits.len() as u32);
            }
            *values.get_mut(i)? = v;
            rest = tail.get(skip(tail)..)?;
            i += 1;
            if rest.is_empty() && i < count {
                // Fewer fields than the unit has: they are its last ones.
                values.copy_within(0..i, count - i);
                values.get_mut(..count - i)?.fill(0);
                break;
            }
        }
        if !rest.is_empty() {
            return None;
        }
        let v = values;
        use Unit::*;
        match unit {
            YearMonth => (iv.year, iv.month) = (v[0], v[1]),
            DayHour => (iv.day, iv.hour) = (v[0], v[1]),
            DayMinute => (iv.day, iv.hour, iv.minute) = (v[0], v[1], v[2]),
            DaySecond => (iv.day, iv.hour, iv.minute, iv.second) = (v[0], v[1], v[2], v[3]),
            HourMinute => (iv.hour, iv.minute) = (v[0], v[1]),
            HourSecond => (iv.hour, iv.minute, iv.second) = (v[0], v[1], v[2]),
            MinuteSecond => (iv.minute, iv.second) = (v[0], v[1]),
            DayMicrosecond => {
                (iv.day, iv.hour, iv.minute, iv.second, iv.micro) = (v[0], v[1], v[2], v[3], v[4])
            }
            HourMicrosecond => (iv.hour, iv.minute, iv.second, iv.micro) = (v[0], v[1], v[2], v[3]),
            MinuteMicrosecond => (iv.minute, iv.second, iv.micro) = (v[0], v[1], v[2]),
            SecondMicrosecond => (iv.second, iv.micro) = (v[0], v[1]),
            _ => return None,
        }
        Some(iv)
    }

    /// The interval negated (DATE_SUB).
    pub fn negate(mut self) -> Interval {
        self.neg = !self.neg;
        self
    }

    /// The interval as signed nanoseconds, for a `TIME`; `None` when it has months or
    /// overflows.
    pub fn nanos(&self) -> Option<i64> {
        if self.year != 0 || self.month != 0 {
            return None;
        }
        let secs = i128::from(self.day) * 86_400
            + i128::from(self.hour) * 3600
            + i128::from(self.minute) * 60
            + i128::from(self.second);
        let n = secs * 1_000_000_000 + i128::from(self.micro) * 1000;
        i64::try_from(if self.neg { -n } else { n }).ok()
    }
}

/// Date and time fields being computed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fields {
    /// Year.
    pub year: u32,
    /// Month.
    pub month: u32,
    /// Day.
    pub day: u32,
    /// Hour.
    pub hour: u32,
    /// Minute.
    pub minute: u32,
    /// Second.
    pub second: u32,
    /// Microsecond.
    pub micro: u32,
}

/// MySQL's `date_add_interval`: `None` when the result leaves years 1..=9999 (MySQL's
/// "datetime field overflow"; month units may reach year 0).
pub fn add_interval(t: Fields, iv: &Interval, months: bool) -> Option<Fields> {
    let sign: i128 = if iv.neg { -1 } else { 1 };
    let mut r = t;
    if months {
        let period =
            i128::from(t.year) * 12 + sign * i128::from(iv.year) * 12 + i128::from(t.month) - 1
                + sign * i128::from(iv.month);
        if !(0..120_000).contains(&period) {
            return None;
        }
        r.year = (period / 12) as u32;
        r.month = (period % 12) as u32 + 1;
        let last = calendar::days_in_month(r.year, r.month);
        if r.day > last {
            r.day = last;
        }
        return Some(r);
    }
    let max = i128::from(MAX_DAY_NUMBER);
    if i128::from(iv.day) > max
        || i128::from(iv.hour) > max * 24
        || i128::from(iv.minute) > max * 24 * 60
        || i128::from(iv.second) > max * 24 * 3600
    {
        return None;
    }
    let mut micro = i128::from(t.micro) + sign * i128::from(iv.micro);
    let extra = micro / 1_000_000;
    micro %= 1_000_000;
    let mut sec = (i128::from(t.day) - 1) * 86_400
        + i128::from(t.hour) * 3600
        + i128::from(t.minute) * 60
        + i128::from(t.second)
        + sign
            * (i128::from(iv.day) * 86_400
                + i128::from(iv.hour) * 3600
                + i128::from(iv.minute) * 60
                + i128::from(iv.second))
        + extra;
    if micro < 0 {
        micro += 1_000_000;
        sec -= 1;
    }
    let mut days = sec / 86_400;
    sec -= days * 86_400;
    if sec < 0 {
        days -= 1;
        sec += 86_400;
    }
    let daynr = i128::from(calendar::day_number(t.year, t.month, 1)) + days;
    // Day numbers up to 365 are the zero date in MySQL's calendar: an overflow too.
    if !(366..=max).contains(&daynr) {
        return None;
    }
    let (y, m, d) = calendar::date_from_day_number(daynr as i64);
    Some(Fields {
        year: y,
        month: m,
        day: d,
        hour: (sec / 3600) as u32,
        minute: (sec / 60 % 60) as u32,
        second: (sec % 60) as u32,
        micro: micro as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compound_fields() {
        let p = |u: &str, s: &str| {
            Interval::parse_fields(Unit::from_name(u.as_bytes()).unwrap(), s.as_bytes())
        };
        let iv = p("DAY_SECOND", "1 2:3:4").unwrap();
        assert_eq!((iv.day, iv.hour, iv.minute, iv.second), (1, 2, 3, 4));
        // Fewer fields fill the last ones.
        let iv = p("DAY_SECOND", "3:4").unwrap();
        assert_eq!((iv.day, iv.hour, iv.minute, iv.second), (0, 0, 3, 4));
        let iv = p("MINUTE_MICROSECOND", "-1:2.5").unwrap();
        assert_eq!((iv.neg, iv.minute, iv.second, iv.micro), (true, 1, 2, 500_000));
        assert!(p("HOUR_MINUTE", "1:2:3").is_none());
        assert!(p("YEAR_MONTH", "99999999999999999999-1").is_none());
    }

    #[test]
    fn months_clamp_the_day() {
        let f = Fields { year: 2020, month: 1, day: 31, hour: 0, minute: 0, second: 0, micro: 0 };
        let r = add_interval(f, &Interval::simple(Unit::Month, 1), true).unwrap();
        assert_eq!((r.year, r.month, r.day), (2020, 2, 29));
        let r = add_interval(f, &Interval::simple(Unit::Day, -31), false).unwrap();
        assert_eq!((r.year, r.month, r.day), (2019, 12, 31));
        assert!(add_interval(f, &Interval::simple(Unit::Year, 8000), true).is_none());
    }
}
