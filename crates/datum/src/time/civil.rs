//! Conversions through jiff's civil datetime: time zones, the system clock and adding a
//! duration.

use super::*;

impl Time {
    /// Converts a `TIMESTAMP` held in UTC (as unpacked from storage) to the wall time in `tz`.
    ///
    /// The zero time stays zero and `DATE`/`DATETIME` values are returned unchanged. The
    /// `TIMESTAMP` range is not checked here, so any stored value can be read.
    ///
    /// Errors: [`Error::Invalid`] if the date does not exist (zero month or day, Feb 30),
    /// [`Error::Overflow`] if the instant is outside what jiff represents (after
    /// `9999-12-30 22:00` UTC) or the result leaves years 0..=9999.
    pub fn from_utc(&self, tz: &Tz) -> Result<Time> {
        if self.time_type() != TimeType::Timestamp || self.is_zero() {
            return Ok(*self);
        }
        let utc = jiff::tz::Offset::UTC
            .to_timestamp(self.civil()?)
            .map_err(|_| Error::Overflow { what: "timestamp" })?;
        Time::from_civil(tz.zone().to_datetime(utc), TimeType::Timestamp, self.fsp())
    }

    /// Converts a `TIMESTAMP` wall time in `tz` to UTC, ready for [`Time::to_packed_u64`].
    ///
    /// Ambiguous wall times are resolved as MySQL does: in a fold (clocks turned back) the
    /// earlier instant is used; a time in a gap (clocks turned forward, e.g. `02:30` on
    /// 2019-03-10 in New York) becomes the first instant after the gap (`07:00 UTC`, which reads
    /// `03:00` locally). TiDB (Go's `time.Date`) would instead give 01:30 EST and TiKV an error.
    ///
    /// The zero time stays zero and `DATE`/`DATETIME` values are returned unchanged.
    ///
    /// Errors: [`Error::Invalid`] if the date does not exist, [`Error::Overflow`] if the instant
    /// is outside the `TIMESTAMP` range `1970-01-01 00:00:01` .. `2038-01-19 03:14:07.999999` UTC.
    pub fn to_utc(&self, tz: &Tz) -> Result<Time> {
        if self.time_type() != TimeType::Timestamp || self.is_zero() {
            return Ok(*self);
        }
        let civil = self.civil()?;
        let overflow = |_| Error::Overflow { what: "timestamp" };
        let zone = tz.zone();
        let ts = match zone.to_ambiguous_timestamp(civil).offset() {
            jiff::tz::AmbiguousOffset::Unambiguous { offset } => {
                offset.to_timestamp(civil).map_err(overflow)?
            }
            jiff::tz::AmbiguousOffset::Fold { before, .. } => {
                before.to_timestamp(civil).map_err(overflow)?
            }
            jiff::tz::AmbiguousOffset::Gap { after, .. } => {
                // Read with the later offset, the wall time falls just before the transition;
                // the transition itself is the first instant after the gap.
                let before_gap = after.to_timestamp(civil).map_err(overflow)?;
                zone.following(before_gap).next().map(|transition| transition.timestamp()).ok_or(
                    Error::Invalid {
                        what: "timestamp",
                        reason: "time zone gap without transition",
                    },
                )?
            }
        };
        let secs = ts.as_second();
        if !(MIN_TIMESTAMP_SECS..=MAX_TIMESTAMP_SECS).contains(&secs) {
            return Err(Error::Overflow { what: "timestamp" });
        }
        Time::from_civil(jiff::tz::Offset::UTC.to_datetime(ts), TimeType::Timestamp, self.fsp())
    }

    /// The current wall time in `tz` by the system clock, as a `DATETIME` with the fraction
    /// truncated to `fsp` digits: what MySQL's `SYSDATE(fsp)` gives a session.
    ///
    /// Errors: [`Error::Invalid`] if `fsp > 6`.
    pub fn now(tz: &Tz, fsp: u8) -> Result<Time> {
        let fsp = check_fsp(fsp)?;
        let now = tz.zone().to_datetime(jiff::Timestamp::now());
        let t = Time::from_civil(now, TimeType::DateTime, MAX_FSP)?;
        let mut p = t.parts();
        p.micro -= p.micro % micro_step(fsp);
        Ok(Time::pack(&p, TimeType::DateTime, fsp))
    }

    /// Today's date in `tz` by the system clock: what MySQL's `CURRENT_DATE` gives a session.
    pub fn today(tz: &Tz) -> Result<Time> {
        let now = tz.zone().to_datetime(jiff::Timestamp::now());
        Time::from_civil(now.date().to_datetime(jiff::civil::Time::midnight()), TimeType::Date, 0)
    }

    /// `self` plus `d`, as a value of type `tp` with `fsp`. MySQL converts a `TIME` to a
    /// `DATETIME` this way, adding it to the current date ([`Time::today`]); a `DATE` result
    /// drops the time part (`CAST(TIME '30:00:00' AS DATE)` is tomorrow).
    pub fn add_duration(
        &self,
        d: &crate::duration::Duration,
        tp: TimeType,
        fsp: u8,
    ) -> Result<Time> {
        let sum = self
            .civil()?
            .checked_add(jiff::SignedDuration::from_nanos(d.nanos()))
            .map_err(|_| Error::Overflow { what: what_of(tp) })?;
        if tp == TimeType::Date {
            return Time::from_civil(sum.date().to_datetime(jiff::civil::Time::midnight()), tp, 0);
        }
        Time::from_civil(sum, tp, MAX_FSP)?.round_frac(fsp)
    }

    fn civil(&self) -> Result<jiff::civil::DateTime> {
        let invalid = |_| Error::Invalid { what: "timestamp", reason: "not a calendar date" };
        // All fields are range-checked, so the narrowing casts are lossless.
        jiff::civil::DateTime::new(
            self.year() as i16,
            self.month() as i8,
            self.day() as i8,
            self.hour() as i8,
            self.minute() as i8,
            self.second() as i8,
            (self.micro() * 1000) as i32,
        )
        .map_err(invalid)
    }

    /// Builds a time from a jiff civil datetime.
    fn from_civil(dt: jiff::civil::DateTime, tp: TimeType, fsp: u8) -> Result<Time> {
        let year = u32::try_from(dt.year()).map_err(|_| Error::Overflow { what: what_of(tp) })?;
        if year > MAX_YEAR {
            return Err(Error::Overflow { what: what_of(tp) });
        }
        let small = |v: i8| u32::from(v.unsigned_abs());
        let parts = Parts {
            year,
            month: small(dt.month()),
            day: small(dt.day()),
            hour: small(dt.hour()),
            minute: small(dt.minute()),
            second: small(dt.second()),
            micro: dt.subsec_nanosecond().unsigned_abs() / 1000,
        };
        Time::checked(&parts, tp, fsp)
    }
}

/// `1970-01-01 00:00:01` UTC, the first valid `TIMESTAMP`.
const MIN_TIMESTAMP_SECS: i64 = 1;
/// `2038-01-19 03:14:07` UTC, the last valid `TIMESTAMP` second.
const MAX_TIMESTAMP_SECS: i64 = (1 << 31) - 1;
