//! Exact fixed-point views of decimals (`i128` mantissa and a scale) for the hot paths:
//! SUM/AVG accumulators and decimal add, subtract and multiply. Values that do not fit fall
//! back to [`Decimal`] arithmetic, so results are always those of MySQL decimal arithmetic.

use rcop_datum::Decimal;
use rcop_datum::decimal::CHUNK_SIZE;

/// Largest scale a decimal may have (MySQL's 30 fraction digits).
pub const MAX_SCALE: u8 = 30;

const POW10: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// `10^n` for `n <= 38`.
#[inline]
pub fn pow10(n: u32) -> Option<i128> {
    POW10.get(n as usize).copied()
}

#[inline]
fn word(b: &[u8; CHUNK_SIZE], i: usize) -> u32 {
    let at = 4 + 4 * i;
    match b.get(at..at + 4) {
        Some(&[a, b2, c, d]) => u32::from_le_bytes([a, b2, c, d]),
        _ => 0,
    }
}

/// The exact `(mantissa, scale)` of `d` (value = mantissa / 10^scale, scale = the decimal's
/// fraction digits), or `None` when it has more than 38 digits.
#[inline]
pub fn to_fixed(d: &Decimal) -> Option<(i128, u8)> {
    let b = d.to_chunk_bytes();
    let (int_cnt, frac_cnt) = (u32::from(b[0]), u32::from(b[1]));
    if int_cnt + frac_cnt > 38 {
        return None;
    }
    let iw = int_cnt.div_ceil(9) as usize;
    let fw = frac_cnt.div_ceil(9) as usize;
    let mut m: i128 = 0;
    for i in 0..iw {
        m = m * 1_000_000_000 + i128::from(word(&b, i));
    }
    for j in 0..fw {
        let w = i128::from(word(&b, iw + j));
        let digits = if j + 1 == fw { frac_cnt - 9 * (fw as u32 - 1) } else { 9 };
        m = m * pow10(digits)? + w / pow10(9 - digits)?;
    }
    Some((if b[3] != 0 { -m } else { m }, frac_cnt as u8))
}

/// The mantissa of `d` at `scale` fraction digits when that is exact: `None` when `d` has
/// more fraction digits than `scale`, or more than 38 digits there.
#[inline]
pub fn at_scale(d: &Decimal, scale: u8) -> Option<i128> {
    let (m, s) = to_fixed(d)?;
    m.checked_mul(pow10(u32::from(scale.checked_sub(s)?))?)
}

/// The decimal `m / 10^scale` with exactly `scale` fraction digits, or `None` when it does
/// not fit (scale above 30).
pub fn from_fixed(m: i128, scale: u8) -> Option<Decimal> {
    if scale > MAX_SCALE {
        return None;
    }
    let a = m.unsigned_abs();
    let p = pow10(u32::from(scale))?.unsigned_abs();
    let (mut ip, fp) = (a / p, a % p);
    let mut int_words = [0u32; 9];
    let mut iw = 0;
    let mut int_cnt = 0u8;
    {
        let mut x = ip;
        while x > 0 {
            int_cnt += 1;
            x /= 10;
        }
    }
    while ip > 0 {
        *int_words.get_mut(iw)? = (ip % 1_000_000_000) as u32;
        ip /= 1_000_000_000;
        iw += 1;
    }
    let fw = usize::from(scale).div_ceil(9);
    if iw + fw > 9 {
        return None;
    }
    let mut b = [0u8; CHUNK_SIZE];
    b[0] = int_cnt;
    b[1] = scale;
    b[2] = scale;
    b[3] = u8::from(m < 0);
    let mut at = 4;
    for k in (0..iw).rev() {
        b.get_mut(at..at + 4)?.copy_from_slice(&int_words.get(k)?.to_le_bytes());
        at += 4;
    }
    let shifted = fp * pow10((9 * fw) as u32 - u32::from(scale))?.unsigned_abs();
    for k in (0..fw).rev() {
        let w = (shifted / pow10(9 * k as u32)?.unsigned_abs()) % 1_000_000_000;
        b.get_mut(at..at + 4)?.copy_from_slice(&(w as u32).to_le_bytes());
        at += 4;
    }
    Decimal::from_chunk_bytes(&b).ok()
}

/// Brings two fixed-point values to the larger scale.
#[inline]
pub fn align(a: (i128, u8), b: (i128, u8)) -> Option<(i128, i128, u8)> {
    let s = a.1.max(b.1);
    let x = a.0.checked_mul(pow10(u32::from(s - a.1))?)?;
    let y = b.0.checked_mul(pow10(u32::from(s - b.1))?)?;
    Some((x, y, s))
}

/// A decimal operation done in fixed point when exact, else `None`.
#[inline]
pub fn add(a: &Decimal, b: &Decimal) -> Option<Decimal> {
    let (x, y, s) = align(to_fixed(a)?, to_fixed(b)?)?;
    from_fixed(x.checked_add(y)?, s)
}

/// `a - b` in fixed point when exact.
#[inline]
pub fn sub(a: &Decimal, b: &Decimal) -> Option<Decimal> {
    let (x, y, s) = align(to_fixed(a)?, to_fixed(b)?)?;
    from_fixed(x.checked_sub(y)?, s)
}

/// `a * b` in fixed point when exact (the scale is the sum of the scales, at most 30).
#[inline]
pub fn mul(a: &Decimal, b: &Decimal) -> Option<Decimal> {
    let (x, sx) = to_fixed(a)?;
    let (y, sy) = to_fixed(b)?;
    let s = sx.checked_add(sy).filter(|s| *s <= MAX_SCALE)?;
    from_fixed(x.checked_mul(y)?, s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    #[test]
    fn known_values() {
        assert_eq!(to_fixed(&d("123.456")), Some((123456, 3)));
        assert_eq!(to_fixed(&d("-0.05")), Some((-5, 2)));
        assert_eq!(to_fixed(&d("0")), Some((0, 0)));
        assert_eq!(to_fixed(&d("1234567890123.1234567891")), Some((12345678901231234567891, 10)));
        assert_eq!(from_fixed(-5, 2).unwrap().to_string(), "-0.05");
        assert_eq!(from_fixed(0, 4).unwrap().to_string(), "0.0000");
        assert_eq!(from_fixed(1_000_000_000_000, 0).unwrap().to_string(), "1000000000000");
        assert!(to_fixed(&d("1234567890123456789012345678901234567890")).is_none());
    }

    fn dec_str() -> impl Strategy<Value = String> {
        (any::<bool>(), "[0-9]{1,14}", "[0-9]{0,12}").prop_map(|(neg, i, f)| {
            format!(
                "{}{}{}{}",
                if neg { "-" } else { "" },
                i,
                if f.is_empty() { "" } else { "." },
                f
            )
        })
    }

    proptest! {
        #[test]
        fn fixed_arithmetic_matches_decimal(a in dec_str(), b in dec_str()) {
            let (x, y) = (d(&a), d(&b));
            let (m, s) = to_fixed(&x).unwrap();
            prop_assert_eq!(from_fixed(m, s).unwrap().to_string(), x.to_string());
            prop_assert_eq!(add(&x, &y).unwrap().to_string(), x.add(&y).value().to_string());
            prop_assert_eq!(sub(&x, &y).unwrap().to_string(), x.sub(&y).value().to_string());
            if let Some(p) = mul(&x, &y) {
                prop_assert_eq!(p.to_string(), x.mul(&y).value().to_string());
            }
        }
    }
}
