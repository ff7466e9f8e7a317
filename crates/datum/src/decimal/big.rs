//! `Big`: an unsigned integer in base 10^9, little-endian limbs, used by the arithmetic.

use std::cmp::Ordering;

use super::*;

/// Limbs of a [`Big`]: the largest intermediate is a dividend of 9 words scaled by 10^67
/// (17 limbs) plus one normalisation limb.
const BIG_LIMBS: usize = 24;

#[derive(Clone, Copy)]
pub(super) struct Big {
    l: [u32; BIG_LIMBS],
    /// Used limbs; `l[n - 1]` is non-zero unless `n == 0`.
    n: usize,
}

impl Big {
    #[inline]
    pub(super) fn zero() -> Big {
        Big { l: [0; BIG_LIMBS], n: 0 }
    }

    /// The coefficient of `d`: its used words as an integer (scale = 9 × frac words).
    #[inline]
    pub(super) fn from_dec(d: &Decimal) -> Big {
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
    pub(super) fn trim(&mut self) {
        while self.n > 0 && self.l[self.n - 1] == 0 {
            self.n -= 1;
        }
    }

    /// `self *= m` for `m <= 10^9`.
    pub(super) fn mul_small(&mut self, m: u32) {
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
    pub(super) fn shl_limbs(&mut self, k: usize) {
        if k == 0 || self.n == 0 {
            return;
        }
        let n = (self.n + k).min(BIG_LIMBS);
        self.l.copy_within(..n - k, k);
        self.l[..k].fill(0);
        self.n = n;
    }

    /// `self *= 10^k`.
    pub(super) fn mul_pow10(&mut self, k: usize) {
        self.shl_limbs(k / DIGITS_PER_WORD);
        if !k.is_multiple_of(DIGITS_PER_WORD) {
            self.mul_small(POW10[k % DIGITS_PER_WORD]);
        }
    }

    /// `self += a` for `a < 10^9`.
    pub(super) fn add_small(&mut self, a: u32) {
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

    pub(super) fn add_assign(&mut self, o: &Big) {
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
    pub(super) fn sub_assign(&mut self, o: &Big) {
        let mut borrow = 0;
        for i in 0..self.n {
            let sub = o.l[i] + borrow;
            (self.l[i], borrow) =
                if self.l[i] >= sub { (self.l[i] - sub, 0) } else { (self.l[i] + BASE - sub, 1) };
        }
        self.trim();
    }

    pub(super) fn cmp(&self, o: &Big) -> Ordering {
        self.n.cmp(&o.n).then_with(|| self.l[..self.n].iter().rev().cmp(o.l[..o.n].iter().rev()))
    }

    pub(super) fn mul(a: &Big, b: &Big) -> Big {
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
    pub(super) fn div_small(&mut self, d: u32) -> u32 {
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
    pub(super) fn divrem(a: &Big, b: &Big) -> (Big, Big) {
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
    pub(super) fn drop_digits(&mut self, k: usize) -> (u32, bool) {
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
    pub(super) fn rescale(&mut self, from: usize, to: i32, mode: RoundMode) -> (usize, bool) {
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
    pub(super) fn into_dec(self, fw: usize, frac_cnt: u8, negative: bool) -> Res<Decimal> {
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
}
