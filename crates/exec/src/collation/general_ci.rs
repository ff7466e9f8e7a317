//! `utf8mb4_general_ci` and `utf8_general_ci` (TiKV's `CollatorUtf8Mb4GeneralCi`).
//!
//! Each BMP character weighs one 16-bit value from MySQL's table (`data/general_ci.*`,
//! generated from MariaDB by `tools/gen-collation-tables.py`); every character past U+FFFF
//! weighs 0xFFFD. PAD SPACE: trailing spaces are removed first. The sort key is the weights as
//! big-endian u16s and ends at the first byte sequence that is not UTF-8; a comparison that
//! meets one on either side before a difference answers Equal (TiKV since tikv#18611).

use std::cmp::Ordering;

use super::bin::trim_end_spaces;
use super::next_utf8;

/// Page index per 256 code points: 0xFFFF for a page where every character weighs itself.
static IDX: &[u8; 512] = include_bytes!("data/general_ci.idx");
/// The stored pages, 256 little-endian u16 weights each.
static PAGES: &[u8] = include_bytes!("data/general_ci.page");

/// The weight of code point `cp`.
#[inline]
pub(crate) fn weight(cp: u32) -> u16 {
    if cp > 0xFFFF {
        return 0xFFFD;
    }
    let page = (cp >> 8) as usize;
    let id = u16::from_le_bytes([IDX[page * 2], IDX[page * 2 + 1]]);
    if id == 0xFFFF {
        return cp as u16;
    }
    let at = (usize::from(id) * 256 + (cp & 0xFF) as usize) * 2;
    match PAGES.get(at..at + 2) {
        Some(&[lo, hi]) => u16::from_le_bytes([lo, hi]),
        _ => 0xFFFD,
    }
}

pub(crate) fn sort_key(s: &[u8], out: &mut Vec<u8>) {
    let mut rest = trim_end_spaces(s);
    while let Some((cp, n)) = next_utf8(rest) {
        out.extend_from_slice(&weight(cp).to_be_bytes());
        rest = rest.get(n..).unwrap_or_default();
    }
}

/// Compares `a` and `b`; `pad` removes trailing spaces first (PAD SPACE), as TiKV's
/// `sort_compare` unless its `force_no_pad` is set.
pub(crate) fn compare(a: &[u8], b: &[u8], pad: bool) -> Ordering {
    let (mut a, mut b) = if pad { (trim_end_spaces(a), trim_end_spaces(b)) } else { (a, b) };
    while !a.is_empty() && !b.is_empty() {
        let (Some((ca, na)), Some((cb, nb))) = (next_utf8(a), next_utf8(b)) else {
            return Ordering::Equal;
        };
        match weight(ca).cmp(&weight(cb)) {
            Ordering::Equal => {}
            o => return o,
        }
        a = a.get(na..).unwrap_or_default();
        b = b.get(nb..).unwrap_or_default();
    }
    a.len().cmp(&b.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_from_tikv_tests() {
        // TiKV's collator tests (test_utf8mb4_sort_key, test_compare).
        assert_eq!(weight('a' as u32), 0x41);
        assert_eq!(weight('ß' as u32), 0x53);
        assert_eq!(weight('é' as u32), 0x45);
        assert_eq!(weight('©' as u32), 0xA9);
        assert_eq!(weight('☃' as u32), 0x2603);
        assert_eq!(weight('ﷻ' as u32), 0xFDFB);
        assert_eq!(weight('😃' as u32), 0xFFFD);
        let mut k = Vec::new();
        sort_key("Foo © bar 𝌆 baz ☃ qux".as_bytes(), &mut k);
        let want = [
            0x00, 0x46, 0x00, 0x4f, 0x00, 0x4f, 0x00, 0x20, 0x00, 0xa9, 0x00, 0x20, 0x00, 0x42,
            0x00, 0x41, 0x00, 0x52, 0x00, 0x20, 0xff, 0xfd, 0x00, 0x20, 0x00, 0x42, 0x00, 0x41,
            0x00, 0x5a, 0x00, 0x20, 0x26, 0x3, 0x00, 0x20, 0x00, 0x51, 0x00, 0x55, 0x00, 0x58,
        ];
        assert_eq!(k, want);
        assert_eq!(compare("cAfe ".as_bytes(), "café".as_bytes(), true), Ordering::Equal);
        assert_eq!(compare(b"aa ", b"a a", true), Ordering::Greater);
        assert_eq!(compare(b"A", b"a\t", true), Ordering::Less);
        assert_eq!(compare("ß".as_bytes(), b"ss", true), Ordering::Less);
    }

    #[test]
    fn invalid_utf8_as_tikv() {
        let mut k = Vec::new();
        sort_key(b"ab\xFFcd", &mut k);
        assert_eq!(k, [0, 0x41, 0, 0x42]);
        // Equal as soon as either side meets an invalid sequence.
        assert_eq!(compare(b"a\xFFz", b"Ab", true), Ordering::Equal);
        assert_eq!(compare(b"b\xFF", b"a", true), Ordering::Greater);
    }
}
