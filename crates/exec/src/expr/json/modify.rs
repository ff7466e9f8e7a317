//! The JSON functions that change a document at paths: `JSON_SET`, `JSON_INSERT`,
//! `JSON_REPLACE`, `JSON_REMOVE`, `JSON_ARRAY_APPEND`, `JSON_ARRAY_INSERT` (TiKV
//! `impl_json.rs`, MySQL 8 semantics). Paths may not hold wildcards. A change rebuilds the
//! containers along its path; a path that names nothing leaves the document as it is.

use rcop_datum::{Json, JsonRef, JsonType};

use crate::column::{JsonT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::json::args::{PathArg, json, paths, row_paths};
use crate::expr::json::bounded;
use crate::expr::json::path::{Index, Leg, PathExpr, children};
use crate::expr::kernel::OutElem;
use crate::expr::registry::Call;

/// MySQL `ER_JSON_VACUOUS_PATH`: `JSON_REMOVE` of `$`.
pub const ER_JSON_VACUOUS_PATH: i32 = 3153;
/// MySQL `ER_INVALID_JSON_PATH_ARRAY_CELL`: `JSON_ARRAY_INSERT` at a path that is not an
/// array element.
pub const ER_INVALID_JSON_PATH_ARRAY_CELL: i32 = 3165;

/// Which of set / insert / replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Replace what exists, add what does not.
    Set,
    /// Only add.
    Insert,
    /// Only replace.
    Replace,
}

/// Applies `f` to the value `legs` names in `j` and rebuilds `j` around its answer;
/// `Ok(None)`: nothing changed.
fn update_at(
    j: JsonRef<'_>,
    legs: &[Leg],
    f: &mut dyn FnMut(JsonRef<'_>) -> Result<Option<Json>>,
) -> Result<Option<Json>> {
    let Some((leg, rest)) = legs.split_first() else {
        return f(j);
    };
    match leg {
        Leg::Key(k) if j.json_type() == JsonType::Object => {
            let Some(child) = j.object_search(k)? else { return Ok(None) };
            match update_at(child, rest, f)? {
                Some(nv) => Ok(Some(with_member(j, k, Some(nv.as_ref()))?)),
                None => Ok(None),
            }
        }
        Leg::At(idx) if j.json_type() == JsonType::Array => {
            let Some(pos) = idx.resolve(j.elem_count()).filter(|p| *p < j.elem_count()) else {
                return Ok(None);
            };
            match update_at(j.array_get(pos)?, rest, f)? {
                Some(nv) => {
                    let mut elems = children(j)?;
                    if let Some(slot) = elems.get_mut(pos) {
                        *slot = nv.as_ref();
                    }
                    Ok(Some(Json::array(&elems)?))
                }
                None => Ok(None),
            }
        }
        // A value that is not an array is its own element 0.
        Leg::At(idx) if idx.resolve(1) == Some(0) => update_at(j, rest, f),
        _ => Ok(None),
    }
}

/// `j` (an object) with `key` set to `v`, or removed when `v` is `None`.
fn with_member(j: JsonRef<'_>, key: &[u8], v: Option<JsonRef<'_>>) -> Result<Json> {
    let mut members = Vec::with_capacity(j.elem_count() + 1);
    for k in 0..j.elem_count() {
        let name = j.object_key(k)?;
        if name != key {
            members.push((name, j.object_val(k)?));
        }
    }
    if let Some(v) = v {
        members.push((key, v));
    }
    Ok(Json::object(members)?)
}

/// Sets, inserts or replaces the value `path` names in `j` with `v`.
pub fn modify(j: JsonRef<'_>, path: &PathExpr, v: JsonRef<'_>, mode: Mode) -> Result<Json> {
    let legs = &path.no_wildcard()?.legs;
    let Some((last, parent)) = legs.split_last() else {
        return Ok(if mode == Mode::Insert { j.to_owned() } else { v.to_owned() });
    };
    let mut at_parent = |p: JsonRef<'_>| -> Result<Option<Json>> {
        match last {
            Leg::Key(k) if p.json_type() == JsonType::Object => {
                let exists = p.object_search(k)?.is_some();
                if (exists && mode != Mode::Insert) || (!exists && mode != Mode::Replace) {
                    Ok(Some(with_member(p, k, Some(v))?))
                } else {
                    Ok(None)
                }
            }
            Leg::At(idx) => {
                let is_array = p.json_type() == JsonType::Array;
                let len = if is_array { p.elem_count() } else { 1 };
                match idx.resolve(len) {
                    Some(pos) if pos < len => {
                        if mode == Mode::Insert {
                            return Ok(None);
                        }
                        if !is_array {
                            return Ok(Some(v.to_owned()));
                        }
                        let mut elems = children(p)?;
                        if let Some(slot) = elems.get_mut(pos) {
                            *slot = v;
                        }
                        Ok(Some(Json::array(&elems)?))
                    }
                    Some(_) if mode != Mode::Replace => {
                        let mut elems = if is_array { children(p)? } else { vec![p] };
                        elems.push(v);
                        Ok(Some(Json::array(&elems)?))
                    }
                    _ => Ok(None),
                }
            }
            _ => Ok(None),
        }
    };
    Ok(update_at(j, parent, &mut at_parent)?.unwrap_or_else(|| j.to_owned()))
}

/// Removes the value `path` names in `j`.
pub fn remove(j: JsonRef<'_>, path: &PathExpr) -> Result<Json> {
    let legs = &path.no_wildcard()?.legs;
    let Some((last, parent)) = legs.split_last() else {
        return Err(Error::eval(
            ER_JSON_VACUOUS_PATH,
            "The path expression '$' is not allowed in this context.",
        ));
    };
    let mut at_parent = |p: JsonRef<'_>| -> Result<Option<Json>> {
        match last {
            Leg::Key(k) if p.json_type() == JsonType::Object => {
                if p.object_search(k)?.is_none() {
                    return Ok(None);
                }
                Ok(Some(with_member(p, k, None)?))
            }
            Leg::At(idx) if p.json_type() == JsonType::Array => {
                match idx.resolve(p.elem_count()).filter(|x| *x < p.elem_count()) {
                    Some(pos) => {
                        let mut elems = children(p)?;
                        elems.remove(pos);
                        Ok(Some(Json::array(&elems)?))
                    }
                    None => Ok(None),
                }
            }
            _ => Ok(None),
        }
    };
    Ok(update_at(j, parent, &mut at_parent)?.unwrap_or_else(|| j.to_owned()))
}

/// Appends `v` to the array `path` names (a value that is not an array becomes one).
pub fn array_append(j: JsonRef<'_>, path: &PathExpr, v: JsonRef<'_>) -> Result<Json> {
    let legs = &path.no_wildcard()?.legs;
    let mut f = |t: JsonRef<'_>| -> Result<Option<Json>> {
        let mut elems = if t.json_type() == JsonType::Array { children(t)? } else { vec![t] };
        elems.push(v);
        Ok(Some(Json::array(&elems)?))
    };
    Ok(update_at(j, legs, &mut f)?.unwrap_or_else(|| j.to_owned()))
}

/// Inserts `v` into an array before the element `path` names (at the end past it).
pub fn array_insert(j: JsonRef<'_>, path: &PathExpr, v: JsonRef<'_>) -> Result<Json> {
    let legs = &path.no_wildcard()?.legs;
    let Some((Leg::At(idx), parent)) = legs.split_last() else {
        return Err(Error::eval(
            ER_INVALID_JSON_PATH_ARRAY_CELL,
            "A path expression is not a path to a cell in an array.",
        ));
    };
    let idx: Index = *idx;
    let mut f = |p: JsonRef<'_>| -> Result<Option<Json>> {
        if p.json_type() != JsonType::Array {
            return Ok(None);
        }
        let mut elems = children(p)?;
        let pos = idx.resolve(elems.len()).unwrap_or(0).min(elems.len());
        elems.insert(pos, v);
        Ok(Some(Json::array(&elems)?))
    };
    Ok(update_at(j, parent, &mut f)?.unwrap_or_else(|| j.to_owned()))
}

/// The (path, value) pairs of a call from argument 1 on.
fn pairs<'c>(c: &Call<'c, '_>) -> Result<(Vec<PathArg<'c>>, Vec<crate::column::Arg<'c, JsonT>>)> {
    if c.args.len() < 3 || c.args.len().is_multiple_of(2) {
        return Err(Error::invalid(
            "a JSON modify function takes a document and (path, value) pairs",
        ));
    }
    let ps = (1..c.args.len()).step_by(2).map(|k| PathArg::new(c, k)).collect::<Result<_>>()?;
    let vs = (2..c.args.len()).step_by(2).map(|k| c.typed::<JsonT>(k)).collect::<Result<_>>()?;
    Ok((ps, vs))
}

/// `JSON_SET` / `JSON_INSERT` / `JSON_REPLACE` / `JSON_ARRAY_APPEND` / `JSON_ARRAY_INSERT`:
/// the pairs applied in order. A NULL path makes the result NULL; a NULL value is JSON
/// `null`. `null_doc_is_null`: a NULL document gives NULL (TiKV's set/insert/replace treat
/// it as JSON `null` instead).
fn pairwise(
    c: &Call<'_, '_>,
    ctx: &mut EvalContext,
    func: &'static str,
    null_doc_is_null: bool,
    op: &dyn Fn(JsonRef<'_>, &PathExpr, JsonRef<'_>) -> Result<Json>,
) -> Result<VecCol> {
    let doc = json(c, 0)?;
    let (ps, vs) = pairs(c)?;
    let mut out = VecCol::new(JsonT::ET, c.n);
    'rows: for i in 0..c.n {
        let mut acc = match doc.get(i) {
            Some(j) => j.to_owned(),
            None if null_doc_is_null => {
                JsonT::push_out(&mut out, None);
                continue;
            }
            None => Json::null(),
        };
        for (p, v) in ps.iter().zip(&vs) {
            let Some(path) = p.get(i)? else {
                JsonT::push_out(&mut out, None);
                continue 'rows;
            };
            acc = op(acc.as_ref(), &path, v.get(i).unwrap_or(JsonRef::NULL))?;
        }
        JsonT::push_out(&mut out, bounded(ctx, func, acc));
    }
    Ok(out)
}

pub(super) fn json_set(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    pairwise(c, ctx, "json_set", false, &|j, p, v| modify(j, p, v, Mode::Set))
}

pub(super) fn json_insert(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    pairwise(c, ctx, "json_insert", false, &|j, p, v| modify(j, p, v, Mode::Insert))
}

pub(super) fn json_replace(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    pairwise(c, ctx, "json_replace", false, &|j, p, v| modify(j, p, v, Mode::Replace))
}

pub(super) fn json_array_append(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    pairwise(c, ctx, "json_array_append", true, &array_append)
}

pub(super) fn json_array_insert(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    pairwise(c, ctx, "json_array_insert", true, &array_insert)
}

/// `JSON_REMOVE(doc, path, …)`: NULL when the document or a path is.
pub(super) fn json_remove(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let doc = json(c, 0)?;
    let ps = paths(c, 1)?;
    let mut out = VecCol::new(JsonT::ET, c.n);
    for i in 0..c.n {
        let v = match (doc.get(i), row_paths(&ps, i)?) {
            (Some(j), Some(list)) => {
                let mut acc = j.to_owned();
                for p in &list {
                    acc = remove(acc.as_ref(), p)?;
                }
                Some(acc)
            }
            _ => None,
        };
        JsonT::push_out(&mut out, v);
    }
    Ok(out)
}
