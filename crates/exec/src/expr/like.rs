//! `LIKE` with an escape character, as TiKV's `impl_like::like`.
//!
//! The pattern and the text are walked character by character: `%` matches any run
//! (backtracking to the last `%`), `_` one character, the escape character (any code point)
//! makes the next pattern character literal, and a literal matches a text character that the
//! collation compares Equal to it (so `_ci` collations match case- and accent-insensitively).
//! That comparison is TiKV's `sort_compare(t, p, force_no_pad = true)`: no PAD SPACE trimming,
//! so a space in the pattern is a character with the space's weight, not an empty string
//! (under `utf8mb4_unicode_ci` U+3000 then matches it, an ignorable character does not).
//!
//! A character is one byte under `binary` and `latin1_bin` (ids 63, -63, 47, -47) and one
//! UTF-8 sequence otherwise, every legacy id included. Like TiKV, the UTF-8 decoding does not
//! validate: a sequence's length comes from its first byte (clipped to what is left) and its
//! code point from Rust's `next_code_point` arithmetic, so bytes that are not UTF-8 still step
//! one "character" at a time and a literal one matches the same bytes.

use crate::collation::Collation;
use crate::error::Result;

/// A compiled LIKE pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LikePattern {
    pattern: Vec<u8>,
    escape: u32,
    coll: Collation,
    bytes: bool,
}

/// True when `collate` (a collation id) makes a character one byte (TiKV's `CharsetBinary`).
fn is_byte_charset(collate: i32) -> bool {
    matches!(collate, 63 | -63 | 47 | -47)
}

impl LikePattern {
    /// Compiles `pattern` with escape code point `escape` under collation id `collate`.
    ///
    /// # Errors
    ///
    /// An unsupported collation.
    pub fn compile(pattern: &[u8], escape: i64, collate: i32) -> Result<LikePattern> {
        let coll = Collation::from_id(collate)?;
        // TiKV reads the escape as `escape as u32`.
        let escape = (escape & 0xFFFF_FFFF) as u32;
        Ok(LikePattern { pattern: pattern.to_vec(), escape, coll, bytes: is_byte_charset(collate) })
    }

    /// The character at the start of `s`: its code point and length; `None` when `s` is
    /// empty.
    #[inline]
    fn decode(&self, s: &[u8]) -> Option<(u32, usize)> {
        let x = *s.first()?;
        if self.bytes || x < 0x80 {
            return Some((u32::from(x), 1));
        }
        let at = |k: usize| u32::from(s.get(k).copied().unwrap_or(0) & 0x3F);
        let init = u32::from(x & 0x1F);
        let (cp, len) = if x < 0xE0 {
            ((init << 6) | at(1), 2)
        } else {
            let y_z = (at(1) << 6) | at(2);
            if x < 0xF0 {
                ((init << 12) | y_z, 3)
            } else {
                (((init & 7) << 18) | (y_z << 6) | at(3), 4)
            }
        };
        Some((cp, len.min(s.len())))
    }

    /// Whether `text` matches the whole pattern.
    pub fn matches(&self, text: &[u8]) -> bool {
        let pat = self.pattern.as_slice();
        let (mut px, mut tx) = (0usize, 0usize);
        let (mut next_px, mut next_tx) = (0usize, 0usize);
        while px < pat.len() || tx < text.len() {
            if let Some((c, mut poff)) = self.decode(rest(pat, px)) {
                if c == u32::from(b'_') {
                    if let Some((_, toff)) = self.decode(rest(text, tx)) {
                        px += poff;
                        tx += toff;
                        continue;
                    }
                } else if c == u32::from(b'%') {
                    next_px = px;
                    px += poff;
                    next_tx = tx + self.decode(rest(text, tx)).map_or(1, |(_, n)| n);
                    continue;
                } else {
                    let mut literal = true;
                    if c == self.escape && px + poff < pat.len() {
                        px += poff;
                        match self.decode(rest(pat, px)) {
                            Some((_, n)) => poff = n,
                            None => literal = false,
                        }
                    }
                    if literal && let Some((_, toff)) = self.decode(rest(text, tx)) {
                        let t = text.get(tx..tx + toff).unwrap_or_default();
                        let p = pat.get(px..px + poff).unwrap_or_default();
                        if self.coll.compare_no_pad(t, p).is_eq() {
                            tx += toff;
                            px += poff;
                            continue;
                        }
                    }
                }
            }
            // Mismatch: back to the last `%`, one character further.
            if 0 < next_tx && next_tx <= text.len() {
                px = next_px;
                tx = next_tx;
                continue;
            }
            return false;
        }
        true
    }
}

/// `s` from `at` on (empty past the end).
#[inline]
fn rest(s: &[u8], at: usize) -> &[u8] {
    s.get(at..).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn like(p: &[u8], s: &[u8], collate: i32) -> bool {
        LikePattern::compile(p, 92, collate).unwrap().matches(s)
    }

    fn m(p: &str, s: &str) -> bool {
        like(p.as_bytes(), s.as_bytes(), -46)
    }

    #[test]
    fn like_cases() {
        assert!(m("abc", "abc"));
        assert!(!m("abc", "abcd"));
        assert!(m("a%", "abcd"));
        assert!(m("%cd", "abcd"));
        assert!(m("%b%d", "abcd"));
        assert!(m("a_c", "abc"));
        assert!(!m("a_c", "ac"));
        assert!(m("%", ""));
        assert!(!m("_", ""));
        assert!(m("a\\%", "a%"));
        assert!(!m("a\\%", "ab"));
        assert!(m("a\\", "a\\"));
        assert!(m("_", "é"));
        assert!(!like(b"_", "é".as_bytes(), 63));
        assert!(like(b"__", "é".as_bytes(), 63));
        assert!(m("%%%a%%", "xxa"));
        assert!(m("%special%requests%", "blah special foo requests bar"));
        assert!(!m("%special%requests%", "blah requests special"));
        // Any code point escapes.
        assert!(LikePattern::compile("aé%".as_bytes(), 0xE9, 63).is_ok());
        assert!(LikePattern::compile("aé%".as_bytes(), 0xE9, -46).unwrap().matches(b"a%"));
        assert!(!LikePattern::compile("aé%".as_bytes(), 0xE9, -46).unwrap().matches(b"ab"));
        assert!(LikePattern::compile(b"a", 92, -248).is_err());
    }

    #[test]
    fn legacy_ids_step_by_character() {
        // Ids >= 0 other than binary/latin1 are utf8mb4_bin without padding (TiKV).
        assert!(like(b"_", "é".as_bytes(), 46));
        assert!(like(b"_", "é".as_bytes(), 33));
        assert!(!like(b"_", "é".as_bytes(), 47));
        assert!(!like(b"a", b"a ", 46));
    }

    #[test]
    fn ci_collations_match_per_character() {
        assert!(like(b"A_C", b"abc", -45));
        assert!(like("caf_".as_bytes(), "CAFÉ".as_bytes(), -45));
        assert!(like("CAFE".as_bytes(), "café".as_bytes(), -224));
        assert!(like("%É%".as_bytes(), "résumé".as_bytes(), -255));
        assert!(!like(b"abc", b"ABC", -46));
        // One character against one: `ß` is `s` under general_ci, not `ss` under unicode_ci.
        assert!(like("ß".as_bytes(), b"s", -45));
        assert!(!like("ß".as_bytes(), b"ss", -224));
    }

    #[test]
    fn characters_compare_without_pad_space() {
        // TiKV impl_like.rs test_like: a full-width space (U+3000) in the text matches the
        // pattern's space under utf8mb4_unicode_ci (its weight is the space's), and Ⱕ matches
        // ⱕ under utf8mb4_0900_ai_ci.
        assert!(like(b"a a", "a\u{3000}a".as_bytes(), -224));
        assert!(like(b"a a", "a\u{3000}a".as_bytes(), -192));
        assert!(like("ⱕ".as_bytes(), "Ⱕ".as_bytes(), -255));
        assert!(like(b"a a", "a\u{3000}a".as_bytes(), -255));
        // A lone space is not the empty string: an ignorable character (U+0001 weighs nothing
        // under UCA 4.0.0) does not match it, nor does the space match an ignorable one.
        assert_eq!(Collation::UnicodeCi.compare(b"\x01", b" "), std::cmp::Ordering::Equal);
        assert!(!like(b"a ", b"a\x01", -224));
        assert!(!like(b"a\x01", b"a ", -224));
        // general_ci and the binary PAD SPACE collations weigh U+3000 apart from a space.
        assert!(!like(b"a a", "a\u{3000}a".as_bytes(), -45));
        assert!(!like(b"a a", "a\u{3000}a".as_bytes(), -46));
        assert!(like(b"a a", b"a a", -45));
        assert!(like(b"a_", b"a ", -46));
    }

    #[test]
    fn invalid_utf8_as_tikv() {
        // utf8mb4_bin / 0900_bin: an invalid sequence steps as its lead byte says and matches
        // the same bytes.
        assert!(like(b"a\xFF", b"a\xFF", -46));
        assert!(like(b"%\xFF", b"x\xFF", -309));
        // 0xFF leads a four-byte sequence: in the pattern it swallows the `%` after it.
        assert!(!like(b"%\xFF%", b"x\xFFy", -309));
        assert!(like(b"%\xFF%", b"x\xFF%", -309));
        assert!(like(b"_", b"\xC3", -46));
        assert!(!like(b"_", b"\xFF\xFF\xFF\xFF\xFF", -46));
        assert!(like(b"__", b"\xFF\xFF\xFF\xFF\xFF", -46));
        // An overlong backslash is the escape code point.
        assert!(like(b"\xC1\x9C%", b"%", -309));
    }
}
