//! `LIKE` with an escape character.
//!
//! `%` matches any run, `_` one character (one byte under the `binary` collation, one UTF-8
//! character otherwise), the escape character makes the next pattern character literal.

use crate::error::{Error, Feature, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Byte(u8),
    One,
    Many,
}

/// A compiled LIKE pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LikePattern {
    toks: Vec<Tok>,
    utf8: bool,
}

/// True when `collate` (a collation id) makes `_` match a byte rather than a character.
fn is_binary(collate: i32) -> bool {
    collate == 63 || collate == -63
}

impl LikePattern {
    /// Compiles `pattern` with escape code point `escape` under collation id `collate`.
    pub fn compile(pattern: &[u8], escape: i64, collate: i32) -> Result<LikePattern> {
        let esc = u8::try_from(escape).ok().filter(|e| e.is_ascii()).ok_or_else(|| {
            Error::unsupported(Feature::LikeEscape, format!("code point {escape}"))
        })?;
        let mut toks = Vec::with_capacity(pattern.len());
        let mut it = pattern.iter().copied();
        while let Some(b) = it.next() {
            let t = match b {
                _ if b == esc => Tok::Byte(it.next().unwrap_or(esc)),
                b'%' => {
                    if toks.last() == Some(&Tok::Many) {
                        continue;
                    }
                    Tok::Many
                }
                b'_' => Tok::One,
                _ => Tok::Byte(b),
            };
            toks.push(t);
        }
        Ok(LikePattern { toks, utf8: !is_binary(collate) })
    }

    #[inline]
    fn step(&self, text: &[u8], i: usize) -> usize {
        if !self.utf8 {
            return 1;
        }
        match text.get(i) {
            Some(&b) if b >= 0xF0 => 4,
            Some(&b) if b >= 0xE0 => 3,
            Some(&b) if b >= 0xC0 => 2,
            _ => 1,
        }
    }

    /// Whether `text` matches the whole pattern.
    pub fn matches(&self, text: &[u8]) -> bool {
        let n = text.len();
        let (mut p, mut s) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        loop {
            if let Some(&t) = self.toks.get(p) {
                match t {
                    Tok::Many => {
                        star = Some((p, s));
                        p += 1;
                        continue;
                    }
                    Tok::One if s < n => {
                        s = (s + self.step(text, s)).min(n);
                        p += 1;
                        continue;
                    }
                    Tok::Byte(b) if text.get(s) == Some(&b) => {
                        s += 1;
                        p += 1;
                        continue;
                    }
                    _ => {}
                }
            } else if s == n {
                return true;
            }
            match star {
                Some((sp, ss)) if ss < n => {
                    let ns = (ss + self.step(text, ss)).min(n);
                    star = Some((sp, ns));
                    p = sp + 1;
                    s = ns;
                }
                _ => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, s: &str) -> bool {
        LikePattern::compile(p.as_bytes(), 92, -46).unwrap().matches(s.as_bytes())
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
        assert!(!LikePattern::compile(b"_", 92, 63).unwrap().matches("é".as_bytes()));
        assert!(m("%%%a%%", "xxa"));
        assert!(m("%special%requests%", "blah special foo requests bar"));
        assert!(!m("%special%requests%", "blah requests special"));
        assert!(LikePattern::compile(b"a", 300, 63).is_err());
    }
}
