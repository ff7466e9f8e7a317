//! The JSON functions that build documents: `JSON_OBJECT`, `JSON_ARRAY`, `JSON_MERGE` /
//! `JSON_MERGE_PRESERVE`, `JSON_MERGE_PATCH` (TiKV `impl_json.rs`).

use rcop_datum::{Json, JsonRef, JsonType};

use crate::column::{BytesT, JsonT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::json::args::{jsons, row_jsons};
use crate::expr::json::bounded;
use crate::expr::json::path::children;
use crate::expr::kernel::OutElem;
use crate::expr::registry::Call;

/// MySQL `ER_JSON_DOCUMENT_NULL_KEY`.
pub const ER_JSON_DOCUMENT_NULL_KEY: i32 = 3158;

/// `JSON_OBJECT(key, value, …)`: a NULL value is JSON `null`, a NULL key an error; of equal
/// keys the last wins.
pub(super) fn json_object(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    if !c.args.len().is_multiple_of(2) {
        return Err(Error::invalid(
            "Incorrect parameter count in the call to native function 'JSON_OBJECT'",
        ));
    }
    let keys =
        (0..c.args.len()).step_by(2).map(|k| c.typed::<BytesT>(k)).collect::<Result<Vec<_>>>()?;
    let vals = jsons(c, 1, 2)?;
    let mut out = VecCol::new(JsonT::ET, c.n);
    for i in 0..c.n {
        let mut members = Vec::with_capacity(keys.len());
        for (k, v) in keys.iter().zip(&vals) {
            let Some(key) = k.get(i) else {
                return Err(Error::eval(
                    ER_JSON_DOCUMENT_NULL_KEY,
                    "JSON documents may not contain NULL member names.",
                ));
            };
            std::str::from_utf8(key).map_err(|_| Error::invalid("JSON key is not UTF-8"))?;
            members.push((key, v.get(i).unwrap_or(JsonRef::NULL)));
        }
        JsonT::push_out(&mut out, bounded(ctx, "json_object", Json::object(members)?));
    }
    Ok(out)
}

/// `JSON_ARRAY(value, …)`: NULL values are JSON `null`.
pub(super) fn json_array(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let vals = jsons(c, 0, 1)?;
    let mut out = VecCol::new(JsonT::ET, c.n);
    for i in 0..c.n {
        let row: Vec<JsonRef<'_>> =
            row_jsons(&vals, i).into_iter().map(|v| v.unwrap_or(JsonRef::NULL)).collect();
        JsonT::push_out(&mut out, bounded(ctx, "json_array", Json::array(&row)?));
    }
    Ok(out)
}

fn as_elems(j: JsonRef<'_>) -> Result<Vec<JsonRef<'_>>> {
    if j.json_type() == JsonType::Array { children(j) } else { Ok(vec![j]) }
}

/// MySQL's `JSON_MERGE_PRESERVE` of two values: arrays concatenate (a non-array is a
/// one-element array), objects merge with the values of common keys merged in turn.
pub fn merge_preserve(a: JsonRef<'_>, b: JsonRef<'_>) -> Result<Json> {
    if a.json_type() == JsonType::Object && b.json_type() == JsonType::Object {
        let mut merged: Vec<(Vec<u8>, Json)> = Vec::with_capacity(a.elem_count() + b.elem_count());
        for k in 0..a.elem_count() {
            let key = a.object_key(k)?;
            let v = a.object_val(k)?;
            merged.push((
                key.to_vec(),
                match b.object_search(key)? {
                    Some(w) => merge_preserve(v, w)?,
                    None => v.to_owned(),
                },
            ));
        }
        for k in 0..b.elem_count() {
            let key = b.object_key(k)?;
            if a.object_search(key)?.is_none() {
                merged.push((key.to_vec(), b.object_val(k)?.to_owned()));
            }
        }
        return Json::object(merged.iter().map(|(k, v)| (k.as_slice(), v.as_ref())).collect())
            .map_err(Error::from);
    }
    let mut elems = as_elems(a)?;
    elems.extend(as_elems(b)?);
    Ok(Json::array(&elems)?)
}

/// TiKV `json_merge`: NULL when the first argument is; a later NULL merges as JSON `null`.
pub(super) fn json_merge(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    if c.args.len() < 2 {
        return Err(Error::invalid("JSON_MERGE takes at least 2 arguments"));
    }
    let vals = jsons(c, 0, 1)?;
    let mut out = VecCol::new(JsonT::ET, c.n);
    for i in 0..c.n {
        let row = row_jsons(&vals, i);
        let v = match row.split_first() {
            Some((Some(first), rest)) => {
                let mut acc = first.to_owned();
                for v in rest {
                    acc = merge_preserve(acc.as_ref(), v.unwrap_or(JsonRef::NULL))?;
                }
                bounded(ctx, "json_merge_preserve", acc)
            }
            _ => None,
        };
        JsonT::push_out(&mut out, v);
    }
    Ok(out)
}

/// RFC 7396 merge patch of `patch` onto `target`.
pub fn merge_patch(target: JsonRef<'_>, patch: JsonRef<'_>) -> Result<Json> {
    if patch.json_type() != JsonType::Object {
        return Ok(patch.to_owned());
    }
    let mut merged: Vec<(Vec<u8>, Json)> = Vec::new();
    if target.json_type() == JsonType::Object {
        for k in 0..target.elem_count() {
            let key = target.object_key(k)?;
            if patch.object_search(key)?.is_none() {
                merged.push((key.to_vec(), target.object_val(k)?.to_owned()));
            }
        }
    }
    for k in 0..patch.elem_count() {
        let key = patch.object_key(k)?;
        let v = patch.object_val(k)?;
        if v.as_literal() == Some(None) {
            continue;
        }
        let old =
            if target.json_type() == JsonType::Object { target.object_search(key)? } else { None };
        let nv = match old {
            Some(o) => merge_patch(o, v)?,
            None => merge_patch(Json::object(Vec::new())?.as_ref(), v)?,
        };
        merged.push((key.to_vec(), nv));
    }
    Ok(Json::object(merged.iter().map(|(k, v)| (k.as_slice(), v.as_ref())).collect())?)
}

/// `JSON_MERGE_PATCH(doc, patch, …)`, folded left. A NULL makes the result NULL until a
/// later patch that is not an object replaces it (MySQL 8).
pub(super) fn json_merge_patch(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    if c.args.len() < 2 {
        return Err(Error::invalid("JSON_MERGE_PATCH takes at least 2 arguments"));
    }
    let vals = jsons(c, 0, 1)?;
    let mut out = VecCol::new(JsonT::ET, c.n);
    for i in 0..c.n {
        let row = row_jsons(&vals, i);
        let mut acc: Option<Json> = row.first().copied().flatten().map(|j| j.to_owned());
        for p in row.iter().skip(1) {
            acc = match (acc, p) {
                (_, None) => None,
                (_, Some(p)) if p.json_type() != JsonType::Object => Some(p.to_owned()),
                (None, Some(_)) => None,
                (Some(a), Some(p)) => Some(merge_patch(a.as_ref(), *p)?),
            };
        }
        JsonT::push_out(&mut out, acc.and_then(|j| bounded(ctx, "json_merge_patch", j)));
    }
    Ok(out)
}
