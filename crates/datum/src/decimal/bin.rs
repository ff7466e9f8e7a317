//! The decimal's encodings: MySQL's binary format (`[prec][frac][body]`, keys, datums, row v2)
//! and the 40-byte `MyDecimal` struct of TiDB's chunk format, plus [`BinI128Decoder`].

use super::*;

impl Decimal {
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
        Ok(self.write_bin_sized(prec, frac, size, out))
    }

    /// Appends `[prec][frac][body]` with the value's own [`prec_and_frac`](Self::prec_and_frac),
    /// which for a computed value may pass 65 digits (up to 81): TiKV writes the decimals of a
    /// TypeDefault response so, where [`write_bin`](Self::write_bin) refuses a column type
    /// over 65 digits.
    pub fn write_bin_own(&self, out: &mut Vec<u8>) {
        let (prec, frac) = self.prec_and_frac();
        let size = bin_part_size(usize::from(prec - frac)) + bin_part_size(usize::from(frac));
        let _ = self.write_bin_sized(prec, frac, size, out);
    }

    /// [`write_bin`](Self::write_bin) once `prec` and `frac` are known to be consistent
    /// (`frac ≤ 30`, `frac ≤ prec ≤ 81`) and `size` is the body's size.
    fn write_bin_sized(&self, prec: u8, frac: u8, size: usize, out: &mut Vec<u8>) -> Res<()> {
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
        res
    }

    /// Reads `[prec][frac][body]` written by [`write_bin`](Self::write_bin) (or TiDB/TiKV),
    /// returning the value and its declared precision and fraction.
    ///
    /// Rejects a bad precision or fraction (a precision past 65, as
    /// [`write_bin_own`](Self::write_bin_own) writes a computed value, only while its digits
    /// fit the buffer), a truncated body, and words that are not decimal digits (a full word
    /// ≥ 10⁹, a partial word ≥ 10^digits).
    pub fn decode_bin(r: &mut Reader<'_>) -> Result<(Decimal, u8, u8)> {
        let prec = r.read_u8("decimal precision")?;
        let frac = r.read_u8("decimal fraction")?;
        let size = own_bin_size(prec, frac)?;
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
    /// Whether [`decode`](Self::decode) reads a value as one 8-byte window: at most 18
    /// digits in at most 8 body bytes, and a whole value (header included) of at least 8.
    windowed: bool,
    /// The two header bytes, `prec` then `frac`, as one little-endian `u16`.
    header: u16,
    /// The body's bits within the window, and its first bit (the flipped sign).
    body_mask: u64,
    sign_bit: u64,
}

impl BinI128Decoder {
    /// The decoder of `DECIMAL(prec, frac)`; `None` for a type that is not a valid decimal
    /// type or has more than 38 digits.
    pub fn new(prec: u8, frac: u8) -> Option<Self> {
        let mut d = Self::layout(prec, frac)?;
        let (lead, full, tail) = (usize::from(d.lead), usize::from(d.full), usize::from(d.tail));
        if prec <= 18 && d.size <= 8 {
            let bits = 8 * u32::from(d.size);
            d.body_mask = u64::MAX.checked_shr(64 - bits).unwrap_or(0);
            d.sign_bit = 0x80u64 << (bits - 8);
            d.windowed = d.size + 2 >= 8;
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
            windowed: false,
            header: u16::from_le_bytes([prec, frac]),
            body_mask: 0,
            sign_bit: 0,
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
        // One length compare and one header compare: the window then holds the whole body.
        if self.windowed
            && v.len() == usize::from(self.size) + 2
            && let Some(&[prec, frac]) = v.first_chunk::<2>()
            && u16::from_le_bytes([prec, frac]) == self.header
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
        let x = window & self.body_mask;
        let neg = x & self.sign_bit == 0;
        // A negative value's body is stored inverted: undo that and the sign bit at once.
        let flip = u64::from(neg).wrapping_neg() & self.body_mask;
        let x = x ^ flip ^ self.sign_bit;
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
        // At most 18 digits: below 10^18, so an i64 holds it and its negation.
        let m = m as i64;
        Some(i128::from(if neg { -m } else { m }))
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

/// The body size of `[prec][frac]` as [`Decimal::write_bin_own`] may write it: a precision past
/// 65 and a 31st fraction digit are accepted while the digits fit the nine-word buffer.
fn own_bin_size(prec: u8, frac: u8) -> Result<usize> {
    // A product keeps up to 31 fraction digits (TiKV's NOT_FIXED_DEC).
    if (prec > MAX_PRECISION || frac > MAX_FRACTION) && frac <= MAX_FRACTION + 1 && frac <= prec {
        let (int_digits, frac) = (usize::from(prec - frac), usize::from(frac));
        if words_for(int_digits) + words_for(frac) <= WORD_BUF_LEN {
            return Ok(bin_part_size(int_digits) + bin_part_size(frac));
        }
        return Err(Error::Invalid { what: WHAT, reason: "more digits than a decimal holds" });
    }
    Decimal::bin_size(prec, frac)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_precision_past_65_round_trips() {
        let d: Decimal = "766507373740683764182618847769239999923349262625931623581738115223.076"
            .parse()
            .unwrap();
        assert_eq!(d.prec_and_frac(), (69, 3));
        let mut out = Vec::new();
        d.write_bin_own(&mut out);
        assert_eq!(out.get(..2), Some(&[69u8, 3][..]));
        let (back, prec, frac) = Decimal::decode_bin(&mut Reader::new(&out)).unwrap();
        assert_eq!((back, prec, frac), (d, 69, 3));
        // A column type still stops at 65.
        assert!(d.write_bin(69, 3, &mut Vec::new()).is_err());
        // More digits than nine words hold is refused.
        assert!(Decimal::decode_bin(&mut Reader::new(&[81, 30, 0, 0])).is_err());
    }
}
