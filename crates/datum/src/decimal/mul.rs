//! Multiplication as TiKV's `do_mul` (MySQL's `decimal_mul`): a product whose words do not
//! fit the nine-word buffer is computed from truncated operands, and TiKV's own slip in
//! choosing how many fraction words to drop is kept, because the engine must answer what
//! TiKV answers.

use super::*;

/// TiKV's (and MySQL's) `NOT_FIXED_DEC`: a product keeps at most 31 fraction digits, one more
/// than a column type.
const NOT_FIXED_DEC: usize = 31;

impl Decimal {
    /// `self * rhs` as TiKV multiplies.
    ///
    /// - The product has `w = ⌈(int1 + int2) / 9⌉` integer words; `w > 9` is `Overflow`
    ///   (the largest 81-digit value of the product's sign), whatever the product's value.
    /// - When `w` plus the operands' fraction words fit nine words the product is exact,
    ///   except that past 31 fraction digits (TiKV's `NOT_FIXED_DEC`) it is truncated to 31
    ///   (TiKV keeps the dropped digits inside its words, unseen; the outcome is `Ok`).
    /// - Otherwise the product is `Truncated`: the fraction keeps `9 − w` words and the
    ///   operands' low fraction words are dropped before multiplying, as MySQL does, except
    ///   that TiKV works out how many to drop from the integer words instead of the kept
    ///   fraction words. It then drops none and reads words past the operands' ends (zero),
    ///   and stops once the product's low words are used up: for
    ///   `999999999999999999999999999999999.9999 × 766507373740683764182618847769240.9770`
    ///   TiKV answers `0.00000000` (MySQL `…115223.07600000`).
    pub fn mul(&self, rhs: &Decimal) -> Res<Decimal> {
        let negative = self.negative != rhs.negative;
        let int_words = words_for(usize::from(self.int_cnt) + usize::from(rhs.int_cnt));
        if int_words > WORD_BUF_LEN {
            let mut m = Decimal::max_for(MAX_DIGITS as u8, 0);
            m.negative = negative;
            return Res::Overflow(m);
        }
        let frac_words = self.frac_words() + rhs.frac_words();
        let frac =
            (usize::from(self.frac_cnt) + usize::from(rhs.frac_cnt)).min(NOT_FIXED_DEC) as u8;
        if int_words + frac_words > WORD_BUF_LEN {
            return Res::Truncated(mul_bounded(self, rhs, int_words, frac, negative));
        }
        let mut big = Big::mul(&Big::from_dec(self), &Big::from_dec(rhs));
        let digits = frac_words * DIGITS_PER_WORD;
        let (fw, _) = big.rescale(digits, i32::from(frac), RoundMode::Truncate);
        match big.into_dec(fw, frac, negative) {
            Res::Truncated(d) => Res::Ok(d),
            r => r,
        }
    }
}

/// TiKV's word loop for a product that does not fit: `int_words` integer words, the rest of
/// the buffer fraction words, each operand word times each, carries propagated by TiKV's
/// single-subtraction `add`.
fn mul_bounded(l: &Decimal, r: &Decimal, int_words: usize, frac: u8, negative: bool) -> Decimal {
    let frac_words_to = WORD_BUF_LEN - int_words;
    let (l_int, r_int) = (l.int_words() as i64, r.int_words() as i64);
    let (mut l_frac, mut r_frac) = (l.frac_words() as i64, r.frac_words() as i64);
    // MySQL drops `l_frac + r_frac − frac_words_to` words; TiKV subtracts `int_words`.
    let excess = l_frac + r_frac - int_words as i64;
    let half = excess / 2;
    if l_frac <= r_frac {
        l_frac -= half;
        r_frac -= excess - half;
    } else {
        r_frac -= half;
        l_frac -= excess - half;
    }
    let buf = WORD_BUF_LEN as i64;
    let r_stop = (r_int + r_frac).clamp(0, buf) as usize;
    let l_stop = (l_int + l_frac).clamp(0, buf) as usize;
    let base = u64::from(BASE);
    let mut words = [0u32; WORD_BUF_LEN];
    let mut start = WORD_BUF_LEN;
    for li in (0..l_stop).rev() {
        if start < r_stop {
            break;
        }
        let lw = u64::from(l.word_buf.get(li).copied().unwrap_or(0));
        let mut carry = 0u64;
        let mut to = start;
        start -= 1;
        for ri in (0..r_stop).rev() {
            to -= 1;
            let p = lw * u64::from(r.word_buf.get(ri).copied().unwrap_or(0));
            let (hi, lo) = (p / base, p % base);
            let Some(w) = words.get_mut(to) else { break };
            let sum = u64::from(*w) + lo + carry;
            carry = u64::from(sum >= base);
            *w = (if sum >= base { sum - base } else { sum }) as u32;
            carry += hi;
        }
        while carry > 0 {
            if to == 0 {
                // TiKV reports an overflow here; the product's integer words always hold it.
                break;
            }
            to -= 1;
            let Some(w) = words.get_mut(to) else { break };
            let sum = u64::from(*w) + carry;
            carry = u64::from(sum >= base);
            *w = (if sum >= base { sum - base } else { sum }) as u32;
        }
    }
    let frac = frac.min((frac_words_to * DIGITS_PER_WORD) as u8);
    // Digits past `frac` in the last fraction word are not part of the value.
    let last = int_words + words_for(usize::from(frac));
    let tail = usize::from(frac) % DIGITS_PER_WORD;
    if tail > 0
        && let Some(w) = words.get_mut(last.wrapping_sub(1))
    {
        let unit = POW10[DIGITS_PER_WORD - tail];
        *w -= *w % unit;
    }
    for w in words.iter_mut().skip(last) {
        *w = 0;
    }
    let mut d = Decimal::zero();
    d.word_buf = words;
    d.int_cnt = (int_words * DIGITS_PER_WORD) as u8;
    d.frac_cnt = frac;
    d.negative = negative;
    d.normalized()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mul(a: &str, b: &str) -> Res<String> {
        let (a, b): (Decimal, Decimal) = (a.parse().unwrap(), b.parse().unwrap());
        a.mul(&b).map(|d| d.to_string())
    }

    #[test]
    fn products_that_fit_are_exact() {
        assert_eq!(mul("1.1", "2.2"), Res::Ok("2.42".into()));
        assert_eq!(mul("-123.456", "98765.4321"), Res::Ok("-12193185.1853376".into()));
        assert_eq!(mul("123", "0"), Res::Ok("0".into()));
        assert_eq!(
            mul("-123456000000", "98765432100000"),
            Res::Ok("-12193185185337600000000000".into())
        );
        // 33 fraction digits: the first 31, truncated.
        assert_eq!(
            mul("0.1234567890123456", "0.12345678901234567"),
            Res::Ok("0.0152415787532388259106844447035".into())
        );
    }

    #[test]
    fn products_past_the_buffer_as_tikv() {
        // Words for 66 integer digits (8) plus two fraction words: TiKV's slip multiplies
        // nothing but zero words.
        assert_eq!(
            mul("999999999999999999999999999999999.9999", "766507373740683764182618847769240.9770"),
            Res::Truncated("0.00000000".into())
        );
        // Three integer words and six fraction words kept of eight: TiKV keeps three
        // fraction words of the operands, so the product lands three words to the right
        // (MySQL: 12193263113702179522.6185032733866788594487120865336).
        assert_eq!(
            mul(
                "1234567890.123456789012345678901234567890",
                "9876543210.987654321098765432109876543210"
            ),
            Res::Truncated("0.0000000121932631137021795224965".into())
        );
        // Eight fraction words, one integer word: it fits, 60 digits truncated to 31.
        assert_eq!(
            mul("1.000000000000000000000000000001", "1.000000000000000000000000000001"),
            Res::Ok("1.0000000000000000000000000000020".into())
        );
        // Past 81 integer digits: overflow by the digit counts alone.
        let big = "1".repeat(41);
        assert!(mul(&big, &big).is_overflow());
    }
}
