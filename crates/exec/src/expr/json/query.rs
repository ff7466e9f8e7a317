//! The JSON functions that read a document: `JSON_EXTRACT`, `JSON_TYPE`, `JSON_DEPTH`,
//! `JSON_KEYS`, `JSON_LENGTH`, `JSON_CONTAINS`, `JSON_CONTAINS_PATH`, `MEMBER OF`,
//! `JSON_VALID`, `JSON_QUOTE`, `JSON_UNQUOTE` (TiKV `impl_json.rs`, MySQL 8 semantics).

use std::cmp::Ordering;

use rcop_datum::{Json, JsonRef, JsonType};

use crate::column::{BytesT, IntT, JsonT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::json::args::{json, paths, row_paths};
use crate::expr::json::path::{PathExpr, children};
use crate::expr::json::{bounded, bounded_bytes};
use crate::expr::kernel::{OutElem, map1, map2};
use crate::expr::registry::Call;

/// MySQL `ER_INVALID_JSON_TEXT_IN_PARAM`.
pub const ER_INVALID_JSON_TEXT_IN_PARAM: i32 = 3141;
/// MySQL `ER_JSON_BAD_ONE_OR_ALL_ARG`.
pub const ER_JSON_BAD_ONE_OR_ALL_ARG: i32 = 3150;

/// `JSON_EXTRACT(doc, path, …)`: the one value a single path without wildcards names, else
/// an array of every value the paths name; NULL when they name nothing.
pub(super) fn extract(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let doc = json(c, 0)?;
    let ps = paths(c, 1)?;
    let mut out = VecCol::new(JsonT::ET, c.n);
    for i in 0..c.n {
        let v = match (doc.get(i), row_paths(&ps, i)?) {
            (Some(j), Some(list)) => {
                let mut found = Vec::new();
                for p in &list {
                    found.extend(p.find(j)?);
                }
                match (list.as_slice(), found.as_slice()) {
                    (_, []) => None,
                    ([p], [one]) if !p.has_wildcard() => Some(one.to_owned()),
                    // Sized before it is built: `$**` can name each value many times.
                    _ if found.iter().map(|f| f.binary_len() as u64).sum::<u64>()
                        > ctx.cfg.max_allowed_packet =>
                    {
                        let limit = ctx.cfg.max_allowed_packet;
                        ctx.warn(&Error::PacketTooLarge { func: "json_extract", limit });
                        None
                    }
                    _ => bounded(ctx, "json_extract", Json::array(&found)?),
                }
            }
            _ => None,
        };
        JsonT::push_out(&mut out, v);
    }
    Ok(out)
}

/// MySQL's `JSON_TYPE` names.
pub fn type_name(j: &JsonRef<'_>) -> &'static str {
    match j.json_type() {
        JsonType::Object => "OBJECT",
        JsonType::Array => "ARRAY",
        JsonType::Literal => match j.as_literal() {
            Some(Some(_)) => "BOOLEAN",
            _ => "NULL",
        },
        JsonType::I64 => "INTEGER",
        JsonType::U64 => "UNSIGNED INTEGER",
        JsonType::Double => "DOUBLE",
        JsonType::String => "STRING",
        JsonType::Opaque => match j.as_opaque().map(|(t, _)| t) {
            Some(0x10) => "BIT",
            Some(0xff) => "GEOMETRY",
            _ => "BLOB",
        },
        JsonType::Date => "DATE",
        JsonType::Datetime | JsonType::Timestamp => "DATETIME",
        JsonType::Time => "TIME",
    }
}

pub(super) fn json_type(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<JsonT, BytesT>(c.n, json(c, 0)?, ctx, |j, _| Ok(Some(type_name(&j).as_bytes().to_vec())))
}

/// Nesting depth: 1 for a scalar or an empty container.
pub fn depth(j: JsonRef<'_>) -> Result<i64> {
    let mut d = 0;
    for v in children(j)? {
        d = d.max(depth(v)?);
    }
    Ok(d + 1)
}

pub(super) fn json_depth(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<JsonT, IntT>(c.n, json(c, 0)?, ctx, |j, _| depth(j).map(Some))
}

/// The value `JSON_KEYS` / `JSON_LENGTH` look at: the document, or what its one path (no
/// wildcards) names. `Ok(None)`: NULL.
fn target<'a>(
    j: JsonRef<'a>,
    list: &[std::borrow::Cow<'_, PathExpr>],
) -> Result<Option<JsonRef<'a>>> {
    match list.first() {
        None => Ok(Some(j)),
        Some(p) => p.no_wildcard()?.first(j),
    }
}

pub(super) fn json_keys(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let doc = json(c, 0)?;
    let ps = paths(c, 1)?;
    let mut out = VecCol::new(JsonT::ET, c.n);
    for i in 0..c.n {
        let v = match (doc.get(i), row_paths(&ps, i)?) {
            (Some(j), Some(list)) => match target(j, &list)? {
                Some(t) if t.json_type() == JsonType::Object => {
                    let mut keys = Vec::with_capacity(t.elem_count());
                    for k in 0..t.elem_count() {
                        let s = std::str::from_utf8(t.object_key(k)?)
                            .map_err(|_| Error::invalid("JSON key is not UTF-8"))?;
                        keys.push(Json::from_string(s));
                    }
                    let refs: Vec<JsonRef<'_>> = keys.iter().map(Json::as_ref).collect();
                    Some(Json::array(&refs)?)
                }
                _ => None,
            },
            _ => None,
        };
        JsonT::push_out(&mut out, v);
    }
    Ok(out)
}

pub(super) fn json_length(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let doc = json(c, 0)?;
    let ps = paths(c, 1)?;
    let mut out = VecCol::new(IntT::ET, c.n);
    for i in 0..c.n {
        let v = match (doc.get(i), row_paths(&ps, i)?) {
            (Some(j), Some(list)) => target(j, &list)?.map(|t| match t.json_type() {
                JsonType::Object | JsonType::Array => t.elem_count() as i64,
                _ => 1,
            }),
            _ => None,
        };
        IntT::push_out(&mut out, v);
    }
    Ok(out)
}

fn equal(a: &JsonRef<'_>, b: &JsonRef<'_>) -> Result<bool> {
    Ok(a.compare(b)? == Ordering::Equal)
}

/// MySQL's containment: an object contains an object whose every member it has with a
/// containing value; an array contains an array whose every element it contains, and any
/// value one of its elements contains; scalars contain equal scalars.
pub fn contains(target: JsonRef<'_>, cand: JsonRef<'_>) -> Result<bool> {
    match (target.json_type(), cand.json_type()) {
        (JsonType::Object, JsonType::Object) => {
            for k in 0..cand.elem_count() {
                match target.object_search(cand.object_key(k)?)? {
                    Some(v) if contains(v, cand.object_val(k)?)? => {}
                    _ => return Ok(false),
                }
            }
            Ok(true)
        }
        (JsonType::Object, _) => Ok(false),
        (JsonType::Array, JsonType::Array) => {
            for e in children(cand)? {
                if !contains(target, e)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        (JsonType::Array, _) => {
            for e in children(target)? {
                if contains(e, cand)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        (_, JsonType::Object | JsonType::Array) => Ok(false),
        _ => equal(&target, &cand),
    }
}

/// `JSON_CONTAINS(target, candidate[, path])`.
pub(super) fn json_contains(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let (doc, cand) = (json(c, 0)?, json(c, 1)?);
    let ps = paths(c, 2)?;
    let mut out = VecCol::new(IntT::ET, c.n);
    for i in 0..c.n {
        let v = match (doc.get(i), cand.get(i), row_paths(&ps, i)?) {
            (Some(j), Some(x), Some(list)) => match target(j, &list)? {
                Some(t) => Some(i64::from(contains(t, x)?)),
                None => None,
            },
            _ => None,
        };
        IntT::push_out(&mut out, v);
    }
    Ok(out)
}

/// `JSON_CONTAINS_PATH(doc, 'one' | 'all', path, …)`.
pub(super) fn json_contains_path(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    if c.args.len() < 3 {
        return Err(Error::invalid("JSON_CONTAINS_PATH takes at least 3 arguments"));
    }
    let doc = json(c, 0)?;
    let mode = c.typed::<BytesT>(1)?;
    let ps = paths(c, 2)?;
    let mut out = VecCol::new(IntT::ET, c.n);
    for i in 0..c.n {
        let v = match (doc.get(i), mode.get(i)) {
            (Some(j), Some(m)) => {
                let all = if m.eq_ignore_ascii_case(b"all") {
                    true
                } else if m.eq_ignore_ascii_case(b"one") {
                    false
                } else {
                    return Err(Error::eval(
                        ER_JSON_BAD_ONE_OR_ALL_ARG,
                        "The oneOrAll argument to json_contains_path may take these values: 'one' or 'all'.",
                    ));
                };
                match row_paths(&ps, i)? {
                    None => None,
                    Some(list) => {
                        let mut hits = 0;
                        for p in &list {
                            hits += usize::from(!p.find(j)?.is_empty());
                        }
                        Some(i64::from(if all { hits == list.len() } else { hits > 0 }))
                    }
                }
            }
            _ => None,
        };
        IntT::push_out(&mut out, v);
    }
    Ok(out)
}

/// `value MEMBER OF (array)`: an element of the array equals the value (a document that is
/// not an array is compared whole).
pub(super) fn member_of(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map2::<JsonT, JsonT, IntT>(c.n, json(c, 0)?, json(c, 1)?, ctx, |v, a, _| {
        if a.json_type() != JsonType::Array {
            return Ok(Some(i64::from(equal(&v, &a)?)));
        }
        for e in children(a)? {
            if equal(&v, &e)? {
                return Ok(Some(1));
            }
        }
        Ok(Some(0))
    })
}

/// `JSON_VALID` of a JSON value: always 1.
pub(super) fn valid_json(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<JsonT, IntT>(c.n, json(c, 0)?, ctx, |_, _| Ok(Some(1)))
}

/// `JSON_VALID` of a string: whether it parses as JSON.
pub(super) fn valid_string(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<BytesT, IntT>(c.n, c.typed(0)?, ctx, |s, _| {
        let ok = std::str::from_utf8(s).ok().is_some_and(|s| Json::parse(s).is_ok());
        Ok(Some(i64::from(ok)))
    })
}

/// TiKV `quote`: the string in double quotes, escaping `"`, `\` and the control characters
/// `\a \b \f \n \r \t \v` (TiKV's set; other bytes as they are).
pub fn quote(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len().saturating_add(2));
    out.push(b'"');
    for &b in s {
        let esc = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            0x07 => b'a',
            0x08 => b'b',
            0x0c => b'f',
            b'\n' => b'n',
            b'\r' => b'r',
            b'\t' => b't',
            0x0b => b'v',
            _ => {
                out.push(b);
                continue;
            }
        };
        out.push(b'\\');
        out.push(esc);
    }
    out.push(b'"');
    out
}

pub(super) fn json_quote(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<BytesT, BytesT>(c.n, c.typed(0)?, ctx, |s, ctx| {
        Ok(bounded_bytes(ctx, "json_quote", quote(s)))
    })
}

/// TiKV `json_unquote`: a string in double quotes must be JSON text and loses its quotes
/// and escapes; anything else is returned as it is.
pub fn unquote(s: &[u8]) -> Result<Vec<u8>> {
    let text = std::str::from_utf8(s).map_err(|_| {
        Error::eval(
            ER_INVALID_JSON_TEXT_IN_PARAM,
            "Invalid JSON text in argument 1 to function json_unquote",
        )
    })?;
    if text.len() >= 2 && text.starts_with('"') && text.ends_with('"') {
        let j = Json::parse(text).map_err(|_| {
            Error::eval(
                ER_INVALID_JSON_TEXT_IN_PARAM,
                "Invalid JSON text in argument 1 to function json_unquote",
            )
        })?;
        if let Some(b) = j.as_ref().as_str_bytes() {
            return Ok(b.to_vec());
        }
    }
    Ok(s.to_vec())
}

pub(super) fn json_unquote(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<BytesT, BytesT>(c.n, c.typed(0)?, ctx, |s, _| unquote(s).map(Some))
}
