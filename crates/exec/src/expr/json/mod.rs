//! JSON: comparisons and the casts to and from JSON, as TiKV evaluates them
//! (`tidb_query_expr` `impl_cast.rs` / `impl_compare.rs` over
//! `tidb_query_datatype::codec::mysql::json`).
//!
//! Registered: `LTJson`…`NullEQJson` (106–166), `CastIntAsJson` (7), `CastRealAsJson` (16),
//! `CastStringAsJson` (36), `CastJsonAsString` (62), `CastJsonAsJson` (66), and the JSON
//! functions 5001–5029 that TiKV maps or MySQL 8 defines over TiKV's typing (see
//! [`register`]): paths in [`path`], readers in [`query`], builders in [`make`], writers in
//! [`modify`]. `JsonIsNull` (3117) sits with the other `IS NULL`s in `logic`.

use std::cmp::Ordering;

use rcop_datum::Json;

use crate::column::{Bitmap, BytesT, ColData, Elem, IntT, JsonT, RealT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::compare::{CmpOp, comparison};
use crate::expr::kernel::{OutElem, map1};
use crate::expr::registry::{Args, Call, Registry};
use crate::types::{EvalType, FieldType};

mod args;
pub mod make;
pub mod modify;
pub mod path;
pub mod query;

/// `FieldType.flag`: the string is JSON text to parse (TiDB sets it on `CAST(s AS JSON)`).
pub const FLAG_PARSE_TO_JSON: u32 = 1 << 18;
/// `FieldType.flag`: the integer is a boolean (`TRUE`, comparisons).
pub const FLAG_IS_BOOLEAN: u32 = 1 << 19;

impl OutElem for JsonT {
    const ET: EvalType = EvalType::Json;
    type O = Json;
    #[inline]
    fn push_out(c: &mut VecCol, v: Option<Json>) {
        JsonT::push(c, v.as_ref().map(Json::as_ref));
    }
}

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes, Int, Json as J, Real};
    for s in (106..=166).step_by(10) {
        r.add(s, Args::same(J, 2), Int, compare_kernel);
    }
    r.add(7, Args::same(Int, 1), J, int_as_json);
    r.add(16, Args::same(Real, 1), J, real_as_json);
    r.add(36, Args::same(Bytes, 1), J, string_as_json);
    r.add(62, Args::same(J, 1), Bytes, json_as_string);
    r.add(66, Args::same(J, 1), J, json_as_json);

    // TiKV's typing: paths and JSON_OBJECT keys are strings, values JSON.
    r.add(5001, Args::Headed(J, Bytes), J, query::extract);
    r.add(5002, Args::same(Bytes, 1), Bytes, query::json_unquote);
    r.add(5003, Args::same(J, 1), Bytes, query::json_type);
    r.add(5004, Args::Pairs(Some(J), Bytes, J), J, modify::json_set);
    r.add(5005, Args::Pairs(Some(J), Bytes, J), J, modify::json_insert);
    r.add(5006, Args::Pairs(Some(J), Bytes, J), J, modify::json_replace);
    r.add(5007, Args::Headed(J, Bytes), J, modify::json_remove);
    r.add(5008, Args::Variadic(J), J, make::json_merge);
    r.add(5009, Args::Pairs(None, Bytes, J), J, make::json_object);
    r.add(5010, Args::Variadic(J), J, make::json_array);
    r.add(5011, Args::same(J, 1), Int, query::valid_json);
    r.add(5012, Args::prefix(&[J, J, Bytes], 2), Int, query::json_contains);
    r.add(5013, Args::Pairs(Some(J), Bytes, J), J, modify::json_array_append);
    r.add(5014, Args::Pairs(Some(J), Bytes, J), J, modify::json_array_insert);
    r.add(5015, Args::Variadic(J), J, make::json_merge_patch);
    r.add(5016, Args::Variadic(J), J, make::json_merge);
    r.add(5017, Args::Headed(J, Bytes), Int, query::json_contains_path);
    r.add(5019, Args::same(Bytes, 1), Bytes, query::json_quote);
    r.add(5022, Args::same(J, 1), Int, query::json_depth);
    r.add(5023, Args::same(J, 1), J, query::json_keys);
    r.add(5024, Args::prefix(&[J, Bytes], 1), Int, query::json_length);
    r.add(5025, Args::fixed(&[J, Bytes]), J, query::json_keys);
    r.add(5026, Args::same(Bytes, 1), Int, query::valid_string);
    r.add(5029, Args::same(J, 2), Int, query::member_of);
}

/// Compares two JSON columns. Unlike the other types the order can fail (a NaN double, bad
/// time bits), so every pair is compared up front and the first failure is the error.
fn compare_kernel(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    // The operator is the decade; `comparison` knows the per-type order without JSON (6th).
    let Some((op, _)) = comparison(c.func.sig - 6) else {
        return Err(Error::invalid("not a comparison"));
    };
    let (x, y) = (c.arg(0)?.materialize(), c.arg(1)?.materialize());
    let (a, b) = (x.arg::<JsonT>()?, y.arg::<JsonT>()?);
    let test = op.ordering_test();
    let mut data = Vec::with_capacity(c.n);
    let mut valid = Bitmap::new();
    for i in 0..c.n {
        let (v, ok) = match (a.get(i), b.get(i)) {
            (Some(p), Some(q)) => {
                let o = p.compare(&q)?;
                (i64::from(if op == CmpOp::NullEq { o == Ordering::Equal } else { test(o) }), true)
            }
            (None, None) if op == CmpOp::NullEq => (1, true),
            _ if op == CmpOp::NullEq => (0, true),
            _ => (0, false),
        };
        data.push(v);
        valid.push(ok);
    }
    Ok(VecCol { data: ColData::Int(data), valid })
}

/// TiKV `cast_int_as_json`: a boolean-flagged argument becomes `true`/`false`, an unsigned
/// one a `U64`, others an `I64`.
fn int_as_json(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let ft = c.arg_ft(0);
    let boolean = ft.flag & FLAG_IS_BOOLEAN != 0;
    let unsigned = ft.is_unsigned();
    map1::<IntT, JsonT>(c.n, c.typed(0)?, ctx, |v, _| {
        Ok(Some(if boolean {
            Json::from_bool(v != 0)
        } else if unsigned {
            Json::from_u64(v as u64)
        } else {
            Json::from_i64(v)
        }))
    })
}

fn real_as_json(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<RealT, JsonT>(c.n, c.typed(0)?, ctx, |v, _| Ok(Some(Json::from_f64(v))))
}

/// TiKV `cast_string_as_json`: with `PARSE_TO_JSON` on the result type the string is JSON
/// text; otherwise a binary-collated string becomes an opaque value tagged with the argument's
/// MySQL type and any other string a JSON string.
fn string_as_json(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let parse = c.ft.flag & FLAG_PARSE_TO_JSON != 0;
    let arg: FieldType = c.arg_ft(0);
    let binary = arg.collate == 63 || arg.collate == -63;
    map1::<BytesT, JsonT>(c.n, c.typed(0)?, ctx, |v, _| {
        if !parse && binary {
            return Ok(Some(Json::from_opaque(arg.tp, v)));
        }
        let s = std::str::from_utf8(v)
            .map_err(|_| Error::invalid("CAST AS JSON of a string that is not UTF-8"))?;
        Ok(Some(if parse { Json::parse(s)? } else { Json::from_string(s) }))
    })
}

/// TiKV `cast_json_as_bytes`: MySQL's text form.
fn json_as_string(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<JsonT, BytesT>(c.n, c.typed(0)?, ctx, |j, _| Ok(Some(j.to_text()?.into_bytes())))
}

fn json_as_json(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<JsonT, JsonT>(c.n, c.typed(0)?, ctx, |j, _| Ok(Some(j.to_owned())))
}

#[cfg(test)]
mod tests;
