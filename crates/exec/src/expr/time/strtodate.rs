//! `STR_TO_DATE(s, format)` as a `DATE`, a `DATETIME` or a `TIME`, reading `s` as MySQL's
//! `extract_date_time`: spaces before each field are skipped, numbers take at most their
//! field's width, `%.`/`%@`/`%#` skip punctuation/letters/digits, other characters must match.
//! A constant format is scanned once per batch.
//!
//! A value that does not match the format, or a date that does not exist, is NULL with a
//! warning; text left after the format is a truncation warning. A week (`%U %u %V %v`) with a
//! weekday (`%w %W %a`) fixes the date as MySQL 8 does: `%V`/`%v` need the year of `%X`/`%x`
//! (Sunday-first with Sunday-first), `%U`/`%u` the year of `%Y`. (TiKV reads these
//! specifiers but ignores them; the engine gives MySQL's date.)

use rcop_datum::time::calendar;
use rcop_datum::{Duration, Time, TimeType};

use super::format::{Tok, scan};
use super::parts::MODE_NO_ZERO_DATE;
use super::parts::{DAY_NAMES as DAYS, MONTH_NAMES as MONTHS};
use super::{null_invalid, ret_fsp};
use crate::column::{Arg, BytesT, DurT, TimeT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::kernel::OutElem;
use crate::expr::registry::{Args, Call, Registry};
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes, DateTime as T, Duration as D};
    r.add(6085, Args::same(Bytes, 2), T, str_to_date_date);
    r.add(6086, Args::same(Bytes, 2), T, str_to_date_datetime);
    r.add(6087, Args::same(Bytes, 2), D, str_to_date_duration);
}

/// SQL mode bit: NO_ZERO_IN_DATE.
const MODE_NO_ZERO_IN_DATE: u64 = 1 << 23;

/// The fields read from a value.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Fields {
    year: u32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    micro: u32,
    yearday: u32,
    /// `%h`/`%I`/`%l`/`%r` read a 12-hour clock.
    usa: bool,
    /// `%p`: 0 (AM) or 12 (PM).
    daypart: Option<u32>,
    /// `%W %a %w`: 1 (Monday) to 7 (Sunday), 0 when not read.
    weekday: u32,
    /// `%U %u %V %v`: the week number.
    week: Option<u32>,
    /// The week specifier counts weeks from Sunday (`%U %V`).
    sunday_first: bool,
    /// The week specifier is `%V`/`%v` (week 1 is the first with a day in the year).
    strict_week: bool,
    /// `%X %x`: the year of a `%V`/`%v` week.
    week_year: Option<u32>,
    /// That year came from `%X` (Sunday-first).
    week_year_sunday: bool,
}

/// MySQL's largest day number (9999-12-31).
const MAX_DAY_NUMBER: i64 = 3_652_424;

/// A cursor over the value.
struct Input<'a> {
    s: &'a [u8],
}

impl Input<'_> {
    fn skip_spaces(&mut self) {
        let n = self.s.iter().take_while(|b| b.is_ascii_whitespace()).count();
        self.s = self.s.get(n..).unwrap_or(&[]);
    }

    fn skip_while(&mut self, f: impl Fn(u8) -> bool) {
        let n = self.s.iter().take_while(|b| f(**b)).count();
        self.s = self.s.get(n..).unwrap_or(&[]);
    }

    /// At most `width` digits (at least one), and how many were read.
    fn digits(&mut self, width: usize) -> Option<(u32, usize)> {
        let n = self.s.iter().take(width).take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let (d, rest) = self.s.split_at(n);
        self.s = rest;
        Some((d.iter().fold(0u32, |v, b| v * 10 + u32::from(b - b'0')), n))
    }

    fn num(&mut self, width: usize) -> Option<u32> {
        self.digits(width).map(|(v, _)| v)
    }

    /// A name of `names` (1-based index) matched by a unique case-insensitive prefix of the
    /// letters at the cursor, or of their `abbr`-letter abbreviations.
    fn name(&mut self, names: &[&str], abbr: Option<usize>) -> Option<u32> {
        let n = self.s.iter().take_while(|b| b.is_ascii_alphabetic()).count();
        let (word, rest) = self.s.split_at(n);
        if word.is_empty() {
            return None;
        }
        let mut found = None;
        for (i, name) in names.iter().enumerate() {
            let name = name.as_bytes();
            let name = abbr.and_then(|k| name.get(..k)).unwrap_or(name);
            if word.len() <= name.len()
                && name.get(..word.len()).is_some_and(|p| p.eq_ignore_ascii_case(word))
            {
                if found.is_some() {
                    return None;
                }
                found = Some(i as u32 + 1);
            }
        }
        self.s = rest;
        found
    }
}

/// MySQL's two-digit year rule: 70..99 are 19xx, 0..69 are 20xx.
fn year_2000(y: u32) -> u32 {
    if y < 70 {
        y + 2000
    } else if y < 100 {
        y + 1900
    } else {
        y
    }
}

/// Reads `s` by `toks` into `f`; `false` when it does not match.
fn read(toks: &[Tok<'_>], input: &mut Input<'_>, f: &mut Fields) -> bool {
    for tok in toks {
        let spec = match tok {
            Tok::Lit(l) => {
                for &c in *l {
                    input.skip_spaces();
                    if input.s.is_empty() {
                        return true;
                    }
                    if c.is_ascii_whitespace() {
                        continue;
                    }
                    match input.s.split_first() {
                        Some((&v, rest)) if v == c => input.s = rest,
                        _ => return false,
                    }
                }
                continue;
            }
            Tok::Spec(c) => *c,
        };
        input.skip_spaces();
        if input.s.is_empty() {
            return true;
        }
        let ok = match spec {
            b'Y' => input.digits(4).map(|(y, n)| f.year = if n <= 2 { year_2000(y) } else { y }),
            b'y' => input.num(2).map(|y| f.year = year_2000(y)),
            b'm' | b'c' => input.num(2).map(|v| f.month = v),
            b'M' => input.name(&MONTHS, None).map(|v| f.month = v),
            b'b' => input.name(&MONTHS, Some(3)).map(|v| f.month = v),
            b'd' | b'e' => input.num(2).map(|v| f.day = v),
            b'D' => input.num(2).map(|v| {
                f.day = v;
                input.s = input.s.get(2..).unwrap_or(&[]);
            }),
            b'h' | b'I' | b'l' => input.num(2).map(|v| {
                f.hour = v;
                f.usa = true;
            }),
            b'H' | b'k' => input.num(2).map(|v| f.hour = v),
            b'i' => input.num(2).map(|v| f.minute = v),
            b's' | b'S' => input.num(2).map(|v| f.second = v),
            b'f' => input.digits(6).map(|(v, n)| {
                f.micro = v * 10u32.pow(6 - n as u32);
            }),
            b'p' => {
                let Some(ap) = input.s.get(..2) else { return false };
                let part = if ap.eq_ignore_ascii_case(b"AM") {
                    0
                } else if ap.eq_ignore_ascii_case(b"PM") {
                    12
                } else {
                    return false;
                };
                if !f.usa {
                    return false;
                }
                f.daypart = Some(part);
                input.s = input.s.get(2..).unwrap_or(&[]);
                Some(())
            }
            b'W' => input.name(&DAYS, None).map(|v| f.weekday = v),
            b'a' => input.name(&DAYS, Some(3)).map(|v| f.weekday = v),
            // 0 is Sunday.
            b'w' => input.num(1).filter(|v| *v < 7).map(|v| f.weekday = if v == 0 { 7 } else { v }),
            b'j' => input.num(3).map(|v| f.yearday = v),
            b'U' | b'u' | b'V' | b'v' => {
                f.sunday_first = matches!(spec, b'U' | b'V');
                f.strict_week = matches!(spec, b'V' | b'v');
                let strict = f.strict_week;
                input.num(2).filter(|w| *w <= 53 && !(strict && *w == 0)).map(|w| f.week = Some(w))
            }
            b'X' | b'x' => input.num(4).map(|y| {
                f.week_year = Some(y);
                f.week_year_sunday = spec == b'X';
            }),
            b'r' => {
                f.usa = true;
                Some(()).filter(|_| read(&scan(b"%I:%i:%S %p"), input, f))
            }
            b'T' => Some(()).filter(|_| read(&scan(b"%H:%i:%S"), input, f)),
            b'.' => {
                input.skip_while(|b| b.is_ascii_punctuation());
                Some(())
            }
            b'@' => {
                input.skip_while(|b| b.is_ascii_alphabetic());
                Some(())
            }
            b'#' => {
                input.skip_while(|b| b.is_ascii_digit());
                Some(())
            }
            other => match input.s.split_first() {
                Some((&v, rest)) if v == other => {
                    input.s = rest;
                    Some(())
                }
                _ => None,
            },
        };
        if ok.is_none() {
            return false;
        }
    }
    true
}

/// Parses `s` by `toks`: the fields, and whether text was left over; `None` when it does not
/// match or the 12-hour clock is out of range.
fn parse(toks: &[Tok<'_>], s: &[u8]) -> Option<(Fields, bool)> {
    let mut f = Fields::default();
    let mut input = Input { s };
    if !read(toks, &mut input, &mut f) {
        return None;
    }
    if f.usa {
        if !(1..=12).contains(&f.hour) {
            return None;
        }
        f.hour = f.hour % 12 + f.daypart.unwrap_or(0);
    }
    if f.yearday > 0 && f.month == 0 && f.day == 0 {
        let first = calendar::day_number(f.year, 1, 1);
        let (y, m, d) = calendar::date_from_day_number(first + i64::from(f.yearday) - 1);
        if y != f.year {
            return None;
        }
        (f.month, f.day) = (m, d);
    }
    if let Some(week) = f.week.filter(|_| f.weekday != 0) {
        (f.year, f.month, f.day) = week_date(&f, week)?;
    }
    let rest = input.s.iter().any(|b| !b.is_ascii_whitespace());
    Some((f, rest))
}

/// The date of a week and weekday, as MySQL's `extract_date_time`; `None` when the week
/// specifier and its year do not go together or the day is out of range.
fn week_date(f: &Fields, week: u32) -> Option<(u32, u32, u32)> {
    let year = if f.strict_week {
        // %V needs %X, %v needs %x.
        f.week_year.filter(|_| f.week_year_sunday == f.sunday_first)?
    } else if f.week_year.is_some() {
        // %U and %u go with %Y, not %X or %x.
        return None;
    } else {
        f.year
    };
    let first = calendar::day_number(year, 1, 1);
    let first_weekday = i64::from(calendar::weekday_of(first, f.sunday_first));
    let weeks = (i64::from(week) - 1) * 7;
    let wd = i64::from(f.weekday);
    let days = if f.sunday_first {
        first + if first_weekday == 0 { 0 } else { 7 } - first_weekday + weeks + wd % 7
    } else {
        first + if first_weekday <= 3 { 0 } else { 7 } - first_weekday + weeks + wd - 1
    };
    if days <= 0 || days > MAX_DAY_NUMBER {
        return None;
    }
    Some(calendar::date_from_day_number(days))
}

/// The rows of a call, parsed: the kernel maps each row's fields to its result.
fn each_row<O: OutElem>(
    c: &Call<'_, '_>,
    ctx: &mut EvalContext,
    mut to: impl FnMut(&Fields, &mut EvalContext) -> Result<Option<O::O>>,
) -> Result<VecCol> {
    let (s, f) = (c.typed::<BytesT>(0)?, c.typed::<BytesT>(1)?);
    let constant = match f {
        Arg::Const(Some(f)) => Some(scan(f)),
        _ => None,
    };
    let mut out = VecCol::new(O::ET, c.n);
    for i in 0..c.n {
        let (Some(s), Some(fmt)) = (s.get(i), f.get(i)) else {
            out.push_null();
            continue;
        };
        let parsed = match &constant {
            Some(toks) => parse(toks, s),
            None => parse(&scan(fmt), s),
        };
        let Some((fields, rest)) = parsed else {
            null_invalid::<()>(ctx, String::from_utf8_lossy(s))?;
            out.push_null();
            continue;
        };
        if rest {
            ctx.truncated(Error::Truncated {
                what: "datetime",
                value: String::from_utf8_lossy(s).chars().take(64).collect(),
            })?;
        }
        let v = to(&fields, ctx)?;
        O::push_out(&mut out, v);
    }
    Ok(out)
}

/// The date or datetime of `f`, or NULL with a warning when it does not exist (or has a zero
/// part the SQL mode forbids).
fn to_time(f: &Fields, tp: TimeType, fsp: u8, ctx: &mut EvalContext) -> Result<Option<Time>> {
    let mode = ctx.cfg.sql_mode;
    let zero_part = f.month == 0 || f.day == 0;
    let all_zero = f.year == 0 && zero_part && f.month == 0 && f.day == 0;
    let no_such_day =
        f.month > 12 || (f.month > 0 && f.day > calendar::days_in_month(f.year, f.month));
    let bad_zero = no_such_day
        || (zero_part && mode & MODE_NO_ZERO_IN_DATE != 0)
        || (all_zero && mode & MODE_NO_ZERO_DATE != 0);
    let (h, mi, s, us) =
        if tp == TimeType::Date { (0, 0, 0, 0) } else { (f.hour, f.minute, f.second, f.micro) };
    let t = Time::from_parts(f.year, f.month, f.day, h, mi, s, us, tp, 6)
        .and_then(|t| t.round_frac(fsp));
    match t {
        Ok(t) if !bad_zero => Ok(Some(t)),
        _ => null_invalid(ctx, format_args!("{}-{}-{}", f.year, f.month, f.day)),
    }
}

fn str_to_date_date(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    each_row::<TimeT>(c, ctx, |f, ctx| to_time(f, TimeType::Date, 0, ctx))
}

fn str_to_date_datetime(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let fsp = ret_fsp(c, 6);
    each_row::<TimeT>(c, ctx, |f, ctx| to_time(f, TimeType::DateTime, fsp, ctx))
}

fn str_to_date_duration(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let fsp = ret_fsp(c, 6);
    each_row::<DurT>(c, ctx, |f, ctx| {
        if f.hour > 838 || f.minute > 59 || f.second > 59 {
            return null_invalid(ctx, format_args!("{}:{}:{}", f.hour, f.minute, f.second));
        }
        let us = ((i64::from(f.hour) * 60 + i64::from(f.minute)) * 60 + i64::from(f.second))
            * 1_000_000
            + i64::from(f.micro);
        Ok(Duration::from_nanos(us * 1000, 6).and_then(|d| d.round_frac(fsp)).ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str, f: &str) -> Option<(u32, u32, u32, u32, u32, u32, u32)> {
        parse(&scan(f.as_bytes()), s.as_bytes())
            .map(|(f, _)| (f.year, f.month, f.day, f.hour, f.minute, f.second, f.micro))
    }

    #[test]
    fn manual_examples() {
        // The MySQL manual's STR_TO_DATE examples.
        assert_eq!(p("01,5,2013", "%d,%m,%Y"), Some((2013, 5, 1, 0, 0, 0, 0)));
        assert_eq!(p("May 1, 2013", "%M %d,%Y"), Some((2013, 5, 1, 0, 0, 0, 0)));
        assert_eq!(p("a09:30:17", "a%h:%i:%s"), Some((0, 0, 0, 9, 30, 17, 0)));
        assert_eq!(p("a09:30:17", "%h:%i:%s"), None);
        assert_eq!(p("09:30:17a", "%h:%i:%s").map(|t| t.3), Some(9));
        assert_eq!(p("abc", "abc"), Some((0, 0, 0, 0, 0, 0, 0)));
        assert_eq!(p("9", "%m"), Some((0, 9, 0, 0, 0, 0, 0)));
        assert_eq!(p("10:11:12 PM", "%r").map(|t| t.3), Some(22));
        assert_eq!(p("12.5", "%s.%f").map(|t| t.6), Some(500_000));
    }

    #[test]
    fn weeks_fix_the_date() {
        let d = |s: &str, f: &str| p(s, f).map(|t| (t.0, t.1, t.2));
        // The MySQL manual: '200442 Monday', '%X%V %W' is 2004-10-18.
        assert_eq!(d("200442 Monday", "%X%V %W"), Some((2004, 10, 18)));
        // Monday-first ISO weeks: week 42 of 2004 starts a week earlier.
        assert_eq!(d("2004 42 Mon", "%x %v %a"), Some((2004, 10, 11)));
        // %V without %X, %U with %X: no date.
        assert_eq!(d("42 Monday", "%V %W"), None);
        assert_eq!(d("2004 42 1", "%X %U %w"), None);
        // A week without a weekday leaves the date alone.
        assert_eq!(d("2004 42", "%Y %U"), Some((2004, 0, 0)));
        assert_eq!(d("2021 00 0", "%Y %U %w"), Some((2020, 12, 27)));
    }
}
