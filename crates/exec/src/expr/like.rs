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
//!
//! Patterns made of literals and `%` only (after escapes) take a linear path: the pattern is
//! cut at `%` into runs of literal characters, the first anchored at the start, the last at
//! the end, the others found left to right, each the leftmost occurrence (KMP over
//! characters, with the collation's per-character equality): work `O(text + pattern)` per
//! row whatever the pattern. Patterns with `_` keep the backtracking walk above, whose cost is
//! metered so a request's limits can stop it. Patterns longer than [`MAX_LIKE_PATTERN`] bytes
//! are an error.

use std::ops::Range;

use crate::collation::Collation;
use crate::error::{Error, Result};

/// The longest LIKE pattern accepted, in bytes (64 KiB): longer ones are
/// [`Error::TooLarge`]. MySQL has no such bound, but no query needs one this long and every
/// row's match walks the pattern.
pub const MAX_LIKE_PATTERN: usize = 64 << 10;

/// Steps of the matcher between two calls of its limit check.
const METER_EVERY: usize = 1 << 12;

/// A compiled LIKE pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LikePattern {
    pattern: Vec<u8>,
    escape: u32,
    coll: Collation,
    bytes: bool,
    /// The pattern cut at `%` when it has no `_`: the linear path.
    segments: Option<Vec<Segment>>,
    /// True when the collation's per-character equality is an equivalence on every text
    /// (byte equality), or on valid UTF-8 texts (the pattern is valid UTF-8): KMP applies.
    /// The `_ci` collations answer Equal at an invalid sequence, which is no equivalence;
    /// for those texts each run is searched naively (leftmost, still exact).
    kmp_on_utf8: bool,
}

/// A run of literal characters between two `%` (or an end of the pattern).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Segment {
    /// Each character's bytes in the pattern.
    chars: Vec<Range<usize>>,
    /// KMP's failure function: `fail[k]` is the length of the longest proper prefix of
    /// `chars[..=k]` that is also its suffix, under the collation's equality.
    fail: Vec<usize>,
}

/// Counts the matcher's steps and calls a limit check every [`METER_EVERY`] of them.
struct Meter<'a> {
    steps: usize,
    check: &'a mut dyn FnMut(usize) -> Result<()>,
}

impl Meter<'_> {
    #[inline]
    fn step(&mut self) -> Result<()> {
        self.steps += 1;
        if self.steps.is_multiple_of(METER_EVERY) { (self.check)(METER_EVERY) } else { Ok(()) }
    }
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
    /// An unsupported collation; a pattern longer than [`MAX_LIKE_PATTERN`].
    pub fn compile(pattern: &[u8], escape: i64, collate: i32) -> Result<LikePattern> {
        if pattern.len() > MAX_LIKE_PATTERN {
            return Err(Error::TooLarge {
                what: "LIKE pattern",
                len: pattern.len(),
                limit: MAX_LIKE_PATTERN,
            });
        }
        let coll = Collation::from_id(collate)?;
        // TiKV reads the escape as `escape as u32`.
        let escape = (escape & 0xFFFF_FFFF) as u32;
        let mut p = LikePattern {
            pattern: pattern.to_vec(),
            escape,
            coll,
            bytes: is_byte_charset(collate),
            segments: None,
            kmp_on_utf8: std::str::from_utf8(pattern).is_ok(),
        };
        p.segments = p.cut();
        Ok(p)
    }

    /// True when this is `pattern` compiled with escape `escape` (the collation aside).
    pub fn is(&self, pattern: &[u8], escape: i64) -> bool {
        self.pattern == pattern && self.escape == (escape & 0xFFFF_FFFF) as u32
    }

    /// The pattern cut at `%` into runs of literal characters, read exactly as the
    /// backtracking walk reads it; `None` when it has a `_`.
    fn cut(&self) -> Option<Vec<Segment>> {
        let pat = self.pattern.as_slice();
        let mut segs = vec![Segment::default()];
        let mut px = 0;
        while let Some((c, poff)) = self.decode(rest(pat, px)) {
            if c == u32::from(b'_') {
                return None;
            }
            if c == u32::from(b'%') {
                segs.push(Segment::default());
                px += poff;
                continue;
            }
            let (mut at, mut len) = (px, poff);
            if c == self.escape && px + poff < pat.len() {
                at = px + poff;
                len = self.decode(rest(pat, at)).map_or(0, |(_, n)| n);
            }
            segs.last_mut()?.chars.push(at..at + len);
            px = at + len;
        }
        for seg in &mut segs {
            seg.fail = self.failure(&seg.chars);
        }
        Some(segs)
    }

    /// KMP's failure function of `chars` under the collation's equality.
    fn failure(&self, chars: &[Range<usize>]) -> Vec<usize> {
        let mut fail = vec![0; chars.len()];
        let mut k = 0;
        for i in 1..chars.len() {
            let c = self.pat_char(&chars[i]);
            while k > 0 && !self.eq(c, self.pat_char(&chars[k])) {
                k = fail[k - 1];
            }
            if self.eq(c, self.pat_char(&chars[k])) {
                k += 1;
            }
            fail[i] = k;
        }
        fail
    }

    #[inline]
    fn pat_char(&self, r: &Range<usize>) -> &[u8] {
        self.pattern.get(r.clone()).unwrap_or_default()
    }

    /// One text character against one pattern character, as TiKV's
    /// `sort_compare(t, p, force_no_pad = true)`.
    #[inline]
    fn eq(&self, t: &[u8], p: &[u8]) -> bool {
        match self.coll {
            Collation::Binary | Collation::PadSpaceBin => t == p,
            c => c.compare_no_pad(t, p).is_eq(),
        }
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
        self.matches_with(text, &mut |_| Ok(())).unwrap_or(false)
    }

    /// Whether `text` matches, calling `check` with the steps done every few thousand
    /// steps (a request's limits: its error stops the match).
    ///
    /// # Errors
    ///
    /// What `check` returns.
    pub fn matches_with(
        &self,
        text: &[u8],
        check: &mut dyn FnMut(usize) -> Result<()>,
    ) -> Result<bool> {
        let mut meter = Meter { steps: 0, check };
        match &self.segments {
            Some(segs) => self.match_segments(segs, text, &mut meter),
            None => self.backtrack(text, &mut meter),
        }
    }

    /// The steps a match of `text` takes (a test of linearity).
    #[cfg(test)]
    fn steps(&self, text: &[u8], linear: bool) -> (bool, usize) {
        let mut meter = Meter { steps: 0, check: &mut |_| Ok(()) };
        let m = match (&self.segments, linear) {
            (Some(segs), true) => self.match_segments(segs, text, &mut meter),
            _ => self.backtrack(text, &mut meter),
        };
        (m.unwrap_or(false), meter.steps)
    }

    /// The linear path: the first run anchored at the start, the last at the end, the ones
    /// between found leftmost, in order, each after the previous.
    fn match_segments(&self, segs: &[Segment], text: &[u8], meter: &mut Meter<'_>) -> Result<bool> {
        let Some((first, rest_segs)) = segs.split_first() else {
            return Ok(text.is_empty());
        };
        let Some(tx) = self.match_at(first, text, 0, meter)? else {
            return Ok(false);
        };
        let Some((last, middle)) = rest_segs.split_last() else {
            // No `%`: the text is the run, exactly.
            return Ok(tx == text.len());
        };
        let mut tx = tx;
        let kmp = matches!(self.coll, Collation::Binary | Collation::PadSpaceBin)
            || (self.kmp_on_utf8 && !middle.is_empty() && std::str::from_utf8(text).is_ok());
        for seg in middle {
            let found = if kmp {
                self.find(seg, text, tx, meter)?
            } else {
                self.find_naive(seg, text, tx, meter)?
            };
            match found {
                Some(end) => tx = end,
                None => return Ok(false),
            }
        }
        if last.chars.is_empty() {
            return Ok(true);
        }
        // The last run is the text's last characters (counted forward: characters are only
        // known from their lead byte), none of them before `tx`.
        let mut total = 0usize;
        let mut at = tx;
        while let Some((_, n)) = self.decode(rest(text, at)) {
            at += n;
            total += 1;
            meter.step()?;
        }
        let Some(skip) = total.checked_sub(last.chars.len()) else {
            return Ok(false);
        };
        let mut at = tx;
        for _ in 0..skip {
            at += self.decode(rest(text, at)).map_or(1, |(_, n)| n);
            meter.step()?;
        }
        Ok(self.match_at(last, text, at, meter)? == Some(text.len()))
    }

    /// The run `seg` at text offset `tx`: where it ends, or `None`.
    fn match_at(
        &self,
        seg: &Segment,
        text: &[u8],
        mut tx: usize,
        meter: &mut Meter<'_>,
    ) -> Result<Option<usize>> {
        for r in &seg.chars {
            meter.step()?;
            let Some((_, n)) = self.decode(rest(text, tx)) else {
                return Ok(None);
            };
            if !self.eq(text.get(tx..tx + n).unwrap_or_default(), self.pat_char(r)) {
                return Ok(None);
            }
            tx += n;
        }
        Ok(Some(tx))
    }

    /// The end of the leftmost occurrence of `seg` at or after `tx` (KMP: each text
    /// character is read once).
    fn find(
        &self,
        seg: &Segment,
        text: &[u8],
        mut tx: usize,
        meter: &mut Meter<'_>,
    ) -> Result<Option<usize>> {
        let m = seg.chars.len();
        if m == 0 {
            return Ok(Some(tx));
        }
        let mut k = 0;
        while let Some((_, n)) = self.decode(rest(text, tx)) {
            let t = text.get(tx..tx + n).unwrap_or_default();
            while k > 0 && !self.eq(t, self.pat_char(&seg.chars[k])) {
                k = seg.fail[k - 1];
                meter.step()?;
            }
            if self.eq(t, self.pat_char(&seg.chars[k])) {
                k += 1;
            }
            meter.step()?;
            tx += n;
            if k == m {
                return Ok(Some(tx));
            }
        }
        Ok(None)
    }

    /// The end of the leftmost occurrence of `seg` at or after `tx`, trying each start in
    /// turn (for equalities that are not equivalences).
    fn find_naive(
        &self,
        seg: &Segment,
        text: &[u8],
        mut tx: usize,
        meter: &mut Meter<'_>,
    ) -> Result<Option<usize>> {
        loop {
            if let Some(end) = self.match_at(seg, text, tx, meter)? {
                return Ok(Some(end));
            }
            match self.decode(rest(text, tx)) {
                Some((_, n)) => tx += n,
                None => return Ok(None),
            }
        }
    }

    /// The general walk (TiKV's): `%` backtracks to the last `%` seen.
    fn backtrack(&self, text: &[u8], meter: &mut Meter<'_>) -> Result<bool> {
        let pat = self.pattern.as_slice();
        let (mut px, mut tx) = (0usize, 0usize);
        let (mut next_px, mut next_tx) = (0usize, 0usize);
        while px < pat.len() || tx < text.len() {
            meter.step()?;
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
                        if self.eq(t, p) {
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
            return Ok(false);
        }
        Ok(true)
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

    /// Collations of every family, byte and UTF-8 characters.
    const COLLS: &[i32] = &[63, 47, -46, -309, -45, -224, -255, -28, -87, -249, 46];

    fn piece() -> impl proptest::strategy::Strategy<Value = &'static [u8]> {
        proptest::sample::select(vec![
            &b"a"[..],
            b"a",
            b"a",
            b"a",
            b"A",
            b"b",
            b"b",
            b"%",
            b"%",
            b"%",
            b"\\",
            "é".as_bytes(),
            "É".as_bytes(),
            b" ",
            "\u{3000}".as_bytes(),
            b"\x01",
            b"\xFF",
            b"\xC3",
            b"_",
        ])
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(5000))]

        /// The linear path answers what the backtracking walk answers, on every collation,
        /// escape and byte soup (invalid UTF-8 included).
        #[test]
        fn linear_path_equals_backtracking(
            pat in proptest::collection::vec(piece(), 0..10),
            text in proptest::collection::vec(piece(), 0..16),
            coll in proptest::sample::select(COLLS),
            esc in proptest::sample::select(vec![92i64, 37, 97, 0xE9]),
        ) {
            let pat: Vec<u8> = pat.concat();
            let text: Vec<u8> = text.concat();
            let p = LikePattern::compile(&pat, esc, coll).unwrap();
            let (general, _) = p.steps(&text, false);
            let (linear, _) = p.steps(&text, true);
            proptest::prop_assert_eq!(linear, general, "pattern {:?} text {:?}", pat, text);
        }

        /// The same on a two-letter alphabet, where runs overlap themselves (KMP's case).
        #[test]
        fn linear_path_equals_backtracking_on_ab(
            pat in "[ab%]{0,12}",
            text in "[abA]{0,24}",
            coll in proptest::sample::select(COLLS),
        ) {
            let p = LikePattern::compile(pat.as_bytes(), 92, coll).unwrap();
            let (general, _) = p.steps(text.as_bytes(), false);
            let (linear, _) = p.steps(text.as_bytes(), true);
            proptest::prop_assert_eq!(linear, general, "pattern {:?} text {:?}", pat, text);
        }
    }

    #[test]
    fn runs_are_found_where_they_overlap_themselves() {
        for coll in [63, -46, -45, -255] {
            let p = LikePattern::compile(b"%aab%", 92, coll).unwrap();
            assert!(p.matches(b"aaab"));
            assert!(p.matches(b"xaaabx"));
            assert!(!p.matches(b"abab"));
            let p = LikePattern::compile(b"x%abab%abac", 92, coll).unwrap();
            assert!(p.matches(b"xabababacabac"));
            assert!(!p.matches(b"xabacabab"));
        }
    }

    #[test]
    fn percent_and_literal_patterns_are_linear() {
        let text = vec![b'a'; 1 << 20];
        let n = text.len();
        // `%a%a…%a%b`: the backtracking walk goes back to the last `%` at every `a`.
        let mut pat = b"%a".repeat(10_000);
        pat.extend_from_slice(b"%b");
        // `%aaaa…ab`: naive search is text × pattern.
        let mut long = b"%".to_vec();
        long.extend(std::iter::repeat_n(b'a', 30_000));
        long.extend_from_slice(b"b%");
        for coll in [63, -46, -45, -224] {
            for pat in [&pat, &long] {
                let p = LikePattern::compile(pat, 92, coll).unwrap();
                assert!(p.segments.is_some());
                let (m, steps) = p.steps(&text, true);
                assert!(!m);
                // Each text character is read a bounded number of times.
                assert!(steps <= 4 * (n + pat.len()), "{coll}: {steps} steps");
            }
        }
        // The text ends with the last run: a match, still linear.
        let mut text = text;
        text.push(b'b');
        let p = LikePattern::compile(&long, 92, -45).unwrap();
        let (m, steps) = p.steps(&text, true);
        assert!(m);
        assert!(steps <= 4 * (text.len() + long.len()));
        // The backtracking walk on the same input is quadratic: the meter sees it.
        let short: Vec<u8> = text.iter().copied().take(20_000).collect();
        let mut pat = b"%".to_vec();
        pat.extend(std::iter::repeat_n(b'a', 1_000));
        pat.push(b'b');
        let p = LikePattern::compile(&pat, 92, -46).unwrap();
        assert!(p.steps(&short, false).1 > 10 * (short.len() + pat.len()));
        assert!(p.steps(&short, true).1 <= 4 * (short.len() + pat.len()));
    }

    #[test]
    fn the_matcher_reports_its_work_and_stops_on_error() {
        let text = vec![b'a'; 100_000];
        let p = LikePattern::compile(b"%a_b", 92, -46).unwrap();
        assert!(p.segments.is_none());
        let mut calls = 0;
        let r = p.matches_with(&text, &mut |_| {
            calls += 1;
            if calls == 3 { Err(Error::invalid("stop")) } else { Ok(()) }
        });
        assert_eq!(r, Err(Error::invalid("stop")));
        assert_eq!(calls, 3);
    }

    #[test]
    fn patterns_longer_than_the_cap_are_an_error() {
        let ok = vec![b'%'; MAX_LIKE_PATTERN];
        assert!(LikePattern::compile(&ok, 92, -46).unwrap().matches(b"anything"));
        let long = vec![b'%'; MAX_LIKE_PATTERN + 1];
        assert!(matches!(
            LikePattern::compile(&long, 92, -46),
            Err(Error::TooLarge { what: "LIKE pattern", len, limit: MAX_LIKE_PATTERN })
                if len == MAX_LIKE_PATTERN + 1
        ));
    }
}
