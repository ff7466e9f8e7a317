//! JSON path expressions (`$.a[0].*`, `$**.b`, `$[last-1]`), as MySQL 8 spells them, and the
//! walk that finds the values a path names in a binary JSON document.
//!
//! A path is `$` followed by legs: `.key`, `."quoted key"`, `.*`, `[n]`, `[last]`,
//! `[last-n]`, `[m to n]` (MySQL 8's ranges, either end `last-k` too), `[*]`, and `**`
//! followed by another leg. Whitespace may separate legs. An array leg on a value that is not
//! an array sees the value as a one-element array (MySQL's auto-wrap), so `$[0]` of `1` is
//! `1`.

use rcop_datum::JsonRef;

use crate::error::{Error, Result};

/// MySQL `ER_INVALID_JSON_PATH`.
pub const ER_INVALID_JSON_PATH: i32 = 3143;
/// MySQL `ER_INVALID_JSON_PATH_WILDCARD`.
pub const ER_INVALID_JSON_PATH_WILDCARD: i32 = 3149;

/// An array position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Index {
    /// From the start.
    Start(u32),
    /// `last - n`.
    Last(u32),
}

impl Index {
    /// The position in an array of `len` elements; `None` before the start.
    pub fn resolve(self, len: usize) -> Option<usize> {
        match self {
            Index::Start(i) => Some(i as usize),
            Index::Last(n) => len.checked_sub(1)?.checked_sub(n as usize),
        }
    }
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leg {
    /// `.key`: an object member.
    Key(Vec<u8>),
    /// `.*`: every member.
    AnyKey,
    /// `[n]`: an array element.
    At(Index),
    /// `[m to n]`: the elements from `m` to `n`, both included.
    Range(Index, Index),
    /// `[*]`: every element.
    AnyIndex,
    /// `**`: the value and everything under it.
    AnyDepth,
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathExpr {
    /// The legs after `$`.
    pub legs: Vec<Leg>,
}

fn bad_path(text: &[u8]) -> Error {
    Error::eval(
        ER_INVALID_JSON_PATH,
        format!(
            "Invalid JSON path expression. The error is around character position {}.",
            text.len()
        ),
    )
}

impl PathExpr {
    /// Parses MySQL path text.
    pub fn parse(text: &[u8]) -> Result<PathExpr> {
        let mut p = Parser { s: text, i: 0 };
        p.ws();
        if !p.eat(b'$') {
            return Err(bad_path(text));
        }
        let mut legs = Vec::new();
        loop {
            p.ws();
            match p.peek() {
                None => break,
                Some(b'.') => {
                    p.i += 1;
                    p.ws();
                    legs.push(p.key().ok_or_else(|| bad_path(text))?);
                }
                Some(b'[') => {
                    p.i += 1;
                    legs.push(p.index().ok_or_else(|| bad_path(text))?);
                }
                Some(b'*') if p.s.get(p.i + 1) == Some(&b'*') => {
                    p.i += 2;
                    // `**` needs a leg after it, and `***` is not a leg.
                    if !matches!(p.peek(), Some(b'.' | b'[')) {
                        return Err(bad_path(text));
                    }
                    legs.push(Leg::AnyDepth);
                }
                Some(_) => return Err(bad_path(text)),
            }
        }
        Ok(PathExpr { legs })
    }

    /// True when the path names possibly many values (`*`, `**`, a range).
    pub fn has_wildcard(&self) -> bool {
        self.legs
            .iter()
            .any(|l| matches!(l, Leg::AnyKey | Leg::AnyIndex | Leg::AnyDepth | Leg::Range(..)))
    }

    /// Errors when the path has a wildcard (where one value must be named).
    pub fn no_wildcard(&self) -> Result<&PathExpr> {
        if self.has_wildcard() {
            return Err(Error::eval(
                ER_INVALID_JSON_PATH_WILDCARD,
                "In this situation, path expressions may not contain the * and ** tokens or an array range.",
            ));
        }
        Ok(self)
    }

    /// Every value the path names in `j`, in document order.
    pub fn find<'a>(&self, j: JsonRef<'a>) -> Result<Vec<JsonRef<'a>>> {
        let mut out = Vec::new();
        walk(j, &self.legs, &mut out)?;
        Ok(out)
    }

    /// The first value the path names in `j`.
    pub fn first<'a>(&self, j: JsonRef<'a>) -> Result<Option<JsonRef<'a>>> {
        Ok(self.find(j)?.into_iter().next())
    }
}

struct Parser<'s> {
    s: &'s [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        if hit {
            self.i += 1;
        }
        hit
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn key(&mut self) -> Option<Leg> {
        if self.eat(b'*') {
            return Some(Leg::AnyKey);
        }
        if self.peek() == Some(b'"') {
            let start = self.i;
            self.i += 1;
            while let Some(b) = self.peek() {
                self.i += 1;
                match b {
                    b'\\' => self.i += 1,
                    b'"' => {
                        let lit = std::str::from_utf8(self.s.get(start..self.i)?).ok()?;
                        let j = rcop_datum::Json::parse(lit).ok()?;
                        return Some(Leg::Key(j.as_ref().as_str_bytes()?.to_vec()));
                    }
                    _ => {}
                }
            }
            return None;
        }
        // An unquoted key: an ECMAScript identifier (letters, digits, `_`, `$`, any
        // non-ASCII character; not starting with a digit).
        let start = self.i;
        while let Some(b) = self.peek() {
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80 {
                self.i += 1;
            } else {
                break;
            }
        }
        let key = self.s.get(start..self.i)?;
        if key.is_empty() || key.first().is_some_and(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(key).ok()?;
        Some(Leg::Key(key.to_vec()))
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.i;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.i += 1;
        }
        std::str::from_utf8(self.s.get(start..self.i)?).ok()?.parse().ok()
    }

    /// `n`, `last` or `last - n`.
    fn position(&mut self) -> Option<Index> {
        if self.s.get(self.i..)?.starts_with(b"last") {
            self.i += 4;
            self.ws();
            if self.eat(b'-') {
                self.ws();
                Some(Index::Last(self.number()?))
            } else {
                Some(Index::Last(0))
            }
        } else {
            Some(Index::Start(self.number()?))
        }
    }

    fn index(&mut self) -> Option<Leg> {
        self.ws();
        let leg = if self.eat(b'*') {
            Leg::AnyIndex
        } else {
            let from = self.position()?;
            let before = self.i;
            self.ws();
            // ` to ` needs blanks on both sides (`[1to2]` is not a range).
            let rest = self.s.get(self.i..)?;
            if self.i > before
                && rest.starts_with(b"to")
                && rest.get(2).is_some_and(u8::is_ascii_whitespace)
            {
                self.i += 2;
                self.ws();
                let to = self.position()?;
                // MySQL refuses a range that runs backwards when both ends count from the start.
                if let (Index::Start(a), Index::Start(b)) = (from, to)
                    && a > b
                {
                    return None;
                }
                Leg::Range(from, to)
            } else {
                Leg::At(from)
            }
        };
        self.ws();
        self.eat(b']').then_some(leg)
    }
}

/// The children of an array or object.
pub fn children<'a>(j: JsonRef<'a>) -> Result<Vec<JsonRef<'a>>> {
    use rcop_datum::JsonType;
    let n = j.elem_count();
    match j.json_type() {
        JsonType::Array => (0..n).map(|i| j.array_get(i).map_err(Error::from)).collect(),
        JsonType::Object => (0..n).map(|i| j.object_val(i).map_err(Error::from)).collect(),
        _ => Ok(Vec::new()),
    }
}

/// The half-open range of positions `[from to to]` names in an array of `len` elements, as
/// MySQL 8's `get_array_range`: a start past the end is empty, an end past it clamps, and a
/// `last-k` before the start is position 0 (so `[last-9 to last]` of 3 elements is all 3).
pub fn range_of(from: Index, to: Index, len: usize) -> std::ops::Range<usize> {
    let pos = |i: Index| match i {
        Index::Start(k) => ((k as usize).min(len), (k as usize) < len),
        Index::Last(k) => match len.checked_sub(1).and_then(|l| l.checked_sub(k as usize)) {
            Some(p) => (p, true),
            None => (0, false),
        },
    };
    let (begin, _) = pos(from);
    let (last, within) = pos(to);
    let end = if within { last + 1 } else { last };
    begin..end.max(begin)
}

/// The elements a range leg names: of an array by position, of any other value (seen as a
/// one-element array) the value itself when the range covers position 0.
pub fn range_elems<'a>(j: JsonRef<'a>, from: Index, to: Index) -> Result<Vec<JsonRef<'a>>> {
    if j.json_type() == rcop_datum::JsonType::Array {
        return range_of(from, to, j.elem_count())
            .map(|i| j.array_get(i).map_err(Error::from))
            .collect();
    }
    Ok(if range_of(from, to, 1).contains(&0) { vec![j] } else { Vec::new() })
}

/// The element an array leg names: of an array by position, of any other value (seen as a
/// one-element array) the value itself at position 0.
pub fn index_of<'a>(j: JsonRef<'a>, idx: Index) -> Result<Option<JsonRef<'a>>> {
    if j.json_type() == rcop_datum::JsonType::Array {
        return match idx.resolve(j.elem_count()) {
            Some(i) if i < j.elem_count() => Ok(Some(j.array_get(i)?)),
            _ => Ok(None),
        };
    }
    Ok((idx.resolve(1) == Some(0)).then_some(j))
}

fn walk<'a>(j: JsonRef<'a>, legs: &[Leg], out: &mut Vec<JsonRef<'a>>) -> Result<()> {
    let Some((leg, rest)) = legs.split_first() else {
        out.push(j);
        return Ok(());
    };
    match leg {
        Leg::Key(k) => {
            if j.json_type() == rcop_datum::JsonType::Object
                && let Some(v) = j.object_search(k)?
            {
                walk(v, rest, out)?;
            }
        }
        Leg::AnyKey => {
            if j.json_type() == rcop_datum::JsonType::Object {
                for v in children(j)? {
                    walk(v, rest, out)?;
                }
            }
        }
        Leg::At(idx) => {
            if let Some(v) = index_of(j, *idx)? {
                walk(v, rest, out)?;
            }
        }
        Leg::Range(from, to) => {
            for v in range_elems(j, *from, *to)? {
                walk(v, rest, out)?;
            }
        }
        Leg::AnyIndex => {
            if j.json_type() == rcop_datum::JsonType::Array {
                for v in children(j)? {
                    walk(v, rest, out)?;
                }
            }
        }
        Leg::AnyDepth => {
            walk(j, rest, out)?;
            for v in children(j)? {
                walk(v, legs, out)?;
            }
        }
    }
    Ok(())
}
