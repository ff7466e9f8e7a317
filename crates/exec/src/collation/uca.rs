//! The UCA collations (TiKV's `CollatorUca`): `utf8mb4_unicode_ci` / `utf8_unicode_ci`
//! (UCA 4.0.0, PAD SPACE) and `utf8mb4_0900_ai_ci` (UCA 9.0.0, NO PAD).
//!
//! A character weighs a sequence of 16-bit primary weights: none for an ignorable one, at most
//! eight (TiKV packs them into a `u128`), from the generated tables in `data/` (see
//! `tools/gen-collation-tables.py` for the sources and TiKV's deviations from MySQL). There
//! are no contractions: characters are weighed one by one. Code points the tables do not cover
//! get weights as in TiKV: 0xFFFD past the BMP under 4.0.0, the implicit weights
//! `[0xFBC0 + (cp >> 15), (cp & 0x7FFF) | 0x8000]` past 0x2CEA1 under 9.0.0.
//!
//! The sort key is every weight as a big-endian u16 and ends at the first byte sequence that
//! is not UTF-8. Comparison walks both weight sequences and answers Equal when it meets an
//! invalid sequence while looking for the next weight of either side (TiKV since tikv#18611).

use std::cmp::Ordering;

use super::next_utf8;

/// One generated UCA table (format in `tools/gen-collation-tables.py`).
#[derive(Debug)]
pub(crate) struct Uca {
    /// u16 page id per 256 code points.
    idx: &'static [u8],
    /// u32 entries, 256 per page.
    pages: &'static [u8],
    /// u16 weights.
    pool: &'static [u8],
    /// Code points at and past this one are weighed without the table.
    end: u32,
    /// The weights of the code points past `end`.
    beyond: Beyond,
}

#[derive(Debug, Clone, Copy)]
enum Beyond {
    /// One weight 0xFFFD.
    Fffd,
    /// The UCA implicit weights with base 0xFBC0.
    Implicit,
}

/// `utf8mb4_unicode_ci`: UCA 4.0.0 over the BMP.
pub(crate) static UCA0400: Uca = Uca {
    idx: include_bytes!("data/uca0400.idx"),
    pages: include_bytes!("data/uca0400.page"),
    pool: include_bytes!("data/uca0400.pool"),
    end: 0x1_0000,
    beyond: Beyond::Fffd,
};

/// `utf8mb4_0900_ai_ci`: UCA 9.0.0 below 0x2CEA1 (TiKV's table length).
pub(crate) static UCA0900: Uca = Uca {
    idx: include_bytes!("data/uca0900.idx"),
    pages: include_bytes!("data/uca0900.page"),
    pool: include_bytes!("data/uca0900.pool"),
    end: 0x2_CEA1,
    beyond: Beyond::Implicit,
};

const IMPLICIT: u32 = 0xF000_0000;

/// The weights of one character, at most eight.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Weights {
    w: [u16; 8],
    len: u8,
}

impl Weights {
    fn one(w: u16) -> Weights {
        let mut ws = Weights::default();
        ws.w[0] = w;
        ws.len = 1;
        ws
    }

    fn implicit(cp: u32, base: u16) -> Weights {
        let (a, b) = if base == 0xFB00 {
            (0xFB00, (cp.wrapping_sub(0x1_7000) & 0x7FFF) | 0x8000)
        } else {
            (u32::from(base) + (cp >> 15), (cp & 0x7FFF) | 0x8000)
        };
        let mut ws = Weights::default();
        ws.w[0] = a as u16;
        ws.w[1] = b as u16;
        ws.len = 2;
        ws
    }

    /// The weights in order.
    #[inline]
    pub(crate) fn as_slice(&self) -> &[u16] {
        self.w.get(..usize::from(self.len)).unwrap_or_default()
    }
}

fn u16_at(b: &[u8], i: usize) -> Option<u16> {
    let s = b.get(i * 2..i * 2 + 2)?;
    Some(u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    let s = b.get(i * 4..i * 4 + 4)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

impl Uca {
    /// The weights of code point `cp`.
    pub(crate) fn weights(&self, cp: u32) -> Weights {
        if cp >= self.end {
            return match self.beyond {
                Beyond::Fffd => Weights::one(0xFFFD),
                Beyond::Implicit => Weights::implicit(cp, 0xFBC0),
            };
        }
        let entry = u16_at(self.idx, (cp >> 8) as usize)
            .and_then(|page| u32_at(self.pages, usize::from(page) * 256 + (cp & 0xFF) as usize));
        let Some(entry) = entry else {
            // The tables cover every code point below `end` (checked by a test).
            return Weights::one(0xFFFD);
        };
        if entry == 0 {
            return Weights::default();
        }
        if entry & IMPLICIT == IMPLICIT {
            return Weights::implicit(cp, entry as u16);
        }
        let (len, off) = ((entry >> 24) as usize, (entry & 0xFF_FFFF) as usize);
        let mut ws = Weights::default();
        for (k, slot) in ws.w.iter_mut().enumerate().take(len) {
            *slot = u16_at(self.pool, off + k).unwrap_or(0xFFFD);
        }
        ws.len = len.min(8) as u8;
        ws
    }

    /// Appends the sort key of `s` (already trimmed for PAD SPACE) to `out`.
    pub(crate) fn sort_key(&self, s: &[u8], out: &mut Vec<u8>) {
        let mut rest = s;
        while let Some((cp, n)) = next_utf8(rest) {
            for w in self.weights(cp).as_slice() {
                out.extend_from_slice(&w.to_be_bytes());
            }
            rest = rest.get(n..).unwrap_or_default();
        }
    }

    /// Compares `a` and `b` (already trimmed for PAD SPACE) weight by weight.
    pub(crate) fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let mut sa = WeightIter { uca: self, rest: a, cur: Weights::default(), at: 0 };
        let mut sb = WeightIter { uca: self, rest: b, cur: Weights::default(), at: 0 };
        loop {
            let wa = match sa.next() {
                Step::Weight(w) => Some(w),
                Step::End => None,
                Step::Invalid => return Ordering::Equal,
            };
            let wb = match sb.next() {
                Step::Weight(w) => Some(w),
                Step::End => None,
                Step::Invalid => return Ordering::Equal,
            };
            match (wa, wb) {
                (None, None) => return Ordering::Equal,
                (None, Some(_)) => return Ordering::Less,
                (Some(_), None) => return Ordering::Greater,
                (Some(x), Some(y)) if x != y => return x.cmp(&y),
                _ => {}
            }
        }
    }
}

enum Step {
    Weight(u16),
    End,
    Invalid,
}

/// The flattened weights of a string.
struct WeightIter<'a> {
    uca: &'a Uca,
    rest: &'a [u8],
    cur: Weights,
    at: usize,
}

impl WeightIter<'_> {
    fn next(&mut self) -> Step {
        loop {
            if let Some(&w) = self.cur.as_slice().get(self.at) {
                self.at += 1;
                return Step::Weight(w);
            }
            if self.rest.is_empty() {
                return Step::End;
            }
            let Some((cp, n)) = next_utf8(self.rest) else {
                return Step::Invalid;
            };
            self.rest = self.rest.get(n..).unwrap_or_default();
            self.cur = self.uca.weights(cp);
            self.at = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(uca: &Uca, c: char) -> Vec<u16> {
        uca.weights(c as u32).as_slice().to_vec()
    }

    #[test]
    fn tables_cover_their_range() {
        for uca in [&UCA0400, &UCA0900] {
            let pages = uca.pages.len() / 1024;
            assert_eq!(uca.pages.len() % 1024, 0);
            assert!(uca.idx.len() * 128 >= uca.end as usize);
            for p in 0..uca.idx.len() / 2 {
                assert!(usize::from(u16_at(uca.idx, p).unwrap()) < pages);
            }
            for i in 0..uca.pages.len() / 4 {
                let e = u32_at(uca.pages, i).unwrap();
                if e != 0 && e & IMPLICIT != IMPLICIT {
                    let (len, off) = ((e >> 24) as usize, (e & 0xFF_FFFF) as usize);
                    assert!((1..=8).contains(&len) && (off + len) * 2 <= uca.pool.len());
                }
            }
        }
    }

    #[test]
    fn unicode_ci_from_tikv_tests() {
        // TiKV's test_utf8mb4_sort_key (utf8mb4_unicode_ci column).
        assert_eq!(ws(&UCA0400, 'a'), [0x0E33]);
        assert_eq!(ws(&UCA0400, 'A'), [0x0E33]);
        assert_eq!(ws(&UCA0400, '😃'), [0xFFFD]);
        let mut k = Vec::new();
        UCA0400.sort_key("Foo © bar 𝌆 baz ☃ qux".as_bytes(), &mut k);
        let want = [
            0x0E, 0xB9, 0x0F, 0x82, 0x0F, 0x82, 0x02, 0x09, 0x02, 0xC5, 0x02, 0x09, 0x0E, 0x4A,
            0x0E, 0x33, 0x0F, 0xC0, 0x02, 0x09, 0xFF, 0xFD, 0x02, 0x09, 0x0E, 0x4A, 0x0E, 0x33,
            0x10, 0x6A, 0x02, 0x09, 0x06, 0xFF, 0x02, 0x09, 0x0F, 0xB4, 0x10, 0x1F, 0x10, 0x5A,
        ];
        assert_eq!(k, want);
        k.clear();
        UCA0400.sort_key("ﷻ".as_bytes(), &mut k);
        let want = [
            0x13, 0x5E, 0x13, 0xAB, 0x02, 0x09, 0x13, 0x5E, 0x13, 0xAB, 0x13, 0x50, 0x13, 0xAB,
            0x13, 0xB7,
        ];
        assert_eq!(k, want);
        // TiKV's data_0400 (generated by TiDB from allkeys-4.0.0.txt): U+FDFA, 18 weights in
        // UCA 4.0.0, weighs 0xFFFD; ¼ expands to three weights; unassigned U+0237 is implicit.
        assert_eq!(ws(&UCA0400, '\u{FDFA}'), [0xFFFD]);
        assert_eq!(ws(&UCA0400, '¼'), [0x0E2A, 0x02CD, 0x0E2D]);
        assert_eq!(ws(&UCA0400, '\u{237}'), [0xFBC0, 0x8237]);
        assert_eq!(ws(&UCA0400, '\u{0}'), Vec::<u16>::new());
        assert_eq!(UCA0400.compare("ß".as_bytes(), b"ss"), Ordering::Equal);
        assert_eq!(UCA0400.compare("café".as_bytes(), b"CAFE"), Ordering::Equal);
    }

    #[test]
    fn uca0900_from_tikv_data() {
        // Values of TiKV's data_0900.rs (UCA 9.0.0 as TiDB generated it).
        assert_eq!(ws(&UCA0900, 'A'), [0x1C47]);
        assert_eq!(ws(&UCA0900, '\t'), [0x0201]);
        assert_eq!(ws(&UCA0900, 'Æ'), [0x1C47, 0x1CAA]);
        assert_eq!(ws(&UCA0900, '¼'), [0x1C3E, 0x0626, 0x1C41]);
        assert_eq!(ws(&UCA0900, '\u{378}'), [0xFBC0, 0x8378]);
        assert_eq!(ws(&UCA0900, '\u{FFFD}'), [0xFFFD]);
        assert_eq!(
            ws(&UCA0900, '\u{FDFA}'),
            [0x2364, 0x239C, 0x23C5, 0x0209, 0x230B, 0x239C, 0x239C, 0x23B1]
        );
        assert_eq!(
            ws(&UCA0900, '\u{337F}'),
            [0xFB40, 0xE82A, 0xFB40, 0xDF0F, 0xFB40, 0xCF1A, 0xFB40, 0xF93E]
        );
        assert_eq!(
            ws(&UCA0900, '\u{1F1A9}'),
            [0x1D77, 0x1DDD, 0x1E71, 0x1E71, 0x1D77, 0x1CAA, 0x1E71, 0x1E71]
        );
        // Implicit weights: core Han, other Han, past the table.
        assert_eq!(ws(&UCA0900, '中'), [0xFB40, 0xCE2D]);
        assert_eq!(ws(&UCA0900, '\u{3400}'), [0xFB80, 0xB400]);
        assert_eq!(ws(&UCA0900, '\u{2F800}'), [0xFBC5, 0xF800]);
        assert_eq!(ws(&UCA0900, '\u{0}'), Vec::<u16>::new());
        // NO PAD: a trailing space counts.
        assert_eq!(UCA0900.compare(b"a", b"a "), Ordering::Less);
        assert_eq!(UCA0900.compare("😜".as_bytes(), "😃".as_bytes()), Ordering::Greater);
    }

    #[test]
    fn invalid_utf8_as_tikv() {
        let mut k = Vec::new();
        UCA0900.sort_key(b"a\xFFb", &mut k);
        assert_eq!(k, [0x1C, 0x47]);
        assert_eq!(UCA0900.compare(b"a\xFF", b"ab"), Ordering::Equal);
        assert_eq!(UCA0900.compare(b"b\xFF", b"a"), Ordering::Greater);
    }
}
