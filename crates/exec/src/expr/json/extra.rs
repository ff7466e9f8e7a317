//! The JSON functions TiDB defines beyond TiKV's older set: `JSON_SEARCH`, `JSON_PRETTY`,
//! `JSON_STORAGE_SIZE`, `JSON_STORAGE_FREE` and `JSON_VALID` of a value that is neither a
//! string nor JSON (TiDB `builtin_json.go`, MySQL 8 semantics).

use rcop_datum::{Json, JsonRef, JsonType};

use crate::column::{BytesT, IntT, JsonT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::json::args::{json, paths, row_paths};
use crate::expr::json::path::{Leg, PathExpr, children, index_of, range_elems};
use crate::expr::json::query::ER_JSON_BAD_ONE_OR_ALL_ARG;
use crate::expr::json::{bounded, bounded_bytes};
use crate::expr::kernel::{OutElem, map1};
use crate::expr::like::LikePattern;
use crate::expr::registry::Call;
use crate::expr::value::Value;

/// MySQL `ER_WRONG_ARGUMENTS`: an escape of more than one character.
pub const ER_WRONG_ARGUMENTS: i32 = 1210;

/// The collation `JSON_SEARCH` matches under: JSON strings are `utf8mb4_bin` (TiDB matches
/// bytes).
const JSON_COLLATION: i32 = -46;

/// One step of a concrete location in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step<'a> {
    Key(&'a [u8]),
    Index(usize),
}

/// Whether `key` prints bare in a path (an ECMAScript identifier, as MySQL checks it).
fn is_identifier(key: &[u8]) -> bool {
    !key.is_empty()
        && !key.first().is_some_and(u8::is_ascii_digit)
        && key.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80)
}

/// MySQL's text of a location: `$`, then `.key` (quoted when not an identifier) and `[n]`.
fn path_text(steps: &[Step<'_>]) -> Result<String> {
    let mut s = String::from("$");
    for st in steps {
        match st {
            Step::Key(k) if is_identifier(k) => {
                s.push('.');
                s.push_str(std::str::from_utf8(k).map_err(|_| Error::invalid("key not UTF-8"))?);
            }
            Step::Key(k) => {
                let k = std::str::from_utf8(k).map_err(|_| Error::invalid("key not UTF-8"))?;
                s.push('.');
                s.push_str(&Json::from_string(k).as_ref().to_text()?);
            }
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    Ok(s)
}

/// The values `legs` names under `j`, each with its location (appended to `at`).
fn locate<'a>(
    j: JsonRef<'a>,
    legs: &[Leg],
    at: &mut Vec<Step<'a>>,
    out: &mut Vec<(Vec<Step<'a>>, JsonRef<'a>)>,
) -> Result<()> {
    let Some((leg, rest)) = legs.split_first() else {
        out.push((at.clone(), j));
        return Ok(());
    };
    let is_array = j.json_type() == JsonType::Array;
    match leg {
        Leg::Key(k) => {
            if j.json_type() == JsonType::Object {
                for i in 0..j.elem_count() {
                    let key = j.object_key(i)?;
                    if key == k.as_slice() {
                        at.push(Step::Key(key));
                        locate(j.object_val(i)?, rest, at, out)?;
                        at.pop();
                    }
                }
            }
        }
        Leg::AnyKey | Leg::AnyIndex | Leg::AnyDepth => {
            if matches!(leg, Leg::AnyDepth) {
                locate(j, rest, at, out)?;
            }
            let want = match leg {
                Leg::AnyKey => j.json_type() == JsonType::Object,
                Leg::AnyIndex => is_array,
                _ => true,
            };
            if want {
                let next = if matches!(leg, Leg::AnyDepth) { legs } else { rest };
                for_children(j, at, &mut |v, at| locate(v, next, at, out))?;
            }
        }
        Leg::At(idx) => {
            if is_array {
                if let Some(p) = idx.resolve(j.elem_count()).filter(|p| *p < j.elem_count()) {
                    at.push(Step::Index(p));
                    locate(j.array_get(p)?, rest, at, out)?;
                    at.pop();
                }
            } else if let Some(v) = index_of(j, *idx)? {
                locate(v, rest, at, out)?;
            }
        }
        Leg::Range(from, to) => {
            if is_array {
                let r = crate::expr::json::path::range_of(*from, *to, j.elem_count());
                for p in r {
                    at.push(Step::Index(p));
                    locate(j.array_get(p)?, rest, at, out)?;
                    at.pop();
                }
            } else {
                for v in range_elems(j, *from, *to)? {
                    locate(v, rest, at, out)?;
                }
            }
        }
    }
    Ok(())
}

/// Calls `f` on every child of an array or object with its step pushed.
fn for_children<'a>(
    j: JsonRef<'a>,
    at: &mut Vec<Step<'a>>,
    f: &mut dyn FnMut(JsonRef<'a>, &mut Vec<Step<'a>>) -> Result<()>,
) -> Result<()> {
    match j.json_type() {
        JsonType::Array => {
            for (i, v) in children(j)?.into_iter().enumerate() {
                at.push(Step::Index(i));
                f(v, at)?;
                at.pop();
            }
        }
        JsonType::Object => {
            for i in 0..j.elem_count() {
                at.push(Step::Key(j.object_key(i)?));
                f(j.object_val(i)?, at)?;
                at.pop();
            }
        }
        _ => {}
    }
    Ok(())
}

/// Every string under `j` (itself included) that matches, in document order, as path text;
/// stops after the first when `one`.
fn search_under<'a>(
    j: JsonRef<'a>,
    pat: &LikePattern,
    one: bool,
    at: &mut Vec<Step<'a>>,
    out: &mut Vec<String>,
) -> Result<()> {
    if one && !out.is_empty() {
        return Ok(());
    }
    if let Some(s) = j.as_str_bytes() {
        if pat.matches(s) {
            let p = path_text(at)?;
            if !out.contains(&p) {
                out.push(p);
            }
        }
        return Ok(());
    }
    for_children(j, at, &mut |v, at| search_under(v, pat, one, at, out))
}

/// The escape character of argument 3: `\` when absent, NULL or empty, else its one code
/// point (more than one character is error 1210).
fn escape_at(c: &Call<'_, '_>, i: usize) -> Result<i64> {
    if c.args.len() < 4 {
        return Ok(i64::from(b'\\'));
    }
    let e = c.typed::<BytesT>(3)?;
    let Some(b) = e.get(i) else { return Ok(i64::from(b'\\')) };
    let s = std::str::from_utf8(b).map_err(|_| wrong_escape())?;
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (None, _) => Ok(i64::from(b'\\')),
        (Some(ch), None) => Ok(i64::from(u32::from(ch))),
        _ => Err(wrong_escape()),
    }
}

fn wrong_escape() -> Error {
    Error::eval(ER_WRONG_ARGUMENTS, "Incorrect arguments to ESCAPE")
}

/// `JSON_SEARCH(doc, 'one' | 'all', pattern[, escape[, path, …]])`: the location of the first
/// (`one`) or of every (`all`) string value matching the LIKE pattern, under the paths (the
/// whole document without them); one location is a JSON string, several an array of them,
/// none NULL. A NULL document, mode, pattern or path is NULL.
pub(super) fn json_search(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    if c.args.len() < 3 {
        return Err(Error::invalid("JSON_SEARCH takes at least 3 arguments"));
    }
    let doc = json(c, 0)?;
    let (mode, pattern) = (c.typed::<BytesT>(1)?, c.typed::<BytesT>(2)?);
    let ps = paths(c, 4)?;
    // A constant pattern and escape compile once.
    let konst = matches!(c.arg(2)?, Value::Scalar(_))
        && c.args.get(3).is_none_or(|a| matches!(a, Value::Scalar(_)));
    let mut cached: Option<LikePattern> = None;
    let mut out = VecCol::new(JsonT::ET, c.n);
    for i in 0..c.n {
        let (Some(j), Some(m), Some(p)) = (doc.get(i), mode.get(i), pattern.get(i)) else {
            JsonT::push_out(&mut out, None);
            continue;
        };
        let one = if m.eq_ignore_ascii_case(b"one") {
            true
        } else if m.eq_ignore_ascii_case(b"all") {
            false
        } else {
            return Err(Error::eval(
                ER_JSON_BAD_ONE_OR_ALL_ARG,
                "The oneOrAll argument to json_search may take these values: 'one' or 'all'.",
            ));
        };
        let Some(list) = row_paths(&ps, i)? else {
            JsonT::push_out(&mut out, None);
            continue;
        };
        // A constant pattern is compiled for the first row and borrowed by the others.
        let compiled;
        let pat = match &cached {
            Some(p) => p,
            None => {
                compiled = LikePattern::compile(p, escape_at(c, i)?, JSON_COLLATION)?;
                if konst { &*cached.insert(compiled) } else { &compiled }
            }
        };
        let whole = [std::borrow::Cow::Owned(PathExpr { legs: Vec::new() })];
        let list = if list.is_empty() { &whole[..] } else { &list[..] };
        let mut found = Vec::new();
        for path in list {
            let mut at = Vec::new();
            let mut roots = Vec::new();
            locate(j, &path.legs, &mut at, &mut roots)?;
            for (mut at, v) in roots {
                search_under(v, pat, one, &mut at, &mut found)?;
            }
            if one && !found.is_empty() {
                break;
            }
        }
        let v = match found.as_slice() {
            [] => None,
            [p] => Some(Json::from_string(p)),
            many => {
                let items: Vec<Json> = many.iter().map(|p| Json::from_string(p)).collect();
                let refs: Vec<JsonRef<'_>> = items.iter().map(Json::as_ref).collect();
                bounded(ctx, "json_search", Json::array(&refs)?)
            }
        };
        JsonT::push_out(&mut out, v);
    }
    Ok(out)
}

/// MySQL's `JSON_PRETTY` layout: one member or element a line, indented two spaces a level,
/// `"key": value`; empty containers as `[]` and `{}`.
pub fn pretty(j: JsonRef<'_>, level: usize, out: &mut String) -> Result<()> {
    let n = j.elem_count();
    let (open, close) = match j.json_type() {
        JsonType::Array if n > 0 => ('[', ']'),
        JsonType::Object if n > 0 => ('{', '}'),
        _ => {
            out.push_str(&j.to_text()?);
            return Ok(());
        }
    };
    out.push(open);
    for i in 0..n {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        push_indent(out, level + 1);
        let v = if open == '[' {
            j.array_get(i)?
        } else {
            let key = std::str::from_utf8(j.object_key(i)?)
                .map_err(|_| Error::invalid("JSON key is not UTF-8"))?;
            out.push_str(&Json::from_string(key).as_ref().to_text()?);
            out.push_str(": ");
            j.object_val(i)?
        };
        pretty(v, level + 1, out)?;
    }
    out.push('\n');
    push_indent(out, level);
    out.push(close);
    Ok(())
}

fn push_indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

pub(super) fn json_pretty(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<JsonT, BytesT>(c.n, json(c, 0)?, ctx, |j, ctx| {
        let mut s = String::new();
        pretty(j, 0, &mut s)?;
        Ok(bounded_bytes(ctx, "json_pretty", s.into_bytes()))
    })
}

/// TiDB `JSON_STORAGE_SIZE`: the bytes of the binary value, type byte included.
pub(super) fn json_storage_size(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<JsonT, IntT>(c.n, json(c, 0)?, ctx, |j, _| Ok(Some(j.binary_len() as i64)))
}

/// TiDB `JSON_STORAGE_FREE`: 0 (a value is never updated in place).
pub(super) fn json_storage_free(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<JsonT, IntT>(c.n, json(c, 0)?, ctx, |_, _| Ok(Some(0)))
}

/// `JSON_VALID` of a number, time or duration: 0 (only strings and JSON can be JSON), NULL
/// for NULL as MySQL.
pub(super) fn valid_others(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let a = c.arg(0)?;
    let mut out = VecCol::new(IntT::ET, c.n);
    for i in 0..c.n {
        IntT::push_out(&mut out, (!a.scalar_at(i).is_null()).then_some(0));
    }
    Ok(out)
}
