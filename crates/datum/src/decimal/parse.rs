//! Parsing a decimal from text, and a stack buffer for formatting an `f64`.

use std::fmt;

use super::*;

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
pub(super) fn parse_impl(s: &[u8]) -> Option<(Res<Decimal>, bool)> {
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
pub(super) struct StackBuf {
    buf: [u8; 64],
    len: usize,
}

impl Default for StackBuf {
    fn default() -> Self {
        StackBuf { buf: [0; 64], len: 0 }
    }
}

impl StackBuf {
    pub(super) fn as_bytes(&self) -> &[u8] {
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
