//! `DATE_FORMAT(t, format)` with MySQL's specifiers and its `en_US` names.
//!
//! A constant format is scanned once per batch; a specifier that needs a calendar date
//! (`%M`, `%b`, `%W`, `%a`, `%w`) on a date without one makes the result NULL, as MySQL's
//! `make_date_time`.

use rcop_datum::Time;
use rcop_datum::time::calendar::{
    self, WEEK_FIRST_WEEKDAY, WEEK_MONDAY_FIRST, WEEK_YEAR, calc_week,
};

use super::parts::{day_name_of, month_name_of};
use super::{null_invalid, zero_in};
use crate::column::{Arg, BytesT, Elem, TimeT, VecCol};
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

/// `v` in decimal, zero-padded to `width`, written without an intermediate string.
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

/// Appends `s`: short pieces (literals, names, suffixes) byte by byte, which is cheaper than
/// a `memcpy` call for a few bytes and is most of what a format writes.
#[inline]
fn put(out: &mut Vec<u8>, s: &[u8]) {
    if s.len() <= 16 {
        out.reserve(s.len());
        for &b in s {
            out.push(b);
        }
    } else {
        out.extend_from_slice(s);
    }
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

fn date_format(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let (t, f) = (c.typed::<TimeT>(0)?, c.typed::<BytesT>(1)?);
    let constant = match f {
        Arg::Const(Some(f)) => Some(scan(f)),
        _ => None,
    };
    let mut out = VecCol::new(EvalType::Bytes, c.n);
    let mut buf = Vec::new();
    for i in 0..c.n {
        let (Some(t), Some(fmt)) = (t.get(i), f.get(i)) else {
            out.push_null();
            continue;
        };
        if fmt.is_empty() {
            // MySQL: an empty format is NULL.
            out.push_null();
            continue;
        }
        if zero_in(&t) {
            null_invalid::<()>(ctx, t)?;
            out.push_null();
            continue;
        }
        buf.clear();
        let ok = match &constant {
            Some(toks) => format_into(&t, toks, &mut buf),
            None => format_into(&t, &scan(fmt), &mut buf),
        };
        BytesT::push(&mut out, ok.then_some(buf.as_slice()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcop_datum::TimeType;

    fn fmt(s: &str, f: &str) -> Option<String> {
        let t = Time::parse(s, TimeType::DateTime, 6).unwrap();
        let mut out = Vec::new();
        format_into(&t, &scan(f.as_bytes()), &mut out).then(|| String::from_utf8(out).unwrap())
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
}
