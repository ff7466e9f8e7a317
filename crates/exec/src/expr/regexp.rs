//! Regular expressions: `REGEXP`, `REGEXP_LIKE`, `REGEXP_INSTR`, `REGEXP_REPLACE`,
//! `REGEXP_SUBSTR` (and their `UTF8` signatures, which behave the same), as TiKV evaluates
//! them: with the `regex` crate, a constant pattern compiled once per call (with a size
//! limit), the text and pattern required to be UTF-8, positions counted in characters.
//!
//! Match types: `c` (case-sensitive), `i` (case-insensitive), `m` (multi-line), `n` and `s`
//! (`.` matches a newline: MySQL's `n`, TiDB's `s`), `u` (Unix line endings: the `regex`
//! crate's only line ending, so a no-op); the last of `c`/`i` wins; a `_ci` collation starts
//! as `i`; any other letter is an error.
//!
//! Where this differs from MySQL 8 (ICU), it carries TiKV's answer, which is what TiDB
//! pushes down to: no back-references or look-around (an invalid pattern here), `$` does
//! not match before a final newline, `.` excludes only `\n` (ICU also `\r`, U+2028 …),
//! case-insensitive matching uses simple case folding, and an empty pattern is an error.

use regex::{Regex, RegexBuilder};

use crate::column::{Arg, BytesT, Elem, IntT, Scalar, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::build::{Meta, Node, NodeKind};
use crate::expr::registry::{Args, Call, Registry};
use crate::types::{Collation, EvalType, FieldType};

/// MySQL's `ER_REGEXP_ERROR` (TiDB's `ErrRegexp`).
pub const ER_REGEXP_ERROR: i32 = 1139;
/// Largest compiled program a pattern may make (the `regex` crate's NFA size limit).
pub const REGEX_SIZE_LIMIT: usize = 8 << 20;
/// Largest lazy DFA cache per pattern.
pub const REGEX_DFA_SIZE_LIMIT: usize = 2 << 20;

/// Which function a signature is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Like,
    Instr,
    Replace,
    Substr,
}

impl Kind {
    fn of(sig: i32) -> Kind {
        match sig {
            4315 | 4316 => Kind::Instr,
            4317 | 4318 => Kind::Replace,
            4319 | 4320 => Kind::Substr,
            _ => Kind::Like,
        }
    }

    /// The index of the match-type argument.
    fn match_idx(self) -> usize {
        match self {
            Kind::Like => 2,
            Kind::Substr => 4,
            Kind::Instr | Kind::Replace => 5,
        }
    }
}

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes as B, Int as I};
    for s in [4311, 4312, 4313, 4314] {
        r.add(s, Args::prefix(&[B, B, B], 2), I, regexp_kernel).with_meta(like_meta);
    }
    for s in [4315, 4316] {
        r.add(s, Args::prefix(&[B, B, I, I, I, B], 2), I, regexp_kernel).with_meta(instr_meta);
    }
    for s in [4317, 4318] {
        r.add(s, Args::prefix(&[B, B, B, I, I, B], 3), B, regexp_kernel).with_meta(replace_meta);
    }
    for s in [4319, 4320] {
        r.add(s, Args::prefix(&[B, B, I, I, B], 2), B, regexp_kernel).with_meta(substr_meta);
    }
}

/// One part of a replacement string.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Repl {
    Group(usize),
    Lit(Vec<u8>),
}

/// A call's flags and, when its pattern and match type are constants, the compiled pattern
/// (`None` inside when one of them is NULL: every row is NULL).
#[derive(Debug, Clone)]
pub struct RegexpMeta {
    ci: bool,
    compiled: Option<Option<Regex>>,
    replace: Option<Vec<Repl>>,
}

fn regexp_error(msg: impl Into<String>) -> Error {
    Error::eval(ER_REGEXP_ERROR, msg)
}

/// True for the case-insensitive collations TiDB sends (new-framework ids).
fn is_ci(collate: i32) -> Result<bool> {
    if matches!(collate, -45 | -33 | -224 | -192 | -255 | -28 | -248) {
        return Ok(true);
    }
    Collation::from_id(collate).map(|_| false)
}

/// Compiles `pattern` with `match_type`'s flags.
pub fn compile(pattern: &[u8], match_type: &[u8], ci: bool) -> Result<Regex> {
    if pattern.is_empty() {
        return Err(regexp_error("Empty pattern is invalid in regexp"));
    }
    let mt = std::str::from_utf8(match_type).map_err(|_| regexp_error("Invalid match type"))?;
    let (mut i, mut m, mut s) = (ci, false, false);
    for ch in mt.chars() {
        match ch {
            'i' => i = true,
            'c' => i = false,
            'm' => m = true,
            'n' | 's' => s = true,
            'u' => {}
            _ => return Err(regexp_error(format!("Invalid match type: {ch} in regexp"))),
        }
    }
    let p = std::str::from_utf8(pattern).map_err(|_| regexp_error("Invalid UTF-8 pattern"))?;
    RegexBuilder::new(p)
        .case_insensitive(i)
        .multi_line(m)
        .dot_matches_new_line(s)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_SIZE_LIMIT)
        .build()
        .map_err(|e| regexp_error(format!("Invalid regexp pattern: {e}")))
}

/// MySQL's replacement syntax: `\N` is group N (one digit), `\x` is `x`, a final `\` is
/// dropped.
fn parse_replacement(r: &[u8]) -> Vec<Repl> {
    let mut out = Vec::new();
    let mut lit = Vec::new();
    let mut it = r.iter().copied();
    while let Some(b) = it.next() {
        if b != b'\\' {
            lit.push(b);
            continue;
        }
        match it.next() {
            None => break,
            Some(d) if d.is_ascii_digit() => {
                if !lit.is_empty() {
                    out.push(Repl::Lit(std::mem::take(&mut lit)));
                }
                out.push(Repl::Group(usize::from(d - b'0')));
            }
            Some(x) => lit.push(x),
        }
    }
    if !lit.is_empty() {
        out.push(Repl::Lit(lit));
    }
    out
}

fn const_bytes(n: Option<&Node>) -> Option<Option<&[u8]>> {
    match n.map(|n| &n.kind) {
        Some(NodeKind::Const(Scalar::Bytes(b))) => Some(Some(b)),
        Some(NodeKind::Const(Scalar::Null)) => Some(None),
        _ => None,
    }
}

fn like_meta(ft: &FieldType, children: &[Node]) -> Result<Meta> {
    regexp_meta(Kind::Like, ft, children)
}

fn instr_meta(ft: &FieldType, children: &[Node]) -> Result<Meta> {
    regexp_meta(Kind::Instr, ft, children)
}

fn replace_meta(ft: &FieldType, children: &[Node]) -> Result<Meta> {
    regexp_meta(Kind::Replace, ft, children)
}

fn substr_meta(ft: &FieldType, children: &[Node]) -> Result<Meta> {
    regexp_meta(Kind::Substr, ft, children)
}

/// Compiles a constant pattern (and match type) once, at build time: an invalid constant
/// pattern fails the request, as in TiKV.
fn regexp_meta(kind: Kind, ft: &FieldType, children: &[Node]) -> Result<Meta> {
    let ci = is_ci(ft.collate)?;
    let idx = kind.match_idx();
    let mt =
        if children.len() > idx { const_bytes(children.get(idx)) } else { Some(Some(&b""[..])) };
    let compiled = match (const_bytes(children.get(1)), mt) {
        (Some(Some(p)), Some(Some(m))) => Some(Some(compile(p, m, ci)?)),
        (Some(None), _) | (_, Some(None)) => Some(None),
        _ => None,
    };
    let replace = match kind {
        Kind::Replace => const_bytes(children.get(2)).flatten().map(parse_replacement),
        _ => None,
    };
    Ok(Meta::Regexp(Box::new(RegexpMeta { ci, compiled, replace })))
}

/// Reads optional int argument `i` at row `r`: `Some(None)` when it is NULL.
fn opt_int(args: &[Arg<'_, IntT>], i: usize, r: usize, default: i64) -> Option<i64> {
    match args.get(i) {
        None => Some(default),
        Some(a) => a.get(r),
    }
}

/// The text from character position `pos` (1-based) on, and its byte offset; a position
/// before the first character or more than one past the last is an error (MySQL 8 allows
/// the position just past the end, which TiKV rejects unless the text is empty).
fn trim_at(text: &str, pos: i64) -> Result<(usize, &str)> {
    let bad =
        || regexp_error(format!("Invalid pos: {pos} in regexp, count: {}", text.chars().count()));
    if pos < 1 {
        return Err(bad());
    }
    let skip = usize::try_from(pos - 1).map_err(|_| bad())?;
    match text.char_indices().nth(skip) {
        Some((at, _)) => Ok((at, text.get(at..).unwrap_or(""))),
        None if skip == text.chars().count() => Ok((text.len(), "")),
        None => Err(bad()),
    }
}

fn utf8(b: &[u8]) -> Result<&str> {
    std::str::from_utf8(b).map_err(|_| regexp_error("Invalid UTF-8 text in regexp"))
}

fn regexp_kernel(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let kind = Kind::of(c.func.sig);
    let Meta::Regexp(meta) = c.meta() else {
        return Err(Error::invalid("REGEXP without metadata"));
    };
    let n_args = c.args.len();
    let idx = kind.match_idx();
    // Bytes arguments: text, pattern, [replacement], match type; ints: the rest.
    let text = c.typed::<BytesT>(0)?;
    let pattern = c.typed::<BytesT>(1)?;
    let repl = if kind == Kind::Replace { Some(c.typed::<BytesT>(2)?) } else { None };
    let mt = if n_args > idx { Some(c.typed::<BytesT>(idx)?) } else { None };
    let first_int = if kind == Kind::Replace { 3 } else { 2 };
    let ints: Vec<Arg<'_, IntT>> =
        (first_int..n_args.min(idx)).map(|i| c.typed::<IntT>(i)).collect::<Result<_>>()?;
    let et = if matches!(kind, Kind::Like | Kind::Instr) { EvalType::Int } else { EvalType::Bytes };
    let mut out = VecCol::new(et, c.n);
    if matches!(meta.compiled, Some(None)) {
        out.push_nulls(c.n);
        return Ok(out);
    }
    // A non-constant pattern: keep the last compiled one (rows often repeat it).
    let mut cache: Option<(Vec<u8>, Vec<u8>, Regex)> = None;
    let const_repl = meta.replace.as_deref();
    for r in 0..c.n {
        let (Some(t), Some(p)) = (text.get(r), pattern.get(r)) else {
            out.push_null();
            continue;
        };
        let m: &[u8] = match &mt {
            None => b"",
            Some(a) => match a.get(r) {
                Some(m) => m,
                None => {
                    out.push_null();
                    continue;
                }
            },
        };
        let re: &Regex = match &meta.compiled {
            Some(Some(re)) => re,
            _ => {
                let hit = cache.as_ref().is_some_and(|(cp, cm, _)| cp == p && cm == m);
                if !hit {
                    cache = Some((p.to_vec(), m.to_vec(), compile(p, m, meta.ci)?));
                }
                match &cache {
                    Some((_, _, re)) => re,
                    None => return Err(Error::invalid("regexp cache")),
                }
            }
        };
        // The regex engine is linear in the text (times the pattern): long texts are work
        // the request's limits see.
        ctx.tick(t.len() + p.len())?;
        let t = utf8(t)?;
        match kind {
            Kind::Like => IntT::push(&mut out, Some(i64::from(re.is_match(t)))),
            Kind::Substr => {
                let (Some(pos), Some(occ)) = (opt_int(&ints, 0, r, 1), opt_int(&ints, 1, r, 1))
                else {
                    out.push_null();
                    continue;
                };
                let (_, rest) = trim_at(t, pos)?;
                let nth = usize::try_from(occ.max(1) - 1).unwrap_or(usize::MAX);
                let m = re.find_iter(rest).nth(nth);
                BytesT::push(&mut out, m.map(|m| m.as_str().as_bytes()));
            }
            Kind::Instr => {
                let (Some(pos), Some(occ), Some(ret)) =
                    (opt_int(&ints, 0, r, 1), opt_int(&ints, 1, r, 1), opt_int(&ints, 2, r, 0))
                else {
                    out.push_null();
                    continue;
                };
                let (_, rest) = trim_at(t, pos)?;
                if ret != 0 && ret != 1 {
                    return Err(regexp_error(format!("Invalid regexp return option: {ret}")));
                }
                let nth = usize::try_from(occ.max(1) - 1).unwrap_or(usize::MAX);
                let v = match re.find_iter(rest).nth(nth) {
                    Some(m) => {
                        let at = if ret == 0 { m.start() } else { m.end() };
                        rest.get(..at).map_or(0, |s| s.chars().count()) as i64 + pos
                    }
                    None => 0,
                };
                IntT::push(&mut out, Some(v));
            }
            Kind::Replace => {
                let owned;
                let parts: &[Repl] = match const_repl {
                    Some(p) => p,
                    None => match repl.as_ref().and_then(|a| a.get(r)) {
                        Some(b) => {
                            owned = parse_replacement(b);
                            &owned
                        }
                        None => {
                            out.push_null();
                            continue;
                        }
                    },
                };
                let (Some(pos), Some(occ)) = (opt_int(&ints, 0, r, 1), opt_int(&ints, 1, r, 0))
                else {
                    out.push_null();
                    continue;
                };
                let v = replace(re, t, pos, occ, parts)?;
                if v.len() as u64 > ctx.cfg.max_allowed_packet {
                    ctx.warn(&packet_overflow(ctx.cfg.max_allowed_packet));
                    out.push_null();
                    continue;
                }
                BytesT::push(&mut out, Some(&v));
            }
        }
    }
    Ok(out)
}

/// MySQL's `ER_WARN_ALLOWED_PACKET_OVERFLOWED`.
pub const ER_WARN_ALLOWED_PACKET_OVERFLOWED: i32 = 1301;

fn packet_overflow(max: u64) -> Error {
    Error::eval(
        ER_WARN_ALLOWED_PACKET_OVERFLOWED,
        format!(
            "Result of regexp_replace() was larger than max_allowed_packet ({max}) - truncated"
        ),
    )
}

/// `REGEXP_REPLACE` of one row: every match from `pos` on (`occ` 0; a negative one is 1),
/// or only the `occ`-th.
fn replace(re: &Regex, t: &str, pos: i64, occ: i64, parts: &[Repl]) -> Result<Vec<u8>> {
    let (at, rest) = trim_at(t, pos)?;
    let occ = if occ < 0 { 1 } else { occ };
    let mut out = Vec::with_capacity(t.len());
    out.extend_from_slice(t.get(..at).unwrap_or("").as_bytes());
    let mut last = 0;
    let put = |caps: &regex::Captures<'_>, out: &mut Vec<u8>| -> Result<()> {
        for p in parts {
            match p {
                Repl::Lit(l) => out.extend_from_slice(l),
                Repl::Group(g) => match caps.get(*g) {
                    Some(m) => out.extend_from_slice(m.as_str().as_bytes()),
                    None if *g < caps.len() => {}
                    None => {
                        return Err(regexp_error(format!(
                            "Substitution number is out of range: {g}"
                        )));
                    }
                },
            }
        }
        Ok(())
    };
    let each = |caps: regex::Captures<'_>, out: &mut Vec<u8>, last: &mut usize| -> Result<()> {
        let Some(m) = caps.get(0) else { return Ok(()) };
        out.extend_from_slice(rest.get(*last..m.start()).unwrap_or("").as_bytes());
        *last = m.end();
        put(&caps, out)
    };
    if occ == 0 {
        for caps in re.captures_iter(rest) {
            each(caps, &mut out, &mut last)?;
        }
    } else if let Some(caps) =
        re.captures_iter(rest).nth(usize::try_from(occ - 1).unwrap_or(usize::MAX))
    {
        each(caps, &mut out, &mut last)?;
    }
    out.extend_from_slice(rest.get(last..).unwrap_or("").as_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn match_types_and_replacement() {
        let re = |p: &str, m: &str| compile(p.as_bytes(), m.as_bytes(), false);
        assert!(re("abc", "i").unwrap().is_match("ABC"));
        assert!(!re("abc", "ic").unwrap().is_match("ABC"));
        assert!(re("abc", "ci").unwrap().is_match("ABC"));
        assert!(re("^b", "m").unwrap().is_match("a\nb"));
        assert!(re(".", "n").unwrap().is_match("\n"));
        assert!(re("a", "x").is_err());
        assert!(re("", "").is_err());
        assert!(re("(", "").is_err());
        assert!(compile(b"abc", b"", true).unwrap().is_match("ABC"));
        let r = re("(a)(b)?", "").unwrap();
        let parts = parse_replacement(b"[\\2\\1\\x]\\");
        // `\2` did not take part (empty), `\x` is a literal x, a final `\` is dropped.
        assert_eq!(replace(&r, "xaay", 1, 0, &parts).unwrap(), b"x[ax][ax]y");
        assert_eq!(replace(&r, "xaay", 1, 2, &parts).unwrap(), b"xa[ax]y");
        assert_eq!(replace(&r, "xaay", 3, 0, &parts).unwrap(), b"xa[ax]y");
        assert!(replace(&r, "xaay", 9, 0, &parts).is_err());
        assert!(replace(&r, "ab", 1, 0, &parse_replacement(b"\\3")).is_err());
        assert_eq!(trim_at("", 1).unwrap(), (0, ""));
        assert_eq!(trim_at("héllo", 3).unwrap(), (3, "llo"));
    }
}
