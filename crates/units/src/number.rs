//! The non-negative decimal numbers in front of a unit: `12`, `1.5`, `.5`, `5.`.

/// Fraction digits that count; later ones are checked to be digits and then ignored.
///
/// 20 digits keep `num × unit` inside `u128` for every unit here (the largest, a day in
/// nanoseconds or a PiB in bytes, is below 2^57, and 10^20 < 2^67), while the dropped part is
/// below 10^-20 of a unit: less than a byte or a nanosecond for every unit here.
const MAX_FRACTION_DIGITS: usize = 20;

/// A non-negative decimal number `int.frac`, exactly: `int + num / den`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decimal {
    int: u128,
    num: u128,
    den: u128,
}

impl Decimal {
    /// Reads `text`: ASCII digits with at most one `.` and at least one digit. No sign, no
    /// exponent, no digit separators.
    pub(crate) fn parse(text: &str) -> Result<Decimal, &'static str> {
        let (int_text, frac_text) = text.split_once('.').unwrap_or((text, ""));
        if int_text.is_empty() && frac_text.is_empty() {
            return Err("expected a number");
        }
        let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
        if !all_digits(int_text) || !all_digits(frac_text) {
            return Err("a number is digits with at most one `.`");
        }
        let int = digits(int_text).ok_or("too large")?;
        let frac_text = frac_text.get(..MAX_FRACTION_DIGITS).unwrap_or(frac_text);
        // At most 20 digits: below 10^20, no overflow.
        let num = digits(frac_text).ok_or("too large")?;
        let den = u32::try_from(frac_text.len())
            .ok()
            .and_then(|n| 10u128.checked_pow(n))
            .ok_or("too large")?;
        Ok(Decimal { int, num, den })
    }

    /// `self × unit`, rounded down; `None` on overflow.
    pub(crate) fn times(self, unit: u128) -> Option<u128> {
        let whole = self.int.checked_mul(unit)?;
        let frac = self.num.checked_mul(unit)? / self.den;
        whole.checked_add(frac)
    }
}

/// The value of a run of ASCII digits; `None` on overflow.
fn digits(text: &str) -> Option<u128> {
    text.bytes().try_fold(0u128, |acc, b| acc.checked_mul(10)?.checked_add(u128::from(b - b'0')))
}

/// Splits `text` after its leading run of ASCII digits and `.`.
pub(crate) fn split_number(text: &str) -> (&str, &str) {
    let end = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    text.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str, unit: u128) -> Option<u128> {
        Decimal::parse(text).ok()?.times(unit)
    }

    #[test]
    fn decimals_are_exact() {
        assert_eq!(value("12", 10), Some(120));
        assert_eq!(value("1.5", 1024), Some(1536));
        assert_eq!(value(".5", 1024), Some(512));
        assert_eq!(value("5.", 3), Some(15));
        assert_eq!(value("0.1", 1_000_000_000), Some(100_000_000));
        assert_eq!(value("1.1", 1024), Some(1126), "rounded down");
        assert_eq!(value("000000000000000000000000000000000000000001", 7), Some(7));
        // Digits past the 20th are ignored.
        assert_eq!(value("0.999999999999999999999999999", 1024), Some(1023));
        assert_eq!(value("340282366920938463463374607431768211456", 1), None, "2^128");
        assert_eq!(value("340282366920938463463374607431768211455", 2), None);
        for bad in ["", ".", "1.2.3", "1e3", "-1", "+1", "1_000", " 1"] {
            assert!(Decimal::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn split_takes_digits_and_dots() {
        assert_eq!(split_number("1.5GiB"), ("1.5", "GiB"));
        assert_eq!(split_number("12"), ("12", ""));
        assert_eq!(split_number("x"), ("", "x"));
        assert_eq!(split_number("1.2.3 s"), ("1.2.3", " s"));
    }
}
