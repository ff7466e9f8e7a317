//! MySQL / TiDB `DECIMAL`: a fixed-point decimal with MySQL's semantics and encodings.
//!
//! A [`Decimal`] stores its digits like TiDB's `MyDecimal`: nine words of nine decimal digits
//! each (base 10⁹), counted outward from the decimal point, so a value holds at most 81
//! digits, of which at most [`MAX_FRACTION`] (30) are fraction digits. Column types are limited
//! to [`MAX_PRECISION`] (65) digits; that limit applies when a value is written with
//! [`Decimal::write_bin`].
//!
//! Operations that may lose digits return a [`Res`]: the value is always usable, and the
//! outcome tells the caller whether to raise a truncation warning or an overflow error.
//!
//! Encodings:
//! - the MySQL binary format (`[prec][frac][body]`) used in keys, datums and row v2
//!   ([`Decimal::write_bin`], [`Decimal::decode_bin`]); byte order equals numeric order for
//!   the same (precision, fraction);
//! - the 40-byte `MyDecimal` struct of TiDB's chunk format ([`Decimal::to_chunk_bytes`],
//!   [`Decimal::from_chunk_bytes`]).
//!
//! ```
//! use rcop_datum::decimal::{Decimal, DEFAULT_DIV_FRAC_INCR};
//!
//! let a: Decimal = "123.45".parse().unwrap();
//! let b: Decimal = "-10.5".parse().unwrap();
//! assert_eq!(a.add(&b).value().to_string(), "112.95");
//! assert_eq!(a.mul(&b).value().to_string(), "-1296.225");
//! let q = a.div(&b, DEFAULT_DIV_FRAC_INCR).unwrap().value();
//! assert_eq!(q.to_string(), "-11.757143");
//! ```

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use crate::codec::Reader;
use crate::error::{Error, Result, parse_error};

mod big;
mod bin;
mod mul;
mod parse;

use big::Big;
pub use bin::BinI128Decoder;
use parse::{StackBuf, parse_impl};

/// Maximum precision (total digits) of a `DECIMAL` column type.
pub const MAX_PRECISION: u8 = 65;
/// Maximum number of fraction digits of a `DECIMAL` value.
pub const MAX_FRACTION: u8 = 30;
/// MySQL's default `div_precision_increment`: a quotient gets this many more fraction digits
/// than its dividend.
pub const DEFAULT_DIV_FRAC_INCR: u8 = 4;
/// Size of a decimal in TiDB's chunk format (the `MyDecimal` struct).
pub const CHUNK_SIZE: usize = 40;

/// Words in a decimal's buffer.
const WORD_BUF_LEN: usize = 9;
/// Decimal digits per word.
const DIGITS_PER_WORD: usize = 9;
/// Maximum digits a decimal can hold.
const MAX_DIGITS: usize = WORD_BUF_LEN * DIGITS_PER_WORD;
/// The base of a word.
const BASE: u32 = 1_000_000_000;
/// Powers of ten that fit a word.
const POW10: [u32; 10] =
    [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000];
/// Bytes taken in the binary format by a partial word of `n` digits.
const DIG2BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];

const WHAT: &str = "DECIMAL";

// ---------------------------------------------------------------------------------------------
// Res

/// Outcome of an operation that may lose digits. The value is always usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Res<T> {
    /// Exact result.
    Ok(T),
    /// Fraction digits were dropped (rounded or truncated): MySQL raises a truncation warning.
    Truncated(T),
    /// The result did not fit; the value is saturated (the largest value of its sign).
    Overflow(T),
}

impl<T> Res<T> {
    /// The value, whatever the outcome.
    #[inline]
    pub fn value(self) -> T {
        match self {
            Res::Ok(v) | Res::Truncated(v) | Res::Overflow(v) => v,
        }
    }

    /// True for an exact result.
    #[inline]
    pub fn is_ok(&self) -> bool {
        matches!(self, Res::Ok(_))
    }

    /// True when fraction digits were dropped.
    #[inline]
    pub fn is_truncated(&self) -> bool {
        matches!(self, Res::Truncated(_))
    }

    /// True when the result overflowed.
    #[inline]
    pub fn is_overflow(&self) -> bool {
        matches!(self, Res::Overflow(_))
    }

    /// Maps the value, keeping the outcome.
    #[inline]
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Res<U> {
        match self {
            Res::Ok(v) => Res::Ok(f(v)),
            Res::Truncated(v) => Res::Truncated(f(v)),
            Res::Overflow(v) => Res::Overflow(f(v)),
        }
    }

    /// `Overflow` becomes [`Error::Overflow`]; `Ok` and `Truncated` give the value.
    #[inline]
    pub fn into_result(self) -> Result<T> {
        match self {
            Res::Ok(v) | Res::Truncated(v) => Ok(v),
            Res::Overflow(_) => Err(Error::Overflow { what: WHAT }),
        }
    }

    /// Keeps the value and the worse of the two outcomes (`Overflow` > `Truncated` > `Ok`).
    #[inline]
    fn worst<U>(self, other: &Res<U>) -> Res<T> {
        match (self, other) {
            (Res::Overflow(v), _) | (Res::Ok(v) | Res::Truncated(v), Res::Overflow(_)) => {
                Res::Overflow(v)
            }
            (Res::Truncated(v), _) | (Res::Ok(v), Res::Truncated(_)) => Res::Truncated(v),
            (Res::Ok(v), Res::Ok(_)) => Res::Ok(v),
        }
    }
}

/// How [`Decimal::round`] treats the dropped digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundMode {
    /// Round half away from zero (MySQL `ROUND`).
    HalfUp,
    /// Drop the digits (MySQL `TRUNCATE`).
    Truncate,
    /// Round away from zero when any dropped digit is non-zero.
    Ceiling,
}

// ---------------------------------------------------------------------------------------------
// Decimal

/// A MySQL `DECIMAL` value (TiDB's `MyDecimal`).
///
/// Comparison, equality and hashing use the numeric value: `1.0 == 1.00` and `-0 == 0`.
/// `Display` prints exactly [`frac_cnt`](Decimal::frac_cnt) fraction digits.
#[derive(Clone, Copy)]
pub struct Decimal {
    /// Significant integer digits (leading zeros stripped; 0 for a zero integer part).
    int_cnt: u8,
    /// Fraction digits, at most [`MAX_FRACTION`].
    frac_cnt: u8,
    /// Fraction digits TiDB displays; equals `frac_cnt` except for values read from a chunk.
    result_frac_cnt: u8,
    /// Sign; never set for zero.
    negative: bool,
    /// Integer words (most significant first, the first one non-zero), then fraction words
    /// (digits left-aligned in the last one), then zeros.
    word_buf: [u32; WORD_BUF_LEN],
}

/// Words needed for `digits` digits.
#[inline]
const fn words_for(digits: usize) -> usize {
    digits.div_ceil(DIGITS_PER_WORD)
}

/// Number of decimal digits of `w` (0 for 0).
#[inline]
fn digits_of(w: u32) -> usize {
    POW10.iter().position(|&p| w < p).unwrap_or(POW10.len())
}

impl Default for Decimal {
    fn default() -> Self {
        Decimal::zero()
    }
}

impl Decimal {
    /// Zero, with no fraction digits.
    #[inline]
    pub const fn zero() -> Self {
        Decimal {
            int_cnt: 0,
            frac_cnt: 0,
            result_frac_cnt: 0,
            negative: false,
            word_buf: [0; WORD_BUF_LEN],
        }
    }

    /// The value of an `i64`.
    pub fn from_i64(v: i64) -> Self {
        let mut d = Decimal::from_u64(v.unsigned_abs());
        d.negative = v < 0;
        d
    }

    /// The value of a `u64`.
    pub fn from_u64(mut v: u64) -> Self {
        let mut le = [0u32; 3];
        let mut n = 0;
        while v > 0 {
            le[n] = (v % u64::from(BASE)) as u32;
            v /= u64::from(BASE);
            n += 1;
        }
        let mut d = Decimal::zero();
        for i in 0..n {
            d.word_buf[i] = le[n - 1 - i];
        }
        d.int_cnt =
            if n == 0 { 0 } else { ((n - 1) * DIGITS_PER_WORD + digits_of(d.word_buf[0])) as u8 };
        d
    }

    /// The value of a finite `f64`, through its shortest round-trip representation (as MySQL
    /// converts a double). NaN and infinities are [`Error::Invalid`].
    pub fn from_f64(v: f64) -> Result<Res<Decimal>> {
        if !v.is_finite() {
            return Err(Error::Invalid { what: WHAT, reason: "not a finite number" });
        }
        let mut buf = StackBuf::default();
        // `{:e}` prints the shortest digits that round-trip, with an exponent.
        fmt::write(&mut buf, format_args!("{v:e}"))
            .map_err(|_| Error::Invalid { what: WHAT, reason: "float formatting failed" })?;
        Decimal::parse_bytes(buf.as_bytes())
    }

    /// Parses `[-+]ddd[.ddd][e[-+]dd]` with optional surrounding whitespace.
    ///
    /// - no digits at all: [`Error::Parse`];
    /// - more than 30 fraction digits: rounded half up to 30, `Truncated` when a non-zero digit
    ///   was dropped;
    /// - more than 81 integer digits: `Overflow` with the largest 81-digit value;
    /// - trailing characters after a number: `Truncated` with the number read so far (TiDB's
    ///   "Truncated incorrect DECIMAL value" warning). [`FromStr`] rejects them.
    pub fn parse(s: &str) -> Result<Res<Decimal>> {
        Decimal::parse_bytes(s.as_bytes())
    }

    /// [`Decimal::parse`] on bytes.
    pub fn parse_bytes(s: &[u8]) -> Result<Res<Decimal>> {
        match parse_impl(s) {
            Some((res, true)) => Ok(res),
            Some((res, false)) => Ok(res.worst(&Res::Truncated(()))),
            None => Err(parse_error(WHAT, &String::from_utf8_lossy(s))),
        }
    }

    /// The nearest `f64`.
    pub fn as_f64(&self) -> f64 {
        let mut buf = [0u8; STR_BUF];
        let n = self.fmt_into(&mut buf);
        std::str::from_utf8(&buf[..n]).ok().and_then(|s| s.parse().ok()).unwrap_or(0.0)
    }

    /// The value rounded half up to an integer: `Truncated` when fraction digits were dropped,
    /// `Overflow` (saturated) when out of `i64` range.
    pub fn as_i64(&self) -> Res<i64> {
        let r = self.round(0, RoundMode::HalfUp);
        let d = r.value();
        let changed = d != *self;
        let iw = d.int_words();
        let mut mag: u128 = 0;
        if iw > 3 {
            mag = u128::MAX;
        } else {
            for &w in &d.word_buf[..iw] {
                mag = mag * u128::from(BASE) + u128::from(w);
            }
        }
        let (lo, hi) = (u128::from(i64::MIN.unsigned_abs()), i64::MAX as u128);
        if d.negative {
            if mag > lo {
                Res::Overflow(i64::MIN)
            } else {
                finish_int(-(mag as i128) as i64, changed)
            }
        } else if mag > hi || r.is_overflow() {
            Res::Overflow(i64::MAX)
        } else {
            finish_int(mag as i64, changed)
        }
    }

    /// The value rounded half up to a `u64`. A negative value is `Overflow(0)` (TiDB's
    /// `ToUint`); above `u64::MAX` is `Overflow(u64::MAX)`; dropped fraction is `Truncated`.
    pub fn as_u64(&self) -> Res<u64> {
        if self.negative {
            return Res::Overflow(0);
        }
        let r = self.round(0, RoundMode::HalfUp);
        let d = r.value();
        let changed = d != *self;
        let iw = d.int_words();
        if iw > 3 || r.is_overflow() {
            return Res::Overflow(u64::MAX);
        }
        let mut mag: u128 = 0;
        for &w in &d.word_buf[..iw] {
            mag = mag * u128::from(BASE) + u128::from(w);
        }
        match u64::try_from(mag) {
            Ok(v) => finish_int(v, changed),
            Err(_) => Res::Overflow(u64::MAX),
        }
    }

    /// True for zero (of any scale).
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.word_buf.iter().all(|&w| w == 0)
    }

    /// True for a value below zero.
    #[inline]
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// Significant integer digits (0 when the integer part is zero).
    #[inline]
    pub fn int_cnt(&self) -> u8 {
        self.int_cnt
    }

    /// Fraction digits (the scale).
    #[inline]
    pub fn frac_cnt(&self) -> u8 {
        self.frac_cnt
    }

    /// TiDB's `resultFrac`: the scale TiDB displays. Equals [`frac_cnt`](Self::frac_cnt)
    /// except for a value read from a chunk that carried another one.
    #[inline]
    pub fn result_frac_cnt(&self) -> u8 {
        self.result_frac_cnt
    }

    /// Precision and fraction that hold this value exactly: `(max(int_cnt + frac_cnt, 1),
    /// frac_cnt)`, what TiDB and TiKV use when they encode a datum from the value itself.
    #[inline]
    pub fn prec_and_frac(&self) -> (u8, u8) {
        ((self.int_cnt + self.frac_cnt).max(1), self.frac_cnt)
    }

    /// The largest value of `DECIMAL(prec, frac)` (`prec` capped at 81, `frac` at 30 and at
    /// `prec`), e.g. `999.99` for (5, 2).
    pub fn max_for(prec: u8, frac: u8) -> Decimal {
        let prec = usize::from(prec).min(MAX_DIGITS);
        let frac = usize::from(frac).min(usize::from(MAX_FRACTION)).min(prec);
        let mut int_digits = prec - frac;
        // Keep the words within the buffer.
        while words_for(int_digits) + words_for(frac) > WORD_BUF_LEN {
            int_digits -= 1;
        }
        let mut d = Decimal::zero();
        let iw = words_for(int_digits);
        for (i, w) in d.word_buf[..iw].iter_mut().enumerate() {
            let digits =
                if i == 0 { int_digits - (iw - 1) * DIGITS_PER_WORD } else { DIGITS_PER_WORD };
            *w = POW10[digits] - 1;
        }
        for j in 0..words_for(frac) {
            let digits = (frac - j * DIGITS_PER_WORD).min(DIGITS_PER_WORD);
            d.word_buf[iw + j] = BASE - POW10[DIGITS_PER_WORD - digits];
        }
        d.int_cnt = int_digits as u8;
        d.frac_cnt = frac as u8;
        d.result_frac_cnt = frac as u8;
        d
    }

    /// Rounds to `frac` fraction digits (negative: to the left of the point) with `mode`.
    ///
    /// The result has `max(frac, 0)` fraction digits (capped at 30); asking for more digits
    /// than the value has pads with zeros. Dropping digits is what the caller asked for, so it
    /// is `Ok`; a carry past 81 integer digits is `Overflow`.
    pub fn round(&self, frac: i8, mode: RoundMode) -> Res<Decimal> {
        let target = i32::from(frac).min(i32::from(MAX_FRACTION));
        if target >= i32::from(self.frac_cnt) {
            let mut d = *self;
            let room = (WORD_BUF_LEN - d.int_words()) * DIGITS_PER_WORD;
            let f = (target as usize).min(room) as u8;
            d.frac_cnt = f.max(d.frac_cnt);
            d.result_frac_cnt = d.frac_cnt;
            return Res::Ok(d);
        }
        let mut big = Big::from_dec(self);
        let (fw, _) = big.rescale(9 * self.frac_words(), target, mode);
        big.into_dec(fw, target.max(0) as u8, self.negative)
    }

    /// `CEIL`: the smallest integer not below the value.
    pub fn ceil(&self) -> Res<Decimal> {
        self.round(0, if self.negative { RoundMode::Truncate } else { RoundMode::Ceiling })
    }

    /// `FLOOR`: the largest integer not above the value.
    pub fn floor(&self) -> Res<Decimal> {
        self.round(0, if self.negative { RoundMode::Ceiling } else { RoundMode::Truncate })
    }

    /// `self + rhs`, with `max(frac1, frac2)` fraction digits.
    pub fn add(&self, rhs: &Decimal) -> Res<Decimal> {
        add_signed(self, rhs, false)
    }

    /// `self - rhs`, with `max(frac1, frac2)` fraction digits.
    pub fn sub(&self, rhs: &Decimal) -> Res<Decimal> {
        add_signed(self, rhs, true)
    }

    /// `self / rhs` rounded half up to `min(frac1 + frac_incr, 30)` fraction digits (MySQL's
    /// `div_precision_increment`, see [`DEFAULT_DIV_FRAC_INCR`]). `None` when `rhs` is zero.
    pub fn div(&self, rhs: &Decimal, frac_incr: u8) -> Option<Res<Decimal>> {
        if rhs.is_zero() {
            return None;
        }
        let target =
            (usize::from(self.frac_cnt) + usize::from(frac_incr)).min(usize::from(MAX_FRACTION));
        let negative = self.negative != rhs.negative;
        let mut a = Big::from_dec(self);
        let mut b = Big::from_dec(rhs);
        // q·10^(target+1) = A·10^(9·fw_b + target + 1 − 9·fw_a) / B
        let shift = (9 * rhs.frac_words() + target + 1) as isize - (9 * self.frac_words()) as isize;
        if shift >= 0 {
            a.mul_pow10(shift.unsigned_abs());
        } else {
            b.mul_pow10(shift.unsigned_abs());
        }
        let (mut q, _) = Big::divrem(&a, &b);
        let last = q.div_small(10);
        if last >= 5 {
            q.add_small(1);
        }
        let fw = words_for(target);
        q.mul_pow10(9 * fw - target);
        Some(q.into_dec(fw, target as u8, negative))
    }

    /// `self % rhs` (MySQL `MOD`): the sign of `self`, `max(frac1, frac2)` fraction digits.
    /// `None` when `rhs` is zero.
    pub fn rem(&self, rhs: &Decimal) -> Option<Res<Decimal>> {
        if rhs.is_zero() {
            return None;
        }
        let fw = self.frac_words().max(rhs.frac_words());
        let mut a = Big::from_dec(self);
        let mut b = Big::from_dec(rhs);
        a.shl_limbs(fw - self.frac_words());
        b.shl_limbs(fw - rhs.frac_words());
        let (_, r) = Big::divrem(&a, &b);
        Some(r.into_dec(fw, self.frac_cnt.max(rhs.frac_cnt), self.negative))
    }

    /// Appends the MySQL text form (see `Display`) to `out`; allocates nothing else.
    pub fn write_str(&self, out: &mut Vec<u8>) {
        let mut buf = [0u8; STR_BUF];
        let n = self.fmt_into(&mut buf);
        out.extend_from_slice(&buf[..n]);
    }

    // -- internals ----------------------------------------------------------------------------

    #[inline]
    fn int_words(&self) -> usize {
        words_for(usize::from(self.int_cnt))
    }

    #[inline]
    fn frac_words(&self) -> usize {
        words_for(usize::from(self.frac_cnt))
    }

    /// Strips leading zero integer words, recomputes `int_cnt`, clears the sign of zero and
    /// sets `result_frac_cnt` to `frac_cnt`. The words past the used ones must be zero.
    fn normalized(mut self) -> Decimal {
        let iw = self.int_words();
        let zeros = self.word_buf[..iw].iter().take_while(|&&w| w == 0).count();
        if zeros > 0 {
            self.word_buf.copy_within(zeros.., 0);
            for w in &mut self.word_buf[WORD_BUF_LEN - zeros..] {
                *w = 0;
            }
        }
        let iw = iw - zeros;
        self.int_cnt = if iw == 0 {
            0
        } else {
            ((iw - 1) * DIGITS_PER_WORD + digits_of(self.word_buf[0])) as u8
        };
        if self.negative && self.is_zero() {
            self.negative = false;
        }
        self.result_frac_cnt = self.frac_cnt;
        self
    }

    /// Writes the text form into `buf`, returning its length.
    fn fmt_into(&self, buf: &mut [u8; STR_BUF]) -> usize {
        let mut n = 0;
        if self.negative {
            buf[0] = b'-';
            n = 1;
        }
        let iw = self.int_words();
        if iw == 0 {
            buf[n] = b'0';
            n += 1;
        } else {
            n = put_digits(buf, n, self.word_buf[0], digits_of(self.word_buf[0]));
            for &w in &self.word_buf[1..iw] {
                n = put_digits(buf, n, w, DIGITS_PER_WORD);
            }
        }
        let frac = usize::from(self.frac_cnt);
        if frac > 0 {
            buf[n] = b'.';
            n += 1;
            for j in 0..self.frac_words() {
                let digits = (frac - j * DIGITS_PER_WORD).min(DIGITS_PER_WORD);
                let w = self.word_buf[iw + j] / POW10[DIGITS_PER_WORD - digits];
                n = put_digits(buf, n, w, digits);
            }
        }
        n
    }
}

/// Length of the largest text form: sign, 81 digits, point, 30 digits (or "0." and 30).
const STR_BUF: usize = 128;

/// Writes the `digits` low decimal digits of `w`, zero-padded, at `buf[n..]`.
#[inline]
fn put_digits(buf: &mut [u8; STR_BUF], n: usize, mut w: u32, digits: usize) -> usize {
    for i in (0..digits).rev() {
        buf[n + i] = b'0' + (w % 10) as u8;
        w /= 10;
    }
    n + digits
}

#[inline]
fn finish_int<T>(v: T, changed: bool) -> Res<T> {
    if changed { Res::Truncated(v) } else { Res::Ok(v) }
}

/// Magnitude comparison.
fn cmp_abs(a: &Decimal, b: &Decimal) -> Ordering {
    let (ia, ib) = (a.int_words(), b.int_words());
    if ia != ib {
        return ia.cmp(&ib);
    }
    // Same integer word count; the unused words are zero, so the rest compares word by word.
    a.word_buf.cmp(&b.word_buf)
}

/// `a + b` (or `a - b` when `negate_b`).
fn add_signed(a: &Decimal, b: &Decimal, negate_b: bool) -> Res<Decimal> {
    let b_negative = b.negative != negate_b && !b.is_zero();
    let frac = a.frac_cnt.max(b.frac_cnt);
    let fw = a.frac_words().max(b.frac_words());
    let mut x = Big::from_dec(a);
    let mut y = Big::from_dec(b);
    x.shl_limbs(fw - a.frac_words());
    y.shl_limbs(fw - b.frac_words());
    if a.negative == b_negative {
        x.add_assign(&y);
        return x.into_dec(fw, frac, a.negative);
    }
    match x.cmp(&y) {
        Ordering::Less => {
            y.sub_assign(&x);
            y.into_dec(fw, frac, b_negative)
        }
        _ => {
            x.sub_assign(&y);
            x.into_dec(fw, frac, a.negative)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Traits

impl PartialEq for Decimal {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Decimal {}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.negative, other.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => cmp_abs(self, other),
            (true, true) => cmp_abs(other, self),
        }
    }
}

impl Hash for Decimal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let iw = self.int_words();
        let frac = &self.word_buf[iw..];
        let used = frac.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
        self.negative.hash(state);
        iw.hash(state);
        self.word_buf[..iw].hash(state);
        frac[..used].hash(state);
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; STR_BUF];
        let n = self.fmt_into(&mut buf);
        // The buffer holds ASCII only.
        f.write_str(std::str::from_utf8(&buf[..n]).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Decimal {
    type Err = Error;

    /// Strict parse: the whole text must be a number (surrounding whitespace allowed);
    /// overflow is an error, rounding of more than 30 fraction digits is not.
    fn from_str(s: &str) -> Result<Decimal> {
        match parse_impl(s.as_bytes()) {
            Some((Res::Overflow(_), _)) => Err(Error::Overflow { what: WHAT }),
            Some((r, true)) => Ok(r.value()),
            _ => Err(parse_error(WHAT, s)),
        }
    }
}

impl std::ops::Neg for Decimal {
    type Output = Decimal;

    fn neg(mut self) -> Decimal {
        if !self.is_zero() {
            self.negative = !self.negative;
        }
        self
    }
}

impl From<i64> for Decimal {
    fn from(v: i64) -> Self {
        Decimal::from_i64(v)
    }
}

impl From<u64> for Decimal {
    fn from(v: u64) -> Self {
        Decimal::from_u64(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_invariants() {
        let d = Decimal::parse("000000000000000123.4500").unwrap().value();
        assert_eq!((d.int_cnt, d.frac_cnt, d.word_buf[0], d.word_buf[1]), (3, 4, 123, 450_000_000));
        assert!(d.word_buf[2..].iter().all(|&w| w == 0));
        let z = Decimal::parse("-0.000").unwrap().value();
        assert!(!z.negative && z.int_cnt == 0 && z.frac_cnt == 3);
    }
}
