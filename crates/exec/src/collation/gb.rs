//! `gbk_bin`, `gbk_chinese_ci` and `gb18030_bin` (TiKV's `CollatorGbkBin`,
//! `CollatorGbkChineseCi`, `CollatorGb18030Bin`).
//!
//! The strings are UTF-8 (TiDB stores gbk and gb18030 data converted); each character weighs
//! one number:
//!
//! - `gbk_bin`: its GBK code (`data/gbk_bin.*`), '?' (0x3F) for a character GBK lacks and for
//!   every one past the BMP;
//! - `gbk_chinese_ci`: MySQL's gbk_chinese_ci weight of that GBK code (`data/gbk_chinese_ci.*`,
//!   keyed by code);
//! - `gb18030_bin`: its GB18030 code as a number (one, two or four bytes): `data/gb18030_bin.*`
//!   for the BMP, the linear four-byte codes from 90 30 81 30 past it.
//!
//! The tables are generated (`tools/gen-gb-tables`, `tools/gen-collation-tables.py`). PAD
//! SPACE: trailing spaces are removed first. The sort key is the weights, each written in as
//! few big-endian bytes as it needs (1, 2 or 4). A comparison compares the weights as numbers
//! and then the lengths, so for gb18030_bin it need not agree with the sort keys' byte order
//! (a four-byte code is a larger number than a two-byte one, its first bytes may be smaller):
//! TiKV's comparison and sort key disagree the same way.
//!
//! Bytes that are not UTF-8: the `_bin` collations weigh each such byte '?' and go on one byte
//! further; `gbk_chinese_ci` stops there (the sort key ends, a comparison answers Equal), as
//! TiKV since tikv#18611.

use std::cmp::Ordering;

use super::bin::trim_end_spaces;
use super::next_utf8;

/// Which of the three collations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Gb {
    GbkBin,
    GbkChineseCi,
    Gb18030Bin,
}

static GBK_IDX: &[u8; 512] = include_bytes!("data/gbk_bin.idx");
static GBK_PAGES: &[u8] = include_bytes!("data/gbk_bin.page");
static GBK_CI_IDX: &[u8; 512] = include_bytes!("data/gbk_chinese_ci.idx");
static GBK_CI_PAGES: &[u8] = include_bytes!("data/gbk_chinese_ci.page");
static GB18030_IDX: &[u8; 512] = include_bytes!("data/gb18030_bin.idx");
static GB18030_PAGES: &[u8] = include_bytes!("data/gb18030_bin.page");
static GB18030_RANGES: &[u8] = include_bytes!("data/gb18030_bin.ranges");

/// What a character without a code weighs.
const QUESTION: u16 = 0x3F;
/// Marks a BMP character with a four-byte GB18030 code in the gb18030 table.
const FOUR: u16 = 0xFFFF;

fn u16_at(b: &[u8], i: usize) -> Option<u16> {
    match b.get(i * 2..i * 2 + 2) {
        Some(&[lo, hi]) => Some(u16::from_le_bytes([lo, hi])),
        _ => None,
    }
}

fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    match b.get(i * 4..i * 4 + 4) {
        Some(&[a, b, c, d]) => Some(u32::from_le_bytes([a, b, c, d])),
        _ => None,
    }
}

/// Entry `x` (below 0x10000) of a paged u16 table.
#[inline]
fn paged(idx: &[u8], pages: &[u8], x: u32) -> Option<u16> {
    let page = u16_at(idx, (x >> 8) as usize)?;
    u16_at(pages, usize::from(page) * 256 + (x & 0xFF) as usize)
}

/// The GBK code of code point `cp` (below 0x100: one byte), 0x3F when GBK lacks it.
#[inline]
pub(crate) fn gbk_code(cp: u32) -> u16 {
    if cp > 0xFFFF {
        return QUESTION;
    }
    paged(GBK_IDX, GBK_PAGES, cp).unwrap_or(QUESTION)
}

/// The gbk_chinese_ci weight of code point `cp`.
#[inline]
pub(crate) fn gbk_ci_weight(cp: u32) -> u16 {
    paged(GBK_CI_IDX, GBK_CI_PAGES, u32::from(gbk_code(cp))).unwrap_or(QUESTION)
}

/// The bytes of four-byte GB18030 pointer `p` as a big-endian number.
fn four_byte_code(p: u32) -> u32 {
    let b1 = 0x81 + p / 12600;
    let b2 = 0x30 + p / 1260 % 10;
    let b3 = 0x81 + p / 10 % 126;
    let b4 = 0x30 + p % 10;
    (b1 << 24) | (b2 << 16) | (b3 << 8) | b4
}

/// The four-byte pointer of a BMP code point the table marks [`FOUR`]: the run that holds it.
fn bmp_pointer(cp: u32) -> Option<u32> {
    let runs = GB18030_RANGES.len() / 8;
    // The last run starting at or before `cp`.
    let (mut lo, mut hi) = (0usize, runs);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if u32_at(GB18030_RANGES, mid * 2)? <= cp {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let at = lo.checked_sub(1)?;
    let start = u32_at(GB18030_RANGES, at * 2)?;
    let pointer = u32_at(GB18030_RANGES, at * 2 + 1)?;
    Some(pointer + (cp - start))
}

/// The GB18030 code of code point `cp` as a number.
#[inline]
pub(crate) fn gb18030_code(cp: u32) -> u32 {
    if cp > 0xFFFF {
        if cp > 0x10_FFFF {
            return u32::from(QUESTION);
        }
        return four_byte_code(189_000 + (cp - 0x1_0000));
    }
    match paged(GB18030_IDX, GB18030_PAGES, cp) {
        Some(FOUR) => bmp_pointer(cp).map_or(u32::from(QUESTION), four_byte_code),
        Some(code) => u32::from(code),
        None => u32::from(QUESTION),
    }
}

impl Gb {
    #[inline]
    fn is_ci(self) -> bool {
        self == Gb::GbkChineseCi
    }

    /// The weight of code point `cp`.
    #[inline]
    pub(crate) fn weight(self, cp: u32) -> u32 {
        match self {
            Gb::GbkBin => u32::from(gbk_code(cp)),
            Gb::GbkChineseCi => u32::from(gbk_ci_weight(cp)),
            Gb::Gb18030Bin => gb18030_code(cp),
        }
    }

    /// The next character's weight and length; `None` at the end of `s`, or at bytes that are
    /// not UTF-8 under `gbk_chinese_ci` (the `_bin` ones weigh such a byte '?').
    #[inline]
    fn next(self, s: &[u8]) -> Option<(u32, usize)> {
        if s.is_empty() {
            return None;
        }
        match next_utf8(s) {
            Some((cp, n)) => Some((self.weight(cp), n)),
            None if self.is_ci() => None,
            None => Some((self.weight(u32::from(b'?')), 1)),
        }
    }

    /// Appends the sort key of `s` (PAD SPACE) to `out`.
    pub(crate) fn sort_key(self, s: &[u8], out: &mut Vec<u8>) {
        let mut rest = trim_end_spaces(s);
        while let Some((w, n)) = self.next(rest) {
            if w > 0xFFFF {
                out.extend_from_slice(&w.to_be_bytes());
            } else if w > 0xFF {
                out.extend_from_slice(&(w as u16).to_be_bytes());
            } else {
                out.push(w as u8);
            }
            rest = rest.get(n..).unwrap_or_default();
        }
    }

    /// Compares `a` and `b`; with `pad`, trailing spaces are removed first (LIKE compares
    /// single characters without).
    pub(crate) fn compare(self, a: &[u8], b: &[u8], pad: bool) -> Ordering {
        let (mut a, mut b) = if pad { (trim_end_spaces(a), trim_end_spaces(b)) } else { (a, b) };
        while !a.is_empty() && !b.is_empty() {
            let (Some((wa, na)), Some((wb, nb))) = (self.next(a), self.next(b)) else {
                return Ordering::Equal;
            };
            match wa.cmp(&wb) {
                Ordering::Equal => {}
                o => return o,
            }
            a = a.get(na..).unwrap_or_default();
            b = b.get(nb..).unwrap_or_default();
        }
        a.len().cmp(&b.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(g: Gb, s: &[u8]) -> Vec<u8> {
        let mut k = Vec::new();
        g.sort_key(s, &mut k);
        k
    }

    fn ch(c: char) -> u32 {
        c as u32
    }

    #[test]
    fn weights_from_tikv_tests() {
        // TiKV gb18030_collation.rs test_weight (bin column) and the wire-policy tests of
        // codec/collation/gb.rs.
        assert_eq!(gb18030_code(ch('中')), 0xD6D0);
        assert_eq!(gb18030_code(ch('€')), 0xA2E3);
        assert_eq!(gb18030_code(0xE7C7), 0x8135_F437);
        assert_eq!(gb18030_code(ch('ḿ')), 0xA8BC);
        assert_eq!(gb18030_code(ch('ǹ')), 0xA8BF);
        assert_eq!(gb18030_code(ch('䦃')), 0xFE89);
        assert_eq!(gb18030_code(0xE78D), 0xA6D9);
        assert_eq!(gbk_code(ch('€')), 0x80);
        assert_eq!(key(Gb::GbkBin, "€".as_bytes()), [0x80]);
        assert_eq!(key(Gb::Gb18030Bin, "\u{E78D}".as_bytes()), [0xA6, 0xD9]);
        // U+0080 is a four-byte code (a larger number than 中's) whose key sorts first.
        assert_eq!(
            Gb::Gb18030Bin.compare("\u{80}".as_bytes(), "中".as_bytes(), true),
            Ordering::Greater
        );
        assert!(key(Gb::Gb18030Bin, "\u{80}".as_bytes()) < key(Gb::Gb18030Bin, "中".as_bytes()));
    }

    #[test]
    fn sort_keys_from_tikv_tests() {
        // TiKV collator/mod.rs test_utf8mb4_sort_key: the GBKBin, GbkChineseCi and Gb18030Bin
        // columns.
        let s = "Foo © bar 𝌆 baz ☃ qux".as_bytes();
        assert_eq!(
            key(Gb::GbkBin, s),
            [
                0x46, 0x6f, 0x6f, 0x20, 0x3f, 0x20, 0x62, 0x61, 0x72, 0x20, 0x3f, 0x20, 0x62, 0x61,
                0x7a, 0x20, 0x3f, 0x20, 0x71, 0x75, 0x78
            ]
        );
        assert_eq!(
            key(Gb::GbkChineseCi, s),
            [
                0x46, 0x4f, 0x4f, 0x20, 0x3f, 0x20, 0x42, 0x41, 0x52, 0x20, 0x3f, 0x20, 0x42, 0x41,
                0x5a, 0x20, 0x3f, 0x20, 0x51, 0x55, 0x58
            ]
        );
        assert_eq!(
            key(Gb::Gb18030Bin, s),
            [
                0x46, 0x6F, 0x6F, 0x20, 0x81, 0x30, 0x84, 0x38, 0x20, 0x62, 0x61, 0x72, 0x20, 0x94,
                0x32, 0xEF, 0x32, 0x20, 0x62, 0x61, 0x7A, 0x20, 0x81, 0x37, 0xA3, 0x30, 0x20, 0x71,
                0x75, 0x78
            ]
        );
        for (s, gbk, ci, gb) in [
            ("a", &[0x61u8][..], &[0x41u8][..], &[0x61u8][..]),
            ("A ", &[0x41], &[0x41], &[0x41]),
            ("😃", &[0x3F], &[0x3F], &[0x94, 0x39, 0xFC, 0x39]),
            ("ﷻ", &[0x3F], &[0x3F], &[0x84, 0x30, 0xFE, 0x35]),
            (
                "中文",
                &[0xD6, 0xD0, 0xCE, 0xC4],
                &[0xD3, 0x21, 0xC1, 0xAD],
                &[0xD6, 0xD0, 0xCE, 0xC4],
            ),
        ] {
            assert_eq!(key(Gb::GbkBin, s.as_bytes()), gbk, "{s}");
            assert_eq!(key(Gb::GbkChineseCi, s.as_bytes()), ci, "{s}");
            assert_eq!(key(Gb::Gb18030Bin, s.as_bytes()), gb, "{s}");
        }
    }

    #[test]
    fn compare_from_tikv_tests() {
        // TiKV collator/mod.rs test_compare: the GBKBin, GbkChineseCi and Gb18030Bin columns.
        use Ordering::{Equal as E, Greater as G, Less as L};
        let cases: [(&[u8], &[u8], [Ordering; 3]); 12] = [
            (b"a", b"a", [E, E, E]),
            (b"a", b"a ", [E, E, E]),
            (b"a", b"A ", [G, E, G]),
            (b"aa ", b"a a", [G, G, G]),
            (b"A", b"a\t", [L, L, L]),
            ("cAfe".as_bytes(), "café".as_bytes(), [L, L, L]),
            ("cAfe ".as_bytes(), "café".as_bytes(), [L, L, L]),
            ("ß".as_bytes(), b"ss", [L, L, G]),
            ("中文".as_bytes(), "汉字".as_bytes(), [G, G, G]),
            ("啊".as_bytes(), "把".as_bytes(), [L, L, L]),
            (&[0x3e, 0xfe, 0x3e, 0x3e], &[0x3e, 0xff], [G, E, G]),
            ("ʩ".as_bytes(), b"F", [L, L, G]),
        ];
        for (a, b, want) in cases {
            for (g, w) in [Gb::GbkBin, Gb::GbkChineseCi, Gb::Gb18030Bin].into_iter().zip(want) {
                assert_eq!(g.compare(a, b, true), w, "{a:?} {b:?} {g:?}");
            }
        }
    }

    #[test]
    fn padding_and_invalid_utf8_as_tikv() {
        // TiKV codec/collation/gb.rs gb_shared_padding_invalid_and_native_grouping (wire).
        for g in [Gb::GbkBin, Gb::GbkChineseCi, Gb::Gb18030Bin] {
            assert_eq!(g.compare(b"a ", b"a", true), Ordering::Equal);
            assert_eq!(g.compare(b"a ", b"a", false), Ordering::Greater);
            assert_eq!(key(g, b"a "), key(g, b"a"));
        }
        assert_eq!(Gb::GbkChineseCi.compare(b"\xff", b"x", true), Ordering::Equal);
        assert_eq!(key(Gb::GbkChineseCi, b"a\xffz"), key(Gb::GbkChineseCi, b"a"));
        assert_eq!(key(Gb::GbkBin, b"a\xffz"), b"a?z");
        assert_eq!(key(Gb::Gb18030Bin, b"a\xe4\xb8z"), b"a??z");
    }

    #[test]
    fn tables_cover_the_bmp() {
        for cp in 0..0x1_0000u32 {
            if (0xD800..0xE000).contains(&cp) || cp == u32::from(b'?') {
                continue;
            }
            assert!(paged(GBK_IDX, GBK_PAGES, cp).is_some(), "{cp:04X}");
            let code = gb18030_code(cp);
            assert_ne!(code, u32::from(QUESTION), "U+{cp:04X}");
            if code > 0xFFFF {
                // A four-byte code: bytes in their ranges.
                let [b1, b2, b3, b4] = code.to_be_bytes();
                assert!((0x81..=0x84).contains(&b1) && (0x30..=0x39).contains(&b2));
                assert!((0x81..=0xFE).contains(&b3) && (0x30..=0x39).contains(&b4));
            }
        }
        assert_eq!(gb18030_code(0x10_FFFF), 0xE332_9A35);
    }
}
