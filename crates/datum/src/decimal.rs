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

    /// `self * rhs`, with `min(frac1 + frac2, 30)` fraction digits (rounded half up,
    /// `Truncated` when a non-zero digit was dropped).
    pub fn mul(&self, rhs: &Decimal) -> Res<Decimal> {
        let frac = usize::from(self.frac_cnt) + usize::from(rhs.frac_cnt);
        let fw = self.frac_words() + rhs.frac_words();
        let negative = self.negative != rhs.negative;
        let mut big = Big::mul(&Big::from_dec(self), &Big::from_dec(rhs));
        if frac > usize::from(MAX_FRACTION) {
            let (fw, dropped) = big.rescale(9 * fw, i32::from(MAX_FRACTION), RoundMode::HalfUp);
            let r = big.into_dec(fw, MAX_FRACTION, negative);
            return if dropped { r.worst(&Res::Truncated(())) } else { r };
        }
        big.into_dec(fw, frac as u8, negative)
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

    /// Size of the binary body (without the two header bytes) of `DECIMAL(prec, frac)`.
    /// [`Error::Invalid`] unless `1 <= prec <= 65`, `frac <= 30` and `frac <= prec`.
    pub fn bin_size(prec: u8, frac: u8) -> Result<usize> {
        check_prec_frac(prec, frac)?;
        Ok(bin_part_size(usize::from(prec - frac)) + bin_part_size(usize::from(frac)))
    }

    /// Appends `[prec][frac][body]` in MySQL's binary format.
    ///
    /// More fraction digits than `frac` are rounded half up (`Truncated` when a non-zero digit
    /// was dropped). A value with more than `prec - frac` integer digits writes the largest
    /// (or smallest) value of `DECIMAL(prec, frac)` and returns `Overflow`.
    pub fn write_bin(&self, prec: u8, frac: u8, out: &mut Vec<u8>) -> Result<Res<()>> {
        let size = Decimal::bin_size(prec, frac)?;
        let mut res = Res::Ok(());
        let mut d = *self;
        if d.frac_cnt > frac {
            let r = d.round(frac as i8, RoundMode::HalfUp);
            let rounded = r.value();
            if !r.is_overflow() && rounded != d {
                res = Res::Truncated(());
            }
            d = rounded;
        }
        let int_digits = usize::from(prec - frac);
        if usize::from(d.int_cnt) > int_digits {
            let negative = d.negative;
            d = Decimal::max_for(prec, frac);
            d.negative = negative;
            res = Res::Overflow(());
        }
        out.reserve(size + 2);
        out.push(prec);
        out.push(frac);
        let start = out.len();
        let mask: u32 = if d.negative { u32::MAX } else { 0 };
        let iw = d.int_words();
        let int_word = |k: usize| if k < iw { d.word_buf[iw - 1 - k] } else { 0 };
        let (full, part) = (int_digits / DIGITS_PER_WORD, int_digits % DIGITS_PER_WORD);
        if part > 0 {
            push_be(out, int_word(full) ^ mask, DIG2BYTES[part]);
        }
        for k in (0..full).rev() {
            push_be(out, int_word(k) ^ mask, 4);
        }
        let fw = d.frac_words();
        let frac_word = |j: usize| if j < fw { d.word_buf[iw + j] } else { 0 };
        let frac = usize::from(frac);
        let (full, part) = (frac / DIGITS_PER_WORD, frac % DIGITS_PER_WORD);
        for j in 0..full {
            push_be(out, frac_word(j) ^ mask, 4);
        }
        if part > 0 {
            let w = frac_word(full) / POW10[DIGITS_PER_WORD - part];
            push_be(out, w ^ mask, DIG2BYTES[part]);
        }
        if let Some(b) = out.get_mut(start) {
            *b ^= 0x80;
        }
        Ok(res)
    }

    /// Reads `[prec][frac][body]` written by [`write_bin`](Self::write_bin) (or TiDB/TiKV),
    /// returning the value and its declared precision and fraction.
    ///
    /// Rejects a bad precision or fraction, a truncated body, and words that are not decimal
    /// digits (a full word ≥ 10⁹, a partial word ≥ 10^digits).
    pub fn decode_bin(r: &mut Reader<'_>) -> Result<(Decimal, u8, u8)> {
        let prec = r.read_u8("decimal precision")?;
        let frac = r.read_u8("decimal fraction")?;
        let size = Decimal::bin_size(prec, frac)?;
        let body = r.read_bytes(size, "decimal body")?;
        let first = body.first().copied().unwrap_or(0x80);
        let mask: u8 = if first & 0x80 == 0 { 0xFF } else { 0 };
        let mut pos = 0usize;
        let mut read = |n: usize, digits: usize| -> Result<u32> {
            let mut v: u32 = 0;
            for i in 0..n {
                let mut b = body.get(pos + i).copied().unwrap_or(0) ^ mask;
                if pos + i == 0 {
                    b ^= 0x80;
                }
                v = (v << 8) | u32::from(b);
            }
            pos += n;
            if v >= POW10[digits] {
                return Err(Error::Invalid { what: WHAT, reason: "digit word out of range" });
            }
            Ok(v)
        };
        let mut d = Decimal::zero();
        let int_digits = usize::from(prec - frac);
        let (full, part) = (int_digits / DIGITS_PER_WORD, int_digits % DIGITS_PER_WORD);
        let mut i = 0;
        if part > 0 {
            d.word_buf[i] = read(DIG2BYTES[part], part)?;
            i += 1;
        }
        for _ in 0..full {
            d.word_buf[i] = read(4, DIGITS_PER_WORD)?;
            i += 1;
        }
        let frac = usize::from(frac);
        let (ffull, fpart) = (frac / DIGITS_PER_WORD, frac % DIGITS_PER_WORD);
        for _ in 0..ffull {
            d.word_buf[i] = read(4, DIGITS_PER_WORD)?;
            i += 1;
        }
        if fpart > 0 {
            d.word_buf[i] = read(DIG2BYTES[fpart], fpart)? * POW10[DIGITS_PER_WORD - fpart];
        }
        d.int_cnt = int_digits as u8;
        d.frac_cnt = frac as u8;
        d.result_frac_cnt = frac as u8;
        d.negative = mask != 0;
        Ok((d.normalized(), prec, frac as u8))
    }

    /// Decodes a whole binary decimal `[prec][frac][body]` (all of `v`, no trailing bytes)
    /// straight to fixed point: `(m, frac)` with value `m / 10^frac`, the scale being the
    /// declared fraction.
    ///
    /// The hot path of scans that sum or compare DECIMAL(p ≤ 38) columns in `i128`. `None`
    /// when the value does not fit that form (precision above 38) or when `v` is not
    /// exactly one well-formed value (bad precision or fraction, wrong length, a digit word
    /// out of range); [`decode_bin`](Self::decode_bin) then tells which error it is. Whenever
    /// this returns `Some`, `decode_bin` accepts `v` and decodes the same value.
    ///
    /// ```
    /// use rcop_datum::Decimal;
    /// let mut bin = Vec::new();
    /// let d: Decimal = "-1234.56".parse().unwrap();
    /// d.write_bin(15, 2, &mut bin).unwrap();
    /// assert_eq!(Decimal::decode_bin_i128(&bin), Some((-123456, 2)));
    /// ```
    #[inline]
    pub fn decode_bin_i128(v: &[u8]) -> Option<(i128, u8)> {
        let [prec, frac, ..] = *v else { return None };
        // One value: the word loop, without building the decoder's window.
        let d = BinI128Decoder::layout(prec, frac)?;
        Some((d.decode_words(v)?, frac))
    }

    /// The 40-byte `MyDecimal` struct of TiDB's chunk format: `int_cnt`, `frac_cnt`,
    /// `result_frac_cnt`, `negative` as bytes, then nine little-endian `u32` words.
    pub fn to_chunk_bytes(&self) -> [u8; CHUNK_SIZE] {
        let mut b = [0u8; CHUNK_SIZE];
        b[0] = self.int_cnt;
        b[1] = self.frac_cnt;
        b[2] = self.result_frac_cnt;
        b[3] = u8::from(self.negative);
        for (chunk, w) in b[4..].chunks_exact_mut(4).zip(self.word_buf) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        b
    }

    /// Reads the 40-byte chunk struct (extra bytes are ignored). Checks the length, that the
    /// digit counts fit the word buffer, that `negative` is 0 or 1, and that every used word
    /// holds only its digits.
    pub fn from_chunk_bytes(b: &[u8]) -> Result<Decimal> {
        let Some(b) = b.get(..CHUNK_SIZE) else {
            return Err(Error::Eof { what: "decimal chunk", need: CHUNK_SIZE, have: b.len() });
        };
        let (int_cnt, frac_cnt, result_frac_cnt, neg) = (b[0], b[1], b[2], b[3]);
        let invalid = |reason| Err(Error::Invalid { what: WHAT, reason });
        if frac_cnt > MAX_FRACTION {
            return invalid("fraction digits above 30");
        }
        let (iw, fw) = (words_for(usize::from(int_cnt)), words_for(usize::from(frac_cnt)));
        if iw + fw > WORD_BUF_LEN {
            return invalid("digit counts exceed the word buffer");
        }
        if neg > 1 {
            return invalid("sign byte is not 0 or 1");
        }
        let mut d = Decimal::zero();
        for (i, chunk) in b[4..].chunks_exact(4).enumerate().take(iw + fw) {
            let w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            if w >= BASE {
                return invalid("word above 999999999");
            }
            d.word_buf[i] = w;
        }
        let ipart = usize::from(int_cnt) % DIGITS_PER_WORD;
        if iw > 0 && ipart > 0 && d.word_buf[0] >= POW10[ipart] {
            return invalid("integer word has more digits than int_cnt");
        }
        let fpart = usize::from(frac_cnt) % DIGITS_PER_WORD;
        if fw > 0
            && fpart > 0
            && !d.word_buf[iw + fw - 1].is_multiple_of(POW10[DIGITS_PER_WORD - fpart])
        {
            return invalid("fraction word has more digits than frac_cnt");
        }
        if result_frac_cnt > MAX_FRACTION {
            return invalid("result fraction count above 30");
        }
        d.int_cnt = int_cnt;
        d.frac_cnt = frac_cnt;
        d.negative = neg == 1;
        let mut d = d.normalized();
        d.result_frac_cnt = result_frac_cnt;
        Ok(d)
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

/// Appends the low `n` bytes of `w`, big-endian.
#[inline]
fn push_be(out: &mut Vec<u8>, w: u32, n: usize) {
    out.extend_from_slice(&w.to_be_bytes()[4 - n..]);
}

/// Body bytes of a part (integer or fraction) of `digits` digits.
#[inline]
fn bin_part_size(digits: usize) -> usize {
    digits / DIGITS_PER_WORD * 4 + DIG2BYTES[digits % DIGITS_PER_WORD]
}

/// A decoder of binary decimals `[prec][frac][body]` of one declared `DECIMAL(prec, frac)`,
/// `prec ≤ 38`, straight to the fixed-point mantissa (`i128`, scale `frac`).
///
/// [`Decimal::decode_bin_i128`] works out the body's word layout from each value's header;
/// a column scan, whose values nearly always share one header, builds this decoder once and
/// reuses it while the headers match.
///
/// ```
/// use rcop_datum::decimal::{BinI128Decoder, Decimal};
/// let dec = BinI128Decoder::new(15, 2).unwrap();
/// let mut bin = Vec::new();
/// let d: Decimal = "-1234.56".parse().unwrap();
/// d.write_bin(15, 2, &mut bin).unwrap();
/// assert_eq!(dec.decode(&bin), Some(-123456));
/// // Another declared type is not this decoder's.
/// bin.clear();
/// d.write_bin(16, 2, &mut bin).unwrap();
/// assert_eq!(dec.decode(&bin), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinI128Decoder {
    prec: u8,
    frac: u8,
    /// Digits of the leading partial word (0 when none).
    lead: u8,
    /// Number of full 9-digit words.
    full: u8,
    /// Digits of the trailing partial word (0 when none).
    tail: u8,
    /// Body length in bytes.
    size: u8,
    /// For bodies of at most 8 bytes and 18 digits: each word as `(shift, mask, 10^digits)`
    /// within the body read as one integer; unused slots are `(0, 0, 1)`.
    window: [(u32, u64, u64); 3],
}

impl BinI128Decoder {
    /// The decoder of `DECIMAL(prec, frac)`; `None` for a type that is not a valid decimal
    /// type or has more than 38 digits.
    pub fn new(prec: u8, frac: u8) -> Option<Self> {
        let mut d = Self::layout(prec, frac)?;
        let (lead, full, tail) = (usize::from(d.lead), usize::from(d.full), usize::from(d.tail));
        if prec <= 18 && d.size <= 8 {
            // At most three words fit 8 bytes: a partial, a full and a partial one, or two
            // full ones.
            let mut left = 8 * u32::from(d.size);
            let words = [(lead, 1), (DIGITS_PER_WORD, full), (tail, 1)];
            let mut slots = d.window.iter_mut();
            for (digits, times) in words {
                if digits == 0 {
                    continue;
                }
                for _ in 0..times {
                    let bytes = DIG2BYTES[digits] as u32;
                    left -= 8 * bytes;
                    let slot = slots.next()?;
                    *slot = (left, (1u64 << (8 * bytes)) - 1, u64::from(POW10[digits]));
                }
            }
        }
        Some(d)
    }

    /// The word layout of `DECIMAL(prec, frac)`, without the window (all slots unused).
    #[inline]
    fn layout(prec: u8, frac: u8) -> Option<Self> {
        if prec == 0 || prec > 38 || frac > prec || frac > MAX_FRACTION {
            return None;
        }
        let (intg, fracd) = (usize::from(prec - frac), usize::from(frac));
        let lead = intg % DIGITS_PER_WORD;
        let full = intg / DIGITS_PER_WORD + fracd / DIGITS_PER_WORD;
        let tail = fracd % DIGITS_PER_WORD;
        let size = DIG2BYTES[lead] + full * 4 + DIG2BYTES[tail];
        Some(BinI128Decoder {
            prec,
            frac,
            lead: lead as u8,
            full: full as u8,
            tail: tail as u8,
            size: u8::try_from(size).ok()?,
            window: [(0, 0, 1); 3],
        })
    }

    /// The declared precision.
    pub fn prec(&self) -> u8 {
        self.prec
    }

    /// The declared fraction: the scale of the decoded mantissas.
    pub fn frac(&self) -> u8 {
        self.frac
    }

    /// Decodes all of `v` to its mantissa. `None` when `v` is not exactly one well-formed
    /// value of this decoder's declared type (another header, wrong length, a digit word out
    /// of range); [`Decimal::decode_bin`] accepts every `v` this decodes, with the same
    /// value.
    #[inline(always)]
    pub fn decode(&self, v: &[u8]) -> Option<i128> {
        if self.prec <= 18
            && self.size <= 8
            && let [prec, frac, ref body @ ..] = *v
            && prec == self.prec
            && frac == self.frac
            && body.len() == usize::from(self.size)
            && let Some(&window) = v.last_chunk::<8>()
        {
            return self.decode_window(u64::from_be_bytes(window));
        }
        self.decode_words(v)
    }

    /// [`decode`](Self::decode) a word at a time, for values the window path does not take.
    #[inline(never)]
    fn decode_words(&self, v: &[u8]) -> Option<i128> {
        let [prec, frac, ref body @ ..] = *v else { return None };
        if prec != self.prec || frac != self.frac || body.len() != usize::from(self.size) {
            return None;
        }
        let neg = body.first().is_some_and(|&f| f & 0x80 == 0);
        let mask = if neg { u32::MAX } else { 0 };
        // Up to 18 digits the mantissa fits a u64, whose arithmetic is cheaper.
        let m = if self.prec <= 18 {
            let mut m: u64 = 0;
            self.fold(body, mask, |w, p| m = m * u64::from(p) + u64::from(w))?;
            i128::from(m)
        } else {
            let mut m: i128 = 0;
            self.fold(body, mask, |w, p| m = m * i128::from(p) + i128::from(w))?;
            m
        };
        Some(if neg { -m } else { m })
    }

    /// Decodes a body of at most 8 bytes (at most 18 digits) held in the low bytes of
    /// `window` (the last 8 bytes of the value, read big-endian), extracting the words with
    /// shifts instead of byte loops.
    #[inline(always)]
    fn decode_window(&self, window: u64) -> Option<i128> {
        let bits = 8 * u32::from(self.size);
        let body_mask = u64::MAX.checked_shr(64 - bits).unwrap_or(0);
        let mut x = window & body_mask;
        let sign_bit = 0x80u64 << (bits - 8);
        let neg = x & sign_bit == 0;
        if neg {
            x ^= body_mask;
        }
        x ^= sign_bit;
        // At most three words (18 digits in 8 bytes); unused slots multiply by 1 and add 0.
        let mut m: u64 = 0;
        let mut bad = false;
        for (shift, mask, p) in self.window {
            let w = (x >> shift) & mask;
            bad |= w >= p;
            // Exact unless a word is out of range, when the result is discarded.
            m = m.wrapping_mul(p).wrapping_add(w);
        }
        if bad {
            return None;
        }
        let m = i128::from(m);
        Some(if neg { -m } else { m })
    }

    /// Calls `f(word, 10^digits)` for each digit word of `body` (whose length the caller
    /// checked), most significant first, sign encoding undone (`mask` is all ones for
    /// negative values); `None` when a word is out of range.
    #[inline(always)]
    fn fold(&self, body: &[u8], mask: u32, mut f: impl FnMut(u32, u32)) -> Option<()> {
        // The sign bit of the first byte was flipped on writing.
        let mut flip: u32 = 0x80;
        let mut pos = 0usize;
        if self.lead > 0 {
            let digits = usize::from(self.lead);
            let n = DIG2BYTES[digits];
            let bytes = body.get(..n)?;
            let w = bytes.iter().fold(0u32, |acc, &x| (acc << 8) | u32::from(x));
            let w = (w ^ (mask >> (32 - 8 * n))) ^ (flip << (8 * (n - 1)));
            flip = 0;
            let p = POW10[digits];
            if w >= p {
                return None;
            }
            f(w, p);
            pos = n;
        }
        for _ in 0..self.full {
            let &[a, b, c, d] = body.get(pos..pos + 4)? else { return None };
            let w = u32::from_be_bytes([a, b, c, d]) ^ mask ^ (flip << 24);
            flip = 0;
            if w >= BASE {
                return None;
            }
            f(w, BASE);
            pos += 4;
        }
        if self.tail > 0 {
            let digits = usize::from(self.tail);
            let n = DIG2BYTES[digits];
            let bytes = body.get(pos..pos + n)?;
            let w = bytes.iter().fold(0u32, |acc, &x| (acc << 8) | u32::from(x));
            let w = (w ^ (mask >> (32 - 8 * n))) ^ (flip << (8 * (n - 1)));
            let p = POW10[digits];
            if w >= p {
                return None;
            }
            f(w, p);
        }
        Some(())
    }
}

fn check_prec_frac(prec: u8, frac: u8) -> Result<()> {
    let reason = if prec == 0 {
        "precision 0"
    } else if prec > MAX_PRECISION {
        "precision above 65"
    } else if frac > MAX_FRACTION {
        "fraction above 30"
    } else if frac > prec {
        "fraction above precision"
    } else {
        return Ok(());
    };
    Err(Error::Invalid { what: WHAT, reason })
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
// Parsing

/// Digits of a number split around the point, with leading zeros removed: `a` then `b`.
struct Digits<'a> {
    a: &'a [u8],
    b: &'a [u8],
}

impl Digits<'_> {
    #[inline]
    fn len(&self) -> usize {
        self.a.len() + self.b.len()
    }

    /// Digit `k` (0 beyond either end).
    #[inline]
    fn get(&self, k: i64) -> u32 {
        if k < 0 {
            return 0;
        }
        let k = k as usize;
        let c = if k < self.a.len() { self.a.get(k) } else { self.b.get(k - self.a.len()) };
        c.map_or(0, |&c| u32::from(c - b'0'))
    }

    fn drop_leading_zero(&mut self) -> bool {
        if let Some((&b'0', rest)) = self.a.split_first() {
            self.a = rest;
            true
        } else if self.a.is_empty() {
            if let Some((&b'0', rest)) = self.b.split_first() {
                self.b = rest;
                return true;
            }
            false
        } else {
            false
        }
    }
}

#[inline]
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Parses a number; returns the outcome and whether the whole input was consumed, or `None`
/// when no number starts the input.
fn parse_impl(s: &[u8]) -> Option<(Res<Decimal>, bool)> {
    let mut i = 0;
    while s.get(i).is_some_and(|&c| is_space(c)) {
        i += 1;
    }
    let mut negative = false;
    if let Some(&c @ (b'-' | b'+')) = s.get(i) {
        negative = c == b'-';
        i += 1;
    }
    let int_start = i;
    while s.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let int_digits = &s[int_start..i];
    let mut frac_digits: &[u8] = &[];
    if s.get(i) == Some(&b'.') {
        let start = i + 1;
        let mut j = start;
        while s.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        frac_digits = &s[start..j];
        if !int_digits.is_empty() || !frac_digits.is_empty() {
            i = j;
        }
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return None;
    }
    // Exponent: e, optional spaces (TiDB trims them), optional sign, at least one digit.
    let mut exp: i64 = 0;
    if let Some(b'e' | b'E') = s.get(i) {
        let mut j = i + 1;
        while s.get(j).is_some_and(|&c| is_space(c)) {
            j += 1;
        }
        let mut exp_negative = false;
        if let Some(&c @ (b'-' | b'+')) = s.get(j) {
            exp_negative = c == b'-';
            j += 1;
        }
        let start = j;
        while let Some(&c) = s.get(j).filter(|c| c.is_ascii_digit()) {
            // Saturate: anything this large overflows or underflows anyway.
            exp = (exp * 10 + i64::from(c - b'0')).min(1 << 40);
            j += 1;
        }
        if j > start {
            if exp_negative {
                exp = -exp;
            }
            i = j;
        } else {
            exp = 0;
        }
    }
    while s.get(i).is_some_and(|&c| is_space(c)) {
        i += 1;
    }
    let consumed = i == s.len();

    let mut d = Digits { a: int_digits, b: frac_digits };
    // Value = 0.D × 10^p; the frac count (digits after the point as written) is len(D) − p.
    let mut p = int_digits.len() as i64 + exp;
    while d.drop_leading_zero() {
        p -= 1;
    }
    let len = d.len() as i64;
    let frac_cnt = (len - p).max(0);
    if len == 0 {
        let mut z = Decimal::zero();
        z.frac_cnt = frac_cnt.min(i64::from(MAX_FRACTION)) as u8;
        z.result_frac_cnt = z.frac_cnt;
        return Some((Res::Ok(z), consumed));
    }
    let int_cnt = p.max(0);
    if int_cnt > MAX_DIGITS as i64 {
        let mut m = Decimal::max_for(MAX_DIGITS as u8, 0);
        m.negative = negative;
        return Some((Res::Overflow(m), consumed));
    }
    let int_cnt = int_cnt as usize;
    let iw = words_for(int_cnt);
    let keep = (frac_cnt as usize)
        .min(usize::from(MAX_FRACTION))
        .min((WORD_BUF_LEN - iw) * DIGITS_PER_WORD);
    let mut dec = Decimal::zero();
    for wi in 0..iw {
        // Digits of word `wi`, most significant first; the first word may be partial.
        let end = int_cnt - (iw - 1 - wi) * DIGITS_PER_WORD;
        let start = end.saturating_sub(DIGITS_PER_WORD);
        let mut w = 0;
        for k in start..end {
            w = w * 10 + d.get(k as i64);
        }
        dec.word_buf[wi] = w;
    }
    for wj in 0..words_for(keep) {
        let mut w = 0;
        for k in 0..DIGITS_PER_WORD {
            let idx = wj * DIGITS_PER_WORD + k;
            let digit = if idx < keep { d.get(p + idx as i64) } else { 0 };
            w = w * 10 + digit;
        }
        dec.word_buf[iw + wj] = w;
    }
    dec.int_cnt = int_cnt as u8;
    dec.frac_cnt = keep as u8;
    dec.negative = negative;
    let dec = dec.normalized();
    let first_dropped = p + keep as i64;
    if first_dropped >= len {
        return Some((Res::Ok(dec), consumed));
    }
    let round_up = d.get(first_dropped) >= 5;
    // Digits before position 0 are implicit zeros: a huge negative exponent must not make this
    // loop walk them one by one.
    let any_dropped = (first_dropped.max(0)..len).any(|k| d.get(k) != 0);
    if !round_up {
        let r = if any_dropped { Res::Truncated(dec) } else { Res::Ok(dec) };
        return Some((r, consumed));
    }
    let mut big = Big::from_dec(&dec);
    let fw = dec.frac_words();
    big.add_small(POW10[fw * DIGITS_PER_WORD - keep]);
    let r = big.into_dec(fw, keep as u8, negative);
    Some((r.worst(&Res::Truncated(())), consumed))
}

/// A small stack buffer for formatting an `f64`.
struct StackBuf {
    buf: [u8; 64],
    len: usize,
}

impl Default for StackBuf {
    fn default() -> Self {
        StackBuf { buf: [0; 64], len: 0 }
    }
}

impl StackBuf {
    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Big: an unsigned integer in base 10^9, little-endian limbs, used by the arithmetic.

/// Limbs of a [`Big`]: the largest intermediate is a dividend of 9 words scaled by 10^67
/// (17 limbs) plus one normalisation limb.
const BIG_LIMBS: usize = 24;

#[derive(Clone, Copy)]
struct Big {
    l: [u32; BIG_LIMBS],
    /// Used limbs; `l[n - 1]` is non-zero unless `n == 0`.
    n: usize,
}

impl Big {
    #[inline]
    fn zero() -> Big {
        Big { l: [0; BIG_LIMBS], n: 0 }
    }

    /// The coefficient of `d`: its used words as an integer (scale = 9 × frac words).
    #[inline]
    fn from_dec(d: &Decimal) -> Big {
        let used = d.int_words() + d.frac_words();
        let mut b = Big::zero();
        for (dst, &w) in b.l.iter_mut().zip(d.word_buf[..used].iter().rev()) {
            *dst = w;
        }
        b.n = used;
        b.trim();
        b
    }

    #[inline]
    fn trim(&mut self) {
        while self.n > 0 && self.l[self.n - 1] == 0 {
            self.n -= 1;
        }
    }

    /// `self *= m` for `m <= 10^9`.
    fn mul_small(&mut self, m: u32) {
        let mut carry: u64 = 0;
        for limb in &mut self.l[..self.n] {
            let t = u64::from(*limb) * u64::from(m) + carry;
            *limb = (t % u64::from(BASE)) as u32;
            carry = t / u64::from(BASE);
        }
        if carry > 0 && self.n < BIG_LIMBS {
            self.l[self.n] = carry as u32;
            self.n += 1;
        }
        self.trim();
    }

    /// `self *= 10^(9k)`.
    fn shl_limbs(&mut self, k: usize) {
        if k == 0 || self.n == 0 {
            return;
        }
        let n = (self.n + k).min(BIG_LIMBS);
        self.l.copy_within(..n - k, k);
        self.l[..k].fill(0);
        self.n = n;
    }

    /// `self *= 10^k`.
    fn mul_pow10(&mut self, k: usize) {
        self.shl_limbs(k / DIGITS_PER_WORD);
        if !k.is_multiple_of(DIGITS_PER_WORD) {
            self.mul_small(POW10[k % DIGITS_PER_WORD]);
        }
    }

    /// `self += a` for `a < 10^9`.
    fn add_small(&mut self, a: u32) {
        let mut carry = a;
        for limb in &mut self.l[..self.n] {
            if carry == 0 {
                return;
            }
            let t = *limb + carry;
            (*limb, carry) = if t >= BASE { (t - BASE, 1) } else { (t, 0) };
        }
        if carry > 0 && self.n < BIG_LIMBS {
            self.l[self.n] = carry;
            self.n += 1;
        }
    }

    fn add_assign(&mut self, o: &Big) {
        let n = self.n.max(o.n);
        let mut carry = 0;
        for i in 0..n {
            let t = self.l[i] + o.l[i] + carry;
            (self.l[i], carry) = if t >= BASE { (t - BASE, 1) } else { (t, 0) };
        }
        self.n = n;
        if carry > 0 && n < BIG_LIMBS {
            self.l[n] = carry;
            self.n += 1;
        }
    }

    /// `self -= o`; requires `self >= o`.
    fn sub_assign(&mut self, o: &Big) {
        let mut borrow = 0;
        for i in 0..self.n {
            let sub = o.l[i] + borrow;
            (self.l[i], borrow) =
                if self.l[i] >= sub { (self.l[i] - sub, 0) } else { (self.l[i] + BASE - sub, 1) };
        }
        self.trim();
    }

    fn cmp(&self, o: &Big) -> Ordering {
        self.n.cmp(&o.n).then_with(|| self.l[..self.n].iter().rev().cmp(o.l[..o.n].iter().rev()))
    }

    fn mul(a: &Big, b: &Big) -> Big {
        let mut r = Big::zero();
        if a.n == 0 || b.n == 0 {
            return r;
        }
        for i in 0..a.n {
            let mut carry: u64 = 0;
            let x = u64::from(a.l[i]);
            for j in 0..b.n {
                let t = u64::from(r.l[i + j]) + x * u64::from(b.l[j]) + carry;
                r.l[i + j] = (t % u64::from(BASE)) as u32;
                carry = t / u64::from(BASE);
            }
            r.l[i + b.n] = carry as u32;
        }
        r.n = (a.n + b.n).min(BIG_LIMBS);
        r.trim();
        r
    }

    /// `self /= d` (d > 0), returning the remainder.
    fn div_small(&mut self, d: u32) -> u32 {
        let mut rem: u64 = 0;
        for limb in self.l[..self.n].iter_mut().rev() {
            let t = rem * u64::from(BASE) + u64::from(*limb);
            *limb = (t / u64::from(d)) as u32;
            rem = t % u64::from(d);
        }
        self.trim();
        rem as u32
    }

    /// Quotient and remainder; `b` must be non-zero (Knuth's algorithm D in base 10^9).
    fn divrem(a: &Big, b: &Big) -> (Big, Big) {
        if a.cmp(b) == Ordering::Less {
            return (Big::zero(), *a);
        }
        if b.n == 1 {
            let mut q = *a;
            let r = q.div_small(b.l[0]);
            let mut rb = Big::zero();
            rb.l[0] = r;
            rb.n = 1;
            rb.trim();
            return (q, rb);
        }
        let base = u64::from(BASE);
        let n = b.n;
        let m = a.n - n;
        let d = BASE / (b.l[n - 1] + 1);
        let mut v = *b;
        v.mul_small(d);
        let mut u = [0u32; BIG_LIMBS + 1];
        let mut carry: u64 = 0;
        for (dst, &limb) in u.iter_mut().zip(&a.l[..a.n]) {
            let t = u64::from(limb) * u64::from(d) + carry;
            *dst = (t % base) as u32;
            carry = t / base;
        }
        u[a.n] = carry as u32;
        let (vt, vs) = (u64::from(v.l[n - 1]), u64::from(v.l[n - 2]));
        let mut q = Big::zero();
        for j in (0..=m).rev() {
            let num = u64::from(u[j + n]) * base + u64::from(u[j + n - 1]);
            let mut qhat = num / vt;
            let mut rhat = num % vt;
            while qhat >= base || qhat * vs > rhat * base + u64::from(u[j + n - 2]) {
                qhat -= 1;
                rhat += vt;
                if rhat >= base {
                    break;
                }
            }
            // u[j..=j+n] -= qhat · v
            let mut borrow: i64 = 0;
            let mut carry: u64 = 0;
            for i in 0..n {
                let p = qhat * u64::from(v.l[i]) + carry;
                carry = p / base;
                let t = i64::from(u[i + j]) - (p % base) as i64 - borrow;
                (u[i + j], borrow) =
                    if t < 0 { ((t + base as i64) as u32, 1) } else { (t as u32, 0) };
            }
            let mut top = i64::from(u[j + n]) - carry as i64 - borrow;
            // qhat was at most a little too large: add v back until the remainder is >= 0.
            while top < 0 {
                qhat -= 1;
                let mut c = 0;
                for i in 0..n {
                    let t = u[i + j] + v.l[i] + c;
                    (u[i + j], c) = if t >= BASE { (t - BASE, 1) } else { (t, 0) };
                }
                top += i64::from(c);
            }
            u[j + n] = top as u32;
            q.l[j] = qhat as u32;
        }
        q.n = m + 1;
        q.trim();
        let mut r = Big::zero();
        r.l[..n].copy_from_slice(&u[..n]);
        r.n = n;
        r.trim();
        r.div_small(d);
        (q, r)
    }

    /// Drops `k` low digits, returning (first dropped digit, any dropped digit non-zero).
    fn drop_digits(&mut self, k: usize) -> (u32, bool) {
        let limbs = k / DIGITS_PER_WORD;
        let part = k % DIGITS_PER_WORD;
        let mut first = 0;
        let mut sticky = false;
        if limbs > 0 {
            let dropped = &self.l[..limbs.min(self.n)];
            if limbs <= self.n {
                first = self.l[limbs - 1] / POW10[DIGITS_PER_WORD - 1];
            }
            sticky = dropped.iter().any(|&w| w != 0);
            if limbs >= self.n {
                *self = Big::zero();
            } else {
                self.l.copy_within(limbs..self.n, 0);
                let n = self.n - limbs;
                self.l[n..self.n].fill(0);
                self.n = n;
            }
        }
        if part > 0 {
            let r = self.div_small(POW10[part]);
            first = r / POW10[part - 1];
            sticky |= r != 0;
        }
        (first, sticky)
    }

    /// Rounds a coefficient of scale `from` digits to `to` fraction digits (`to` may be
    /// negative) with `mode`, leaving it word-aligned. Returns the new frac word count and
    /// whether a non-zero digit was dropped.
    fn rescale(&mut self, from: usize, to: i32, mode: RoundMode) -> (usize, bool) {
        let fw = words_for(to.max(0) as usize);
        let aligned = (fw * DIGITS_PER_WORD) as i64;
        if i64::from(to) >= from as i64 {
            self.mul_pow10((aligned - from as i64) as usize);
            return (fw, false);
        }
        let (first, sticky) = self.drop_digits((from as i64 - i64::from(to)) as usize);
        let up = match mode {
            RoundMode::HalfUp => first >= 5,
            RoundMode::Truncate => false,
            RoundMode::Ceiling => sticky,
        };
        if up {
            self.add_small(1);
        }
        self.mul_pow10((aligned - i64::from(to)) as usize);
        (fw, sticky)
    }

    /// Builds a decimal from a coefficient whose low `fw` limbs are fraction words. More than
    /// 9 integer words overflow; fraction words past the buffer are dropped (`Truncated` when
    /// non-zero).
    fn into_dec(self, fw: usize, frac_cnt: u8, negative: bool) -> Res<Decimal> {
        let iw = self.n.saturating_sub(fw);
        if iw > WORD_BUF_LEN {
            let mut m = Decimal::max_for(MAX_DIGITS as u8, 0);
            m.negative = negative;
            return Res::Overflow(m);
        }
        let keep = fw.min(WORD_BUF_LEN - iw);
        let truncated = self.l[..fw - keep].iter().any(|&w| w != 0);
        let mut d = Decimal::zero();
        for i in 0..iw {
            d.word_buf[i] = self.l[fw + iw - 1 - i];
        }
        for j in 0..keep {
            d.word_buf[iw + j] = self.l[fw - 1 - j];
        }
        d.int_cnt = (iw * DIGITS_PER_WORD) as u8;
        d.frac_cnt = frac_cnt.min((keep * DIGITS_PER_WORD) as u8);
        d.negative = negative;
        let d = d.normalized();
        if truncated { Res::Truncated(d) } else { Res::Ok(d) }
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

    fn big(v: u128) -> Big {
        let mut b = Big::zero();
        let mut v = v;
        while v > 0 {
            b.l[b.n] = (v % u128::from(BASE)) as u32;
            v /= u128::from(BASE);
            b.n += 1;
        }
        b
    }

    fn val(b: &Big) -> u128 {
        b.l[..b.n].iter().rev().fold(0u128, |acc, &w| acc * u128::from(BASE) + u128::from(w))
    }

    #[test]
    fn big_divrem_matches_u128() {
        let samples = [
            1u128,
            7,
            999_999_999,
            1_000_000_000,
            1_000_000_001,
            999_999_999_999_999_999,
            1_000_000_000_000_000_000,
            123_456_789_012_345_678_901_234_567,
            500_000_000_000_000_000,
            u128::MAX / 3,
            u128::MAX,
        ];
        for &a in &samples {
            for &b in &samples {
                let (q, r) = Big::divrem(&big(a), &big(b));
                assert_eq!((val(&q), val(&r)), (a / b, a % b), "{a} / {b}");
            }
        }
    }

    #[test]
    fn big_drop_digits() {
        let mut b = big(123_456_789_987_654_321);
        assert_eq!(b.drop_digits(10), (9, true));
        assert_eq!(val(&b), 12_345_678);
        let mut b = big(5_000_000_000);
        assert_eq!(b.drop_digits(9), (0, false));
        assert_eq!(val(&b), 5);
        let mut b = big(5_000_000_000);
        assert_eq!(b.drop_digits(30), (0, true));
        assert_eq!(b.n, 0);
    }

    #[test]
    fn normalized_invariants() {
        let d = Decimal::parse("000000000000000123.4500").unwrap().value();
        assert_eq!((d.int_cnt, d.frac_cnt, d.word_buf[0], d.word_buf[1]), (3, 4, 123, 450_000_000));
        assert!(d.word_buf[2..].iter().all(|&w| w == 0));
        let z = Decimal::parse("-0.000").unwrap().value();
        assert!(!z.negative && z.int_cnt == 0 && z.frac_cnt == 3);
    }
}
