//! JSON: comparisons and the casts to and from JSON, as TiKV evaluates them
//! (`tidb_query_expr` `impl_cast.rs` / `impl_compare.rs` over
//! `tidb_query_datatype::codec::mysql::json`).
//!
//! Registered: `LTJson`…`NullEQJson` (106–166) and the JSON functions 5001–5029 that TiKV
//! maps or MySQL 8 defines over TiKV's typing (see [`register`]): paths in [`path`], readers
//! in [`query`], builders in [`make`], writers in [`modify`]. The casts to and from JSON are
//! in `expr/cast/json.rs`; `JsonIsNull` (3117) sits with the other `IS NULL`s in `logic`; the
//! JSON forms of `IF`/`IFNULL`/`COALESCE`/`CASE`/`IN`/`ANY_VALUE` with their kind.

use std::cmp::Ordering;

use rcop_datum::Json;

use crate::column::{Bitmap, ColData, Elem, JsonT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::compare::{CmpOp, comparison};
use crate::expr::kernel::OutElem;
use crate::expr::registry::{Args, Call, Registry};
use crate::types::EvalType;

mod args;
pub mod extra;
pub mod make;
pub mod modify;
pub mod path;
pub mod query;

impl OutElem for JsonT {
    const ET: EvalType = EvalType::Json;
    type O = Json;
    #[inline]
    fn push_out(c: &mut VecCol, v: Option<Json>) {
        JsonT::push(c, v.as_ref().map(Json::as_ref));
    }
}

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes, Int, Json as J};
    for s in (106..=166).step_by(10) {
        r.add(s, Args::same(J, 2), Int, compare_kernel);
    }

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
    // TiDB's typing for the rest.
    r.add(5018, Args::same(J, 1), Bytes, extra::json_pretty);
    r.add(5020, Args::Headed(J, Bytes), J, extra::json_search);
    r.add(5021, Args::same(J, 1), Int, extra::json_storage_size);
    r.add(5027, Args::Any(1), Int, extra::valid_others);
    r.add(5028, Args::same(J, 1), Int, extra::json_storage_free);
}

/// A result within `max_allowed_packet`, else NULL with warning 1301 naming `func` (MySQL:
/// "Result of json_binary::serialize() was larger than max_allowed_packet").
pub(crate) fn bounded(ctx: &mut EvalContext, func: &'static str, j: Json) -> Option<Json> {
    let limit = ctx.cfg.max_allowed_packet;
    if j.as_bytes().len() as u64 <= limit {
        return Some(j);
    }
    ctx.warn(&Error::PacketTooLarge { func, limit });
    None
}

/// [`bounded`] for a string result.
pub(crate) fn bounded_bytes(
    ctx: &mut EvalContext,
    func: &'static str,
    b: Vec<u8>,
) -> Option<Vec<u8>> {
    let limit = ctx.cfg.max_allowed_packet;
    if b.len() as u64 <= limit {
        return Some(b);
    }
    ctx.warn(&Error::PacketTooLarge { func, limit });
    None
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

#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;
