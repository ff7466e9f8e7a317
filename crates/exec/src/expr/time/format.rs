//! `DATE_FORMAT(t, format)` with MySQL's specifiers and its `en_US` names.
//!
//! A format is compiled ([`Format`]) once per batch when constant, else per row into a reused
//! buffer; rows are written straight into the result column. A specifier that needs a calendar date
//! (`%M`, `%b`, `%W`, `%a`, `%w`) on a date without one makes the result NULL, as MySQL's
//! `make_date_time`.

use rcop_datum::Time;
use rcop_datum::time::calendar::{
    self, WEEK_FIRST_WEEKDAY, WEEK_MONDAY_FIRST, WEEK_YEAR, calc_week,
};

use super::parts::{DAY_NAMES, MONTH_NAMES};
use super::{null_invalid, zero_in};
use crate::column::{Arg, Bitmap, BytesT, BytesVec, ColData, TimeT, VecCol};
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::expr::registry::{Args, Call, Registry};
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes, DateTime as T};
    r.add(6001, Args::fixed(&[T, Bytes]), Bytes, date_format);
}

/// One piece of a format: literal bytes or a specifier letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok<'a> {
    Lit(&'a [u8]),
    Spec(u8),
}

/// Splits a format into literals and `%x` specifiers (a trailing `%` is literal).
pub(super) fn scan(f: &[u8]) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let mut rest = f;
    while !rest.is_empty() {
        match rest.iter().position(|b| *b == b'%') {
            Some(0) => match rest.get(1) {
                Some(&c) => {
                    out.push(Tok::Spec(c));
                    rest = rest.get(2..).unwrap_or(&[]);
                }
                None => {
                    out.push(Tok::Lit(rest));
                    rest = &[];
                }
            },
            Some(p) => {
                let (lit, tail) = rest.split_at(p);
                out.push(Tok::Lit(lit));
                rest = tail;
            }
            None => {
                out.push(Tok::Lit(rest));
                rest = &[];
            }
        }
    }
    out
}

/// The longest text a [`Short`] holds.
const SHORT: usize = 16;

/// Text of at most [`SHORT`] bytes stored padded, so that writing it is one fixed-size copy
/// and a truncate rather than a `memcpy` call or a loop for a few bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Short {
    bytes: [u8; SHORT],
    len: u8,
}

impl Short {
    const EMPTY: Short = Short { bytes: [0; SHORT], len: 0 };

    /// The first `n` bytes of `s` (at most [`SHORT`]).
    const fn prefix(s: &[u8], n: usize) -> Short {
        let mut out = Short::EMPTY;
        while (out.len as usize) < n && (out.len as usize) < s.len() && (out.len as usize) < SHORT {
            out.bytes[out.len as usize] = s[out.len as usize];
            out.len += 1;
        }
        out
    }

    /// Appends `b`; `false` when full.
    fn push(&mut self, b: u8) -> bool {
        match self.bytes.get_mut(usize::from(self.len)) {
            Some(slot) => {
                *slot = b;
                self.len += 1;
                true
            }
            None => false,
        }
    }

    #[inline]
    fn put(&self, out: &mut Vec<u8>) {
        let at = out.len();
        out.extend_from_slice(&self.bytes);
        out.truncate(at + usize::from(self.len));
    }
}

/// `names`, each cut to `n` bytes.
const fn shorts<const N: usize>(names: [&str; N], n: usize) -> [Short; N] {
    let mut out = [Short::EMPTY; N];
    let mut i = 0;
    while i < N {
        out[i] = Short::prefix(names[i].as_bytes(), n);
        i += 1;
    }
    out
}

const MONTHS: [Short; 12] = shorts(MONTH_NAMES, SHORT);
const MONTHS_ABBR: [Short; 12] = shorts(MONTH_NAMES, 3);
const DAYS: [Short; 7] = shorts(DAY_NAMES, SHORT);
const DAYS_ABBR: [Short; 7] = shorts(DAY_NAMES, 3);

/// A number a specifier writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Year,
    Year2,
    Month,
    Day,
    Micro,
    Hour,
    Hour12,
    Minute,
    Second,
}

/// One piece of a compiled format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// Literal text (with `%%` and unknown specifiers folded in).
    Text(Short),
    /// `%M`, `%b`.
    MonthName(bool),
    /// `%W`, `%a`.
    DayName(bool),
    /// `%w`: 0 = Sunday.
    Weekday,
    /// `%D`: the day with its English suffix.
    DayTh,
    /// A field zero-padded to a width.
    Num(Field, u8),
    /// `%j`.
    DayOfYear,
    /// `%p`.
    AmPm,
    /// `%r`.
    Clock12,
    /// `%T`.
    Clock24,
    /// `%U`, `%u`, `%V`, `%v`: the week number by a `calc_week` behaviour.
    Week(u32),
    /// `%X`, `%x`: the year of the week by a `calc_week` behaviour.
    WeekYear(u32),
}

impl Piece {
    /// The piece of specifier `c`, or `None` for one that writes `c` itself.
    fn of(c: u8) -> Option<Piece> {
        use Field::*;
        Some(match c {
            b'M' => Piece::MonthName(false),
            b'b' => Piece::MonthName(true),
            b'W' => Piece::DayName(false),
            b'a' => Piece::DayName(true),
            b'w' => Piece::Weekday,
            b'D' => Piece::DayTh,
            b'Y' => Piece::Num(Year, 4),
            b'y' => Piece::Num(Year2, 2),
            b'm' => Piece::Num(Month, 2),
            b'c' => Piece::Num(Month, 1),
            b'd' => Piece::Num(Day, 2),
            b'e' => Piece::Num(Day, 1),
            b'j' => Piece::DayOfYear,
            b'f' => Piece::Num(Micro, 6),
            b'H' => Piece::Num(Hour, 2),
            b'k' => Piece::Num(Hour, 1),
            b'h' | b'I' => Piece::Num(Hour12, 2),
            b'l' => Piece::Num(Hour12, 1),
            b'i' => Piece::Num(Minute, 2),
            b'p' => Piece::AmPm,
            b'r' => Piece::Clock12,
            b'S' | b's' => Piece::Num(Second, 2),
            b'T' => Piece::Clock24,
            b'U' => Piece::Week(WEEK_FIRST_WEEKDAY),
            b'u' => Piece::Week(WEEK_MONDAY_FIRST),
            b'V' => Piece::Week(WEEK_YEAR | WEEK_FIRST_WEEKDAY),
            b'v' => Piece::Week(WEEK_YEAR | WEEK_MONDAY_FIRST),
            b'X' => Piece::WeekYear(WEEK_YEAR | WEEK_FIRST_WEEKDAY),
            b'x' => Piece::WeekYear(WEEK_YEAR | WEEK_MONDAY_FIRST),
            _ => return None,
        })
    }

    /// The most bytes the piece writes for a valid date (years up to 9999).
    fn max_len(self) -> usize {
        match self {
            Piece::Text(s) => usize::from(s.len),
            Piece::MonthName(false) | Piece::DayName(false) => 9,
            Piece::MonthName(true) | Piece::DayName(true) | Piece::DayOfYear => 3,
            Piece::Weekday => 1,
            Piece::DayTh | Piece::WeekYear(_) => 4,
            Piece::Num(Field::Year, _) => 4,
            Piece::Num(Field::Micro, _) => 6,
            Piece::Num(..) | Piece::AmPm | Piece::Week(_) => 2,
            Piece::Clock12 => 11,
            Piece::Clock24 => 8,
        }
    }
}

/// A `DATE_FORMAT` format compiled once: its pieces, and which per-row facts they need.
///
/// Reuse one across rows with [`Format::reset`] (the pieces' buffer is kept).
#[derive(Debug, Clone, Default)]
pub(super) struct Format {
    pieces: Vec<Piece>,
    /// Some piece names the month (`%M`, `%b`): NULL for month 0.
    month: bool,
    /// Some piece needs the weekday (`%W`, `%a`, `%w`): NULL for year and month 0.
    weekday: bool,
    /// Some piece needs the day number (the weekday pieces, `%j`).
    daynr: bool,
    /// The most bytes one row's result takes (a reservation hint).
    max_len: usize,
}

impl Format {
    /// `f` compiled.
    pub(super) fn new(f: &[u8]) -> Format {
        let mut out = Format::default();
        out.reset(f);
        out
    }

    /// Compiles `f` in place of the current format (a trailing `%` is literal).
    pub(super) fn reset(&mut self, f: &[u8]) {
        self.pieces.clear();
        let mut text = Short::EMPTY;
        let mut rest = f;
        while let Some((&b, tail)) = rest.split_first() {
            rest = tail;
            let lit = if b == b'%' {
                match rest.split_first() {
                    Some((&c, tail)) => {
                        rest = tail;
                        match Piece::of(c) {
                            Some(p) => {
                                if text.len > 0 {
                                    self.pieces.push(Piece::Text(text));
                                    text = Short::EMPTY;
                                }
                                self.pieces.push(p);
                                continue;
                            }
                            None => c,
                        }
                    }
                    None => b,
                }
            } else {
                b
            };
            if !text.push(lit) {
                self.pieces.push(Piece::Text(text));
                text = Short::prefix(&[lit], 1);
            }
        }
        if text.len > 0 {
            self.pieces.push(Piece::Text(text));
        }
        let has = |f: fn(&Piece) -> bool| self.pieces.iter().any(f);
        self.month = has(|p| matches!(p, Piece::MonthName(_)));
        self.weekday = has(|p| matches!(p, Piece::DayName(_) | Piece::Weekday));
        self.daynr = self.weekday || has(|p| matches!(p, Piece::DayOfYear));
        self.max_len = self.pieces.iter().map(|p| p.max_len()).sum();
    }

    /// The most bytes one row's result takes for a valid date.
    pub(super) fn max_len(&self) -> usize {
        self.max_len
    }

    /// Formats `t` into `out`; `false` (having written nothing) when a specifier has no
    /// value for `t`: a month name of month 0, a weekday of year and month 0.
    pub(super) fn write(&self, t: &Time, out: &mut Vec<u8>) -> bool {
        let (y, mo, d) = (t.year(), t.month(), t.day());
        if (self.month && mo == 0) || (self.weekday && mo == 0 && y == 0) {
            return false;
        }
        let (h, mi, s) = (t.hour(), t.minute(), t.second());
        let daynr = if self.daynr { calendar::day_number(y, mo, d) } else { 0 };
        let h12 = (h % 24 + 11) % 12 + 1;
        for p in &self.pieces {
            match *p {
                Piece::Text(s) => s.put(out),
                Piece::MonthName(abbr) => {
                    let names = if abbr { &MONTHS_ABBR } else { &MONTHS };
                    if let Some(n) = names.get((mo as usize).wrapping_sub(1)) {
                        n.put(out);
                    }
                }
                Piece::DayName(abbr) => {
                    let names = if abbr { &DAYS_ABBR } else { &DAYS };
                    if let Some(n) = names.get(calendar::weekday_of(daynr, false) as usize) {
                        n.put(out);
                    }
                }
                Piece::Weekday => num(out, calendar::weekday_of(daynr, true), 1),
                Piece::DayTh => {
                    num(out, d, 1);
                    let suffix: &[u8; 2] = match d {
                        11..=13 => b"th",
                        _ => match d % 10 {
                            1 => b"st",
                            2 => b"nd",
                            3 => b"rd",
                            _ => b"th",
                        },
                    };
                    out.extend_from_slice(suffix);
                }
                Piece::Num(f, width) => {
                    let v = match f {
                        Field::Year => y,
                        Field::Year2 => y % 100,
                        Field::Month => mo,
                        Field::Day => d,
                        Field::Micro => t.micro(),
                        Field::Hour => h,
                        Field::Hour12 => h12,
                        Field::Minute => mi,
                        Field::Second => s,
                    };
                    num(out, v, width);
                }
                Piece::DayOfYear => {
                    let n = daynr - calendar::day_number(y, 1, 1) + 1;
                    num(out, u32::try_from(n).unwrap_or(0), 3);
                }
                Piece::AmPm => out.extend_from_slice(if h % 24 < 12 { b"AM" } else { b"PM" }),
                Piece::Clock12 => {
                    clock(out, h12, mi, s);
                    out.extend_from_slice(if h % 24 < 12 { b" AM" } else { b" PM" });
                }
                Piece::Clock24 => clock(out, h, mi, s),
                Piece::Week(b) => num(out, calc_week(y, mo, d, b).1, 2),
                Piece::WeekYear(b) => num(out, calc_week(y, mo, d, b).0, 4),
            }
        }
        true
    }
}

/// `hh:mm:ss`.
#[inline]
fn clock(out: &mut Vec<u8>, h: u32, mi: u32, s: u32) {
    num(out, h, 2);
    out.push(b':');
    num(out, mi, 2);
    out.push(b':');
    num(out, s, 2);
}

/// The two-digit decimal forms of 0..=99, back to back.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// `v` (under 100) as two digits.
#[inline]
fn pair(out: &mut Vec<u8>, v: u32) {
    let i = v as usize * 2;
    if let Some(&[a, b]) = PAIRS.get(i..i + 2) {
        out.extend_from_slice(&[a, b]);
    }
}

/// `v` in decimal, zero-padded to `width`: the widths specifiers use by digit pairs, any
/// other digit by digit.
#[inline]
fn num(out: &mut Vec<u8>, v: u32, width: u8) {
    match width {
        1 if v < 10 => out.push(b'0' + v as u8),
        1 | 2 if v < 100 => pair(out, v),
        3 if v < 1000 => {
            out.push(b'0' + (v / 100) as u8);
            pair(out, v % 100);
        }
        4 if v < 10_000 => {
            pair(out, v / 100);
            pair(out, v % 100);
        }
        6 if v < 1_000_000 => {
            pair(out, v / 10_000);
            pair(out, v / 100 % 100);
            pair(out, v % 100);
        }
        _ => num_slow(out, v, usize::from(width)),
    }
}

#[cold]
fn num_slow(out: &mut Vec<u8>, v: u32, width: usize) {
    let mut digits = [0u8; 10];
    let mut n = 0;
    let mut v = v;
    for slot in digits.iter_mut().rev() {
        *slot = b'0' + (v % 10) as u8;
        v /= 10;
        n += 1;
        if v == 0 {
            break;
        }
    }
    for _ in n..width {
        out.push(b'0');
    }
    out.extend_from_slice(digits.get(digits.len() - n..).unwrap_or(&[]));
}

/// The largest output a batch reserves up front (1 MiB): a long constant format over NULL
/// rows must not reserve what it never writes.
const MAX_RESERVE: usize = 1 << 20;

fn date_format(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let (t, f) = (c.typed::<TimeT>(0)?, c.typed::<BytesT>(1)?);
    let constant = match f {
        Arg::Const(Some(f)) => Some(Format::new(f)),
        _ => None,
    };
    let per_row = constant.as_ref().map_or(0, Format::max_len);
    let mut data = BytesVec::with_capacity(c.n, c.n.saturating_mul(per_row).min(MAX_RESERVE));
    let mut valid = Bitmap::new();
    let mut scratch = Format::default();
    for i in 0..c.n {
        let (Some(t), Some(fmt)) = (t.get(i), f.get(i)) else {
            data.push(&[]);
            valid.push(false);
            continue;
        };
        if fmt.is_empty() {
            // MySQL: an empty format is NULL.
            data.push(&[]);
            valid.push(false);
            continue;
        }
        if zero_in(&t) {
            null_invalid::<()>(ctx, t)?;
            data.push(&[]);
            valid.push(false);
            continue;
        }
        let format = match &constant {
            Some(f) => f,
            None => {
                scratch.reset(fmt);
                &scratch
            }
        };
        valid.push(data.push_with(|out| format.write(&t, out)));
    }
    Ok(VecCol { data: ColData::Bytes(data), valid })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rcop_datum::TimeType;

    /// The token-at-a-time formatter this module had before formats were compiled, kept as
    /// the model the compiled one must agree with.
    mod model {
        use super::super::{Tok, calc_week, calendar};
        use super::super::{WEEK_FIRST_WEEKDAY, WEEK_MONDAY_FIRST, WEEK_YEAR};
        use crate::expr::time::parts::{day_name_of, month_name_of};
        use rcop_datum::Time;

        fn num(out: &mut Vec<u8>, v: u32, width: usize) {
            let mut digits = [0u8; 10];
            let mut n = 0;
            let mut v = v;
            for slot in digits.iter_mut().rev() {
                *slot = b'0' + (v % 10) as u8;
                v /= 10;
                n += 1;
                if v == 0 {
                    break;
                }
            }
            for _ in n..width {
                out.push(b'0');
            }
            put(out, digits.get(digits.len() - n..).unwrap_or(&[]));
        }

        fn put(out: &mut Vec<u8>, s: &[u8]) {
            out.extend_from_slice(s);
        }

        /// Formats `t` by `toks` into `out`; `false` when a specifier has no value for `t`.
        pub(super) fn format_into(t: &Time, toks: &[Tok<'_>], out: &mut Vec<u8>) -> bool {
            let (y, mo, d) = (t.year(), t.month(), t.day());
            let (h, mi, s) = (t.hour(), t.minute(), t.second());
            let daynr = || calendar::day_number(y, mo, d);
            let h12 = (h % 24 + 11) % 12 + 1;
            for tok in toks {
                let c = match tok {
                    Tok::Lit(l) => {
                        put(out, l);
                        continue;
                    }
                    Tok::Spec(c) => *c,
                };
                match c {
                    b'M' | b'b' => {
                        if mo == 0 {
                            return false;
                        }
                        let name = month_name_of(t).as_bytes();
                        put(out, if c == b'M' { name } else { name.get(..3).unwrap_or(name) });
                    }
                    b'W' | b'a' => {
                        if mo == 0 && y == 0 {
                            return false;
                        }
                        let name = day_name_of(t).as_bytes();
                        put(out, if c == b'W' { name } else { name.get(..3).unwrap_or(name) });
                    }
                    b'w' => {
                        if mo == 0 && y == 0 {
                            return false;
                        }
                        num(out, calendar::weekday_of(daynr(), true), 1);
                    }
                    b'D' => {
                        num(out, d, 1);
                        let suffix: &[u8] = match d {
                            11..=13 => b"th",
                            _ => match d % 10 {
                                1 => b"st",
                                2 => b"nd",
                                3 => b"rd",
                                _ => b"th",
                            },
                        };
                        put(out, suffix);
                    }
                    b'Y' => num(out, y, 4),
                    b'y' => num(out, y % 100, 2),
                    b'm' => num(out, mo, 2),
                    b'c' => num(out, mo, 1),
                    b'd' => num(out, d, 2),
                    b'e' => num(out, d, 1),
                    b'j' => {
                        let n = daynr() - calendar::day_number(y, 1, 1) + 1;
                        num(out, u32::try_from(n).unwrap_or(0), 3);
                    }
                    b'f' => num(out, t.micro(), 6),
                    b'H' => num(out, h, 2),
                    b'k' => num(out, h, 1),
                    b'h' | b'I' => num(out, h12, 2),
                    b'l' => num(out, h12, 1),
                    b'i' => num(out, mi, 2),
                    b'p' => put(out, if h % 24 < 12 { b"AM" } else { b"PM" }),
                    b'r' => {
                        num(out, h12, 2);
                        out.push(b':');
                        num(out, mi, 2);
                        out.push(b':');
                        num(out, s, 2);
                        put(out, if h % 24 < 12 { b" AM" } else { b" PM" });
                    }
                    b'S' | b's' => num(out, s, 2),
                    b'T' => {
                        num(out, h, 2);
                        out.push(b':');
                        num(out, mi, 2);
                        out.push(b':');
                        num(out, s, 2);
                    }
                    b'U' | b'u' => {
                        let b = if c == b'U' { WEEK_FIRST_WEEKDAY } else { WEEK_MONDAY_FIRST };
                        num(out, calc_week(y, mo, d, b).1, 2);
                    }
                    b'V' | b'v' => {
                        let b = if c == b'V' {
                            WEEK_YEAR | WEEK_FIRST_WEEKDAY
                        } else {
                            WEEK_YEAR | WEEK_MONDAY_FIRST
                        };
                        num(out, calc_week(y, mo, d, b).1, 2);
                    }
                    b'X' | b'x' => {
                        let b = if c == b'X' {
                            WEEK_YEAR | WEEK_FIRST_WEEKDAY
                        } else {
                            WEEK_YEAR | WEEK_MONDAY_FIRST
                        };
                        num(out, calc_week(y, mo, d, b).0, 4);
                    }
                    other => out.push(other),
                }
            }
            true
        }
    }

    fn fmt(s: &str, f: &str) -> Option<String> {
        let t = Time::parse(s, TimeType::DateTime, 6).unwrap();
        let mut out = Vec::new();
        Format::new(f.as_bytes()).write(&t, &mut out).then(|| String::from_utf8(out).unwrap())
    }

    #[test]
    fn manual_examples() {
        // The MySQL manual's DATE_FORMAT examples.
        assert_eq!(fmt("2009-10-04 22:23:00", "%W %M %Y").as_deref(), Some("Sunday October 2009"));
        assert_eq!(fmt("2007-10-04 22:23:00", "%H:%i:%s").as_deref(), Some("22:23:00"));
        assert_eq!(
            fmt("1900-10-04 22:23:00", "%D %y %a %d %m %b %j").as_deref(),
            Some("4th 00 Thu 04 10 Oct 277")
        );
        assert_eq!(
            fmt("1997-10-04 22:23:00", "%H %k %I %r %T %S %w").as_deref(),
            Some("22 22 10 10:23:00 PM 22:23:00 00 6")
        );
        assert_eq!(fmt("1999-01-01 00:00:00", "%X %V").as_deref(), Some("1998 52"));
        assert_eq!(fmt("2006-06-00 00:00:00", "%d").as_deref(), Some("00"));
        assert_eq!(fmt("2006-06-01 00:00:00", "100%% %q %").as_deref(), Some("100% q %"));
    }

    #[test]
    fn compiles_literals_and_names() {
        // `%%` and unknown specifiers join the text around them; long text is split.
        let f = Format::new(b"100%% %q %");
        assert_eq!(f.pieces, [Piece::Text(Short::prefix(b"100% q %", SHORT))]);
        let f = Format::new(b"%Y-abcdefghijklmnopqrstuvwxyz");
        assert_eq!(f.pieces.len(), 3);
        assert_eq!(f.max_len(), 4 + 27);
        assert!(!f.month && !f.weekday && !f.daynr);
        let f = Format::new(b"%a %j");
        assert!(f.weekday && f.daynr && !f.month);
        assert_eq!(MONTHS[8], Short::prefix(b"September", SHORT));
        assert_eq!(DAYS_ABBR[2], Short::prefix(b"Wed", SHORT));
        assert_eq!(
            fmt("2021-01-03 13:05:09", "%W %a %M %b").as_deref(),
            Some("Sunday Sun January Jan")
        );
    }

    #[test]
    fn numbers_at_every_width() {
        for width in [1u8, 2, 3, 4, 6, 9] {
            for v in [0u32, 7, 10, 99, 100, 999, 1000, 9999, 10_000, 999_999, 1_000_000, u32::MAX] {
                let mut out = Vec::new();
                num(&mut out, v, width);
                assert_eq!(
                    out,
                    format!("{v:0w$}", w = usize::from(width)).into_bytes(),
                    "{v} {width}"
                );
            }
        }
    }

    #[test]
    fn nothing_written_when_null() {
        let t = Time::from_parts(0, 0, 5, 1, 2, 3, 0, TimeType::DateTime, 0).unwrap();
        let mut out = b"kept".to_vec();
        assert!(!Format::new(b"%Y %M").write(&t, &mut out));
        assert!(!Format::new(b"%w").write(&t, &mut out));
        assert_eq!(out, b"kept");
        assert!(Format::new(b"%Y %d").write(&t, &mut out));
        assert_eq!(out, b"kept0000 05");
    }

    fn arb_time() -> impl Strategy<Value = Time> {
        (0u32..10_000, 0u32..13, 0u32..32, 0u32..24, 0u32..60, 0u32..60, 0u32..1_000_000)
            .prop_filter_map("a valid time", |(y, mo, d, h, mi, s, us)| {
                Time::from_parts(y, mo, d, h, mi, s, us, TimeType::DateTime, 6).ok()
            })
    }

    fn arb_format() -> impl Strategy<Value = Vec<u8>> {
        let spec = proptest::sample::select(b"MbWawDYymcdejfHkhIlipSsrTUuVvXx%q1 \xc3".to_vec())
            .prop_map(|c| vec![b'%', c]);
        let piece = prop_oneof![
            3 => spec,
            1 => "[ a-z,:()-]{1,20}".prop_map(String::into_bytes),
            1 => proptest::collection::vec(any::<u8>(), 1..4),
        ];
        proptest::collection::vec(piece, 0..8).prop_map(|p| p.concat())
    }

    proptest! {
        /// The compiled format writes what the token-at-a-time model writes, NULLs included.
        #[test]
        fn compiled_matches_model(t in arb_time(), f in arb_format()) {
            let mut want = Vec::new();
            let want = model::format_into(&t, &scan(&f), &mut want).then_some(want);
            let mut got = b"prefix".to_vec();
            let ok = Format::new(&f).write(&t, &mut got);
            let got = ok.then(|| got.split_off(6));
            prop_assert_eq!(got, want);
        }
    }
}
