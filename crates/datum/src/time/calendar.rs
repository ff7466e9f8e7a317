//! MySQL's calendar arithmetic: day numbers, week numbers and their inverses, as MySQL's
//! `sql_time.cc` (`calc_daynr`, `get_date_from_daynr`, `calc_week`) defines them.
//!
//! MySQL's proleptic calendar differs from ISO in two places these functions keep: year 0 is
//! *not* a leap year here (`calc_days_in_year(0)` is 365), and day numbers up to 365 all map to
//! the zero date.

use super::Time;

/// The day number of `9999-12-31`: the largest a date can have.
pub const MAX_DAY_NUMBER: i64 = 3_652_424;

/// The days of each month of a common year.
const DAYS_IN_MONTH: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/// `WEEK()` mode bit: weeks start on Monday.
pub const WEEK_MONDAY_FIRST: u32 = 1;
/// `WEEK()` mode bit: the week belongs to the year that holds most of it (weeks 1..=53).
pub const WEEK_YEAR: u32 = 2;
/// `WEEK()` mode bit: week 1 is the first week with a first day of the week in the year.
pub const WEEK_FIRST_WEEKDAY: u32 = 4;

/// The days in `year` by MySQL's rule (year 0 has 365).
pub fn days_in_year(year: u32) -> u32 {
    let leap =
        year & 3 == 0 && (!year.is_multiple_of(100) || (year.is_multiple_of(400) && year != 0));
    if leap { 366 } else { 365 }
}

/// The days in `month` (1..=12) of `year` by MySQL's rule; 31 for a month out of range.
pub fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if days_in_year(year) == 366 => 29,
        1..=12 => DAYS_IN_MONTH.get(month as usize - 1).copied().unwrap_or(31),
        _ => 31,
    }
}

/// MySQL's `calc_daynr`: days since year 0 (`0000-01-01` is 1); 0 for year and month 0.
///
/// Unlike [`Time::day_number`], a zero day or month is computed through, as MySQL does inside
/// its week and interval arithmetic.
pub fn day_number(year: u32, month: u32, day: u32) -> i64 {
    if year == 0 && month == 0 {
        return 0;
    }
    let (year, month, day) = (i64::from(year), i64::from(month), i64::from(day));
    let mut delsum = 365 * year + 31 * (month - 1) + day;
    let mut y = year;
    if month <= 2 {
        y -= 1;
    } else {
        delsum -= (month * 4 + 23) / 10;
    }
    let temp = ((y / 100 + 1) * 3) / 4;
    delsum + y / 4 - temp
}

/// MySQL's `get_date_from_daynr`: the `(year, month, day)` of a day number, `(0, 0, 0)` for
/// numbers up to 365 and from 3652500 on.
pub fn date_from_day_number(daynr: i64) -> (u32, u32, u32) {
    if !(366..3_652_500).contains(&daynr) {
        return (0, 0, 0);
    }
    // In range, so every intermediate fits.
    let mut year = (daynr * 100 / 36525) as u32;
    let temp = ((year.saturating_sub(1) / 100 + 1) * 3) / 4;
    let mut day_of_year =
        (daynr - i64::from(year) * 365) as u32 - year.saturating_sub(1) / 4 + temp;
    let mut len = days_in_year(year);
    while day_of_year > len {
        day_of_year -= len;
        year += 1;
        len = days_in_year(year);
    }
    let mut leap_day = 0;
    if len == 366 && day_of_year > 31 + 28 {
        day_of_year -= 1;
        if day_of_year == 31 + 28 {
            leap_day = 1;
        }
    }
    let mut month = 1;
    for m in DAYS_IN_MONTH {
        if day_of_year <= m {
            break;
        }
        day_of_year -= m;
        month += 1;
    }
    (year, month, day_of_year + leap_day)
}

/// MySQL's `calc_weekday`: 0 = Monday … 6 = Sunday, or 0 = Sunday … when `sunday_first`.
pub fn weekday_of(daynr: i64, sunday_first: bool) -> u32 {
    (daynr + 5 + i64::from(sunday_first)).rem_euclid(7) as u32
}

/// MySQL's `week_mode`: the `calc_week` behaviour of a `WEEK()` mode argument.
pub fn week_mode(mode: u32) -> u32 {
    let mut m = mode & 7;
    if m & WEEK_MONDAY_FIRST == 0 {
        m ^= WEEK_FIRST_WEEKDAY;
    }
    m
}

/// MySQL's `calc_week`: the week number of a date and the year it belongs to, for a behaviour
/// made of the `WEEK_*` bits (see [`week_mode`]).
pub fn calc_week(year: u32, month: u32, day: u32, behaviour: u32) -> (u32, u32) {
    let daynr = day_number(year, month, day);
    let mut first_daynr = day_number(year, 1, 1);
    let monday_first = behaviour & WEEK_MONDAY_FIRST != 0;
    let mut week_year = behaviour & WEEK_YEAR != 0;
    let first_weekday = behaviour & WEEK_FIRST_WEEKDAY != 0;

    let mut weekday = i64::from(weekday_of(first_daynr, !monday_first));
    let mut year = year;
    if month == 1 && i64::from(day) <= 7 - weekday {
        if !week_year && ((first_weekday && weekday != 0) || (!first_weekday && weekday >= 4)) {
            return (year, 0);
        }
        week_year = true;
        year = year.wrapping_sub(1);
        let len = i64::from(days_in_year(year));
        first_daynr -= len;
        weekday = (weekday + 53 * 7 - len).rem_euclid(7);
    }
    let days = if (first_weekday && weekday != 0) || (!first_weekday && weekday >= 4) {
        daynr - (first_daynr + (7 - weekday))
    } else {
        daynr - (first_daynr - weekday)
    };
    if week_year && days >= 52 * 7 {
        let wd = (weekday + i64::from(days_in_year(year))).rem_euclid(7);
        if (!first_weekday && wd < 4) || (first_weekday && wd == 0) {
            return (year.wrapping_add(1), 1);
        }
    }
    (year, (days.div_euclid(7) + 1).clamp(0, 54) as u32)
}

impl Time {
    /// MySQL's `WEEK(t, mode)` (modes 0..=7; higher bits are ignored).
    pub fn week(&self, mode: u32) -> u32 {
        calc_week(self.year(), self.month(), self.day(), week_mode(mode)).1
    }

    /// MySQL's `YEARWEEK(t, mode)` as `(year, week)`.
    pub fn year_week(&self, mode: u32) -> (u32, u32) {
        calc_week(self.year(), self.month(), self.day(), week_mode(mode) | WEEK_YEAR)
    }

    /// MySQL's `DAYOFYEAR(t)`: 1..=366 (computed through zero months and days, as MySQL).
    pub fn day_of_year(&self) -> i64 {
        day_number(self.year(), self.month(), self.day()) - day_number(self.year(), 1, 1) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_numbers_round_trip() {
        // MySQL: TO_DAYS('2007-10-07') = 733321, FROM_DAYS(730669) = '2000-07-03'.
        assert_eq!(day_number(2007, 10, 7), 733_321);
        assert_eq!(date_from_day_number(730_669), (2000, 7, 3));
        assert_eq!(day_number(9999, 12, 31), MAX_DAY_NUMBER);
        assert_eq!(date_from_day_number(365), (0, 0, 0));
        assert_eq!(date_from_day_number(366), (1, 1, 1));
        assert_eq!(date_from_day_number(3_652_500), (0, 0, 0));
        for n in (366..3_652_424).step_by(997) {
            let (y, m, d) = date_from_day_number(n);
            assert_eq!(day_number(y, m, d), n, "{n} -> {y}-{m}-{d}");
        }
        assert_eq!(date_from_day_number(day_number(2000, 2, 29)), (2000, 2, 29));
        assert_eq!(date_from_day_number(day_number(1900, 3, 1)), (1900, 3, 1));
    }

    #[test]
    fn weeks_of_the_mysql_manual() {
        // The manual's examples: WEEK('2008-02-20') = 7, WEEK('2008-02-20', 1) = 8,
        // WEEK('2008-12-31', 1) = 53, YEARWEEK('1987-01-01') = 198652.
        assert_eq!(calc_week(2008, 2, 20, week_mode(0)).1, 7);
        assert_eq!(calc_week(2008, 2, 20, week_mode(1)).1, 8);
        assert_eq!(calc_week(2008, 12, 31, week_mode(1)).1, 53);
        assert_eq!(calc_week(1987, 1, 1, week_mode(0) | WEEK_YEAR), (1986, 52));
        // WEEK('2000-01-01', 0) = 0 and WEEK('2000-01-01', 2) = 52.
        assert_eq!(calc_week(2000, 1, 1, week_mode(0)).1, 0);
        assert_eq!(calc_week(2000, 1, 1, week_mode(2)).1, 52);
        // ISO week (mode 3): 2020-12-31 is in week 53, 2021-01-03 too, 2021-01-04 week 1.
        assert_eq!(calc_week(2020, 12, 31, week_mode(3)).1, 53);
        assert_eq!(calc_week(2021, 1, 3, week_mode(3)).1, 53);
        assert_eq!(calc_week(2021, 1, 4, week_mode(3)).1, 1);
    }

    #[test]
    fn year_zero_is_common() {
        assert_eq!(days_in_year(0), 365);
        assert_eq!(days_in_year(2000), 366);
        assert_eq!(days_in_year(1900), 365);
        assert_eq!(weekday_of(day_number(2024, 1, 1), false), 0);
    }

    proptest::proptest! {
        #[test]
        fn calendar_never_panics(y in 0u32..10_000, m in 0u32..13, d in 0u32..32, mode in 0u32..8) {
            let _ = calc_week(y, m, d, week_mode(mode));
            let _ = calc_week(y, m, d, week_mode(mode) | WEEK_YEAR);
            let _ = date_from_day_number(day_number(y, m, d));
        }
    }
}
