//! Date and time functions, as TiKV's `impl_time.rs` maps them, with MySQL 8's results.
//!
//! - [`parts`]: fields of a date or time (`YEAR`, `MONTH`, `HOUR`, `DAYNAME`, `TO_DAYS`, …) and
//!   the constructors (`MAKEDATE`, `MAKETIME`, `FROM_DAYS`, `LAST_DAY`, `PERIOD_ADD`, `SYSDATE`).
//! - [`week`]: `WEEK`, `WEEKOFYEAR`, `YEARWEEK`.
//! - [`format`](mod@format): `DATE_FORMAT`.
//! - [`addtime`]: `ADDTIME`/`SUBTIME` and `TIMEDIFF` over their typed variants.
//! - [`interval`]: the `DATE_ADD`/`DATE_SUB` family (`AddDate<Date><Interval>`), with the
//!   interval units of [`unit`].
//! - [`unix`]: `FROM_UNIXTIME`, `UNIX_TIMESTAMP` (through the session time zone).
//! - [`diff`]: `TIMESTAMPDIFF`, `EXTRACT`.
//! - [`strtodate`]: `STR_TO_DATE` as a date, a datetime or a `TIME`.
//!
//! An invalid date (a zero month or day where MySQL needs a real date) is NULL with a warning,
//! an error only in a strict `INSERT`/`UPDATE`/`DELETE` ([`invalid_time`]), as TiKV's
//! `handle_invalid_time_error`.

pub mod addtime;
pub mod diff;
pub mod format;
pub mod interval;
pub mod parts;
pub mod strtodate;
pub mod unit;
pub mod unix;
pub mod week;

use rcop_datum::{Duration, Time, TimeType};

use crate::ctx::{
    EvalContext, FLAG_IN_INSERT_STMT, FLAG_IN_UPDATE_OR_DELETE_STMT, MODE_STRICT_ALL_TABLES,
    MODE_STRICT_TRANS_TABLES,
};
use crate::error::{Error, Result};
use crate::expr::registry::{Call, Registry};

pub(super) fn register(r: &mut Registry) {
    parts::register(r);
    week::register(r);
    format::register(r);
    addtime::register(r);
    interval::register(r);
    unix::register(r);
    diff::register(r);
    strtodate::register(r);
}

/// An invalid date, time or interval result: a warning (the caller returns NULL), or the
/// error in a strict `INSERT`/`UPDATE`/`DELETE`.
pub fn invalid_time(ctx: &mut EvalContext, e: Error) -> Result<()> {
    let writes = ctx.cfg.flags & (FLAG_IN_INSERT_STMT | FLAG_IN_UPDATE_OR_DELETE_STMT) != 0;
    let strict = ctx.cfg.sql_mode & (MODE_STRICT_TRANS_TABLES | MODE_STRICT_ALL_TABLES) != 0;
    if writes && strict {
        return Err(e);
    }
    ctx.warn(&e);
    Ok(())
}

/// MySQL's "Incorrect datetime value" (1292) for `value`.
pub fn incorrect_datetime(value: impl std::fmt::Display) -> Error {
    let mut v = value.to_string();
    // At most 64 bytes, cut at a character boundary (the value may be any UTF-8 text).
    let mut cut = v.len().min(64);
    while !v.is_char_boundary(cut) {
        cut -= 1;
    }
    v.truncate(cut);
    Error::Truncated { what: "datetime", value: v }
}

/// "Incorrect datetime value" as a warning, and NULL.
pub fn null_invalid<T>(ctx: &mut EvalContext, value: impl std::fmt::Display) -> Result<Option<T>> {
    invalid_time(ctx, incorrect_datetime(value))?;
    Ok(None)
}

/// MySQL's "Datetime function: datetime field overflow" (1441) as a warning, and NULL.
pub fn null_overflow<T>(ctx: &mut EvalContext) -> Result<Option<T>> {
    invalid_time(ctx, Error::Overflow("datetime"))?;
    Ok(None)
}

/// A date with a zero month or day (the zero date included): not a calendar date.
#[inline]
pub fn zero_in(t: &Time) -> bool {
    t.month() == 0 || t.day() == 0
}

/// The fractional precision of the call's result: its field type's when it names one,
/// else `default`.
pub fn ret_fsp(c: &Call<'_, '_>, default: u8) -> u8 {
    if (0..=6).contains(&c.ft.decimal) { c.ft.fsp() } else { default }
}

/// A time from validated fields (the callers' fields come from `Time` values or from the
/// calendar, so they are in range), or `None`.
#[expect(clippy::too_many_arguments, reason = "the seven fields, the type and the precision")]
pub fn make_time(
    y: u32,
    mo: u32,
    d: u32,
    h: u32,
    mi: u32,
    s: u32,
    us: u32,
    tp: TimeType,
    fsp: u8,
) -> Option<Time> {
    let (h, mi, s, us) = if tp == TimeType::Date { (0, 0, 0, 0) } else { (h, mi, s, us) };
    Time::from_parts(y, mo, d, h, mi, s, us, tp, fsp).ok()
}

/// A `DATETIME` shown as MySQL shows a temporal result in a string: six fraction digits when
/// there is a fraction, none otherwise (TiKV's `minimize_fsp`/`maximize_fsp`); a `DATE` as
/// `YYYY-MM-DD`.
pub fn time_string(t: &Time) -> Vec<u8> {
    let mut out = Vec::with_capacity(26);
    let fsp = if t.micro() == 0 { 0 } else { 6 };
    let tp = if t.time_type() == TimeType::Date { TimeType::Date } else { TimeType::DateTime };
    match make_time(
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.micro(),
        tp,
        fsp,
    ) {
        Some(x) => x.write_str(&mut out),
        None => t.write_str(&mut out),
    }
    out
}

/// A `TIME` shown in a string: six fraction digits when there is a fraction, none otherwise.
pub fn duration_string(d: &Duration) -> Vec<u8> {
    let mut out = Vec::with_capacity(18);
    let fsp = if d.micros() == 0 { 0 } else { 6 };
    match Duration::from_nanos(d.nanos(), fsp) {
        Ok(x) => x.write_str(&mut out),
        Err(_) => d.write_str(&mut out),
    }
    out
}

/// The text of a string argument, or `None` when it is not UTF-8.
pub fn text(b: &[u8]) -> Option<&str> {
    std::str::from_utf8(b).ok()
}

/// Whether a datetime string has a time part: four or more digit runs, or a delimiter-free
/// number longer than a date (`YYYYMMDDhh…`, `YYMMDDhh…`).
pub fn has_time_part(s: &str) -> bool {
    let s = s.trim();
    let runs = s.split(|c: char| !c.is_ascii_digit()).filter(|r| !r.is_empty()).count();
    if runs >= 4 {
        return true;
    }
    let first = s.split(|c: char| !c.is_ascii_digit()).next().unwrap_or("");
    runs <= 2 && first.len() > 8
}

/// Parses a datetime string as MySQL reads a date argument: a `DATE` when it has no time part,
/// else a `DATETIME` with six fraction digits.
pub fn parse_datetime(s: &str) -> Option<Time> {
    if has_time_part(s) {
        Time::parse(s, TimeType::DateTime, 6).ok()
    } else {
        Time::parse(s, TimeType::Date, 0).ok()
    }
}

#[cfg(test)]
mod tests;
