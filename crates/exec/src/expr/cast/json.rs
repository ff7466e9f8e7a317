//! CAST to and from JSON, as TiKV's `impl_cast.rs` (`cast_*_as_json`, `cast_json_as_*`) and
//! TiDB's `builtin_cast.go` define them over TiDB's binary JSON.
//!
//! To JSON: an integer is `true`/`false` when its field type is boolean, an unsigned or
//! signed number otherwise; a double and a decimal are doubles (TiDB's JSON has no decimal);
//! a `DATETIME`/`TIMESTAMP` keeps 6 fraction digits and a `TIME` too; a binary string is an
//! opaque value (a `BINARY(n)` zero-padded to `n`), other strings are JSON text when the
//! result type carries `PARSE_TO_JSON` and a JSON string otherwise.
//!
//! From JSON: numbers convert as numbers, strings are read as text of the target type,
//! booleans are 1 and 0, and a value with no number in it (object, array, opaque, a date for
//! an integer) is 0 after a truncation.

use rcop_datum::{Decimal, Duration, Json, JsonRef, JsonType, Res, Time, TimeType};

use crate::column::{BytesT, DecT, DurT, IntT, JsonT, RealT, TimeT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::json::bounded_bytes;
use crate::expr::kernel::{OutElem, dec_res, map1};
use crate::expr::registry::{Args, Call, Registry};
use crate::types::{EvalType, FieldType};
use rcop_datum::chunk::mysql_type as mt;

use super::{fit_decimal, num, to_string, to_time, trim_space, truncated};

/// `FieldType.flag`: the string is JSON text to parse (TiDB sets it on `CAST(s AS JSON)`).
pub const FLAG_PARSE_TO_JSON: u32 = 1 << 18;
/// `FieldType.flag`: the integer is a boolean (`TRUE`, comparisons).
pub const FLAG_IS_BOOLEAN: u32 = 1 << 19;

/// MySQL `ER_INVALID_JSON_TEXT_IN_PARAM` (what MySQL 8 answers to `CAST` of bad text).
pub const ER_INVALID_JSON_TEXT_IN_PARAM: i32 = 3141;

pub(super) fn register(r: &mut Registry) {
    use EvalType::{Bytes, DateTime, Decimal as D, Duration as Dur, Int, Json as J, Real};
    r.add(7, Args::same(Int, 1), J, int_as_json);
    r.add(16, Args::same(Real, 1), J, real_as_json);
    r.add(26, Args::same(D, 1), J, decimal_as_json);
    r.add(36, Args::same(Bytes, 1), J, string_as_json);
    r.add(46, Args::same(DateTime, 1), J, time_as_json);
    r.add(56, Args::same(Dur, 1), J, duration_as_json);
    r.add(60, Args::same(J, 1), Int, json_as_int);
    r.add(61, Args::same(J, 1), Real, json_as_real);
    r.add(62, Args::same(J, 1), Bytes, json_as_string);
    r.add(63, Args::same(J, 1), D, json_as_decimal);
    r.add(64, Args::same(J, 1), DateTime, json_as_time);
    r.add(65, Args::same(J, 1), Dur, json_as_duration);
    r.add(66, Args::same(J, 1), J, json_as_json);
}

/// TiKV `cast_int_as_json` / `cast_bool_as_json` / `cast_uint_as_json`.
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

/// TiKV `ConvertTo<Json> for Decimal`: the decimal as a double.
fn decimal_as_json(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<DecT, JsonT>(c.n, c.typed(0)?, ctx, |d, _| Ok(Some(Json::from_f64(d.as_f64()))))
}

/// TiDB `castTimeAsJSON`: a `DATETIME` or `TIMESTAMP` with 6 fraction digits, a `DATE` as it is.
fn time_as_json(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<TimeT, JsonT>(c.n, c.typed(0)?, ctx, |t, _| {
        let t = match t.time_type() {
            TimeType::Date => t,
            tp => t.with_type(tp, rcop_datum::time::MAX_FSP)?,
        };
        Ok(Some(Json::from_time(t)))
    })
}

/// TiDB `castDurationAsJSON`: the duration with 6 fraction digits.
fn duration_as_json(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<DurT, JsonT>(c.n, c.typed(0)?, ctx, |d, _| {
        Ok(Some(Json::from_duration(Duration::from_nanos(d.nanos(), rcop_datum::time::MAX_FSP)?)))
    })
}

/// Whether a string of this field type is binary (`binary` collation on a string type):
/// TiDB's `types.IsBinaryStr`.
fn is_binary_str(ft: &FieldType) -> bool {
    matches!(ft.collate, 63 | -63)
        && matches!(
            ft.tp,
            mt::VARCHAR
                | mt::VAR_STRING
                | mt::STRING
                | mt::TINY_BLOB
                | mt::MEDIUM_BLOB
                | mt::LONG_BLOB
                | mt::BLOB
        )
}

/// TiDB `castStringAsJSON`: a binary string is opaque bytes tagged with its MySQL type (a
/// `BINARY(n)` zero-padded to `n` bytes, as the column stores it); otherwise, with
/// `PARSE_TO_JSON` on the result, JSON text (invalid text is error 3141), else a string.
fn string_as_json(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let parse = c.ft.flag & FLAG_PARSE_TO_JSON != 0;
    let arg = c.arg_ft(0);
    let binary = is_binary_str(&arg);
    let pad_to = match usize::try_from(arg.flen) {
        Ok(n) if arg.tp == mt::STRING && n > 0 => n,
        _ => 0,
    };
    map1::<BytesT, JsonT>(c.n, c.typed(0)?, ctx, |v, _| {
        if binary {
            if v.len() < pad_to {
                let mut buf = v.to_vec();
                buf.resize(pad_to, 0);
                return Ok(Some(Json::from_opaque(arg.tp, &buf)));
            }
            return Ok(Some(Json::from_opaque(arg.tp, v)));
        }
        let s = std::str::from_utf8(v).map_err(|_| invalid_text("the text is not UTF-8"))?;
        if parse {
            return Json::parse(s).map(Some).map_err(|e| invalid_text(&e.to_string()));
        }
        Ok(Some(Json::from_string(s)))
    })
}

fn invalid_text(why: &str) -> Error {
    Error::eval(
        ER_INVALID_JSON_TEXT_IN_PARAM,
        format!("Invalid JSON text: \"{why}\" in argument 1 to function cast_as_json."),
    )
}

fn json_as_json(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<JsonT, JsonT>(c.n, c.typed(0)?, ctx, |j, _| Ok(Some(j.to_owned())))
}

/// TiKV `cast_json_as_bytes`: MySQL's text form, fitted to the target length.
fn json_as_string(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<JsonT, BytesT>(c.n, c.typed(0)?, ctx, |j, ctx| {
        // The text can be longer than the binary value (escapes): bounded as MySQL bounds it.
        let Some(text) = bounded_bytes(ctx, "cast_as_char", j.to_text()?.into_bytes()) else {
            return Ok(None);
        };
        to_string::fit_string(text, c.ft, ctx).map(Some)
    })
}

/// A truncation naming the JSON text (MySQL's "Truncated incorrect INTEGER value").
fn no_number(what: &'static str, j: &JsonRef<'_>, ctx: &mut EvalContext) -> Result<()> {
    let text = j.to_text().unwrap_or_default();
    ctx.truncated(truncated(what, text.as_bytes()))
}

/// The text a JSON string holds (`None` for other types).
fn str_of<'a>(j: &JsonRef<'a>) -> Option<&'a [u8]> {
    j.as_str_bytes()
}

/// TiKV `ConvertTo<i64>` / `ConvertTo<u64>` for `JsonRef` (the target's signedness from the
/// result type): booleans 1/0, `null` 0, numbers converted (a double rounded and clamped), a
/// string read as an integer, anything else 0 after a truncation.
pub fn to_int(j: JsonRef<'_>, unsigned: bool, ctx: &mut EvalContext) -> Result<i64> {
    match j.json_type() {
        JsonType::Literal => Ok(i64::from(j.as_literal() == Some(Some(true)))),
        JsonType::I64 => Ok(j.as_i64().unwrap_or(0)),
        JsonType::U64 => Ok(j.as_u64().unwrap_or(0) as i64),
        JsonType::Double => num::real_to_int(j.as_f64().unwrap_or(0.0), unsigned, ctx),
        JsonType::String => num::str_to_int(str_of(&j).unwrap_or(b""), unsigned, false, ctx),
        _ => {
            no_number("INTEGER", &j, ctx)?;
            Ok(0)
        }
    }
}

/// A date, datetime or timestamp JSON value's time, a `TIME` value's duration.
fn temporal(j: &JsonRef<'_>) -> Result<(Option<Time>, Option<Duration>)> {
    Ok(match (j.as_time(), j.as_duration()) {
        (Some(t), _) => (Some(t?), None),
        (_, Some(d)) => (None, Some(d?)),
        _ => (None, None),
    })
}

/// TiDB `ConvertJSONToFloat`: booleans 1/0, numbers as doubles, a string read as a double,
/// a date or time as its number (`YYYYMMDDhhmmss.ffffff`), objects, arrays and opaque 0.
pub fn to_real(j: JsonRef<'_>, ctx: &mut EvalContext) -> Result<f64> {
    Ok(match j.json_type() {
        JsonType::Literal => f64::from(u8::from(j.as_literal() == Some(Some(true)))),
        JsonType::I64 => j.as_i64().unwrap_or(0) as f64,
        JsonType::U64 => j.as_u64().unwrap_or(0) as f64,
        JsonType::Double => j.as_f64().unwrap_or(0.0),
        JsonType::String => num::str_to_real(str_of(&j).unwrap_or(b""), ctx)?,
        JsonType::Object | JsonType::Array | JsonType::Opaque => 0.0,
        JsonType::Date | JsonType::Datetime | JsonType::Timestamp | JsonType::Time => {
            to_decimal(j, ctx)?.as_f64()
        }
    })
}

/// TiDB `ConvertJSONToDecimal`: integers exactly, a double through its shortest text, a
/// string read as a decimal (a truncation for the rest), booleans 1/0, a date or time as
/// its number, objects, arrays and opaque 0.
pub fn to_decimal(j: JsonRef<'_>, ctx: &mut EvalContext) -> Result<Decimal> {
    Ok(match j.json_type() {
        JsonType::Literal => Decimal::from_i64(i64::from(j.as_literal() == Some(Some(true)))),
        JsonType::I64 => Decimal::from_i64(j.as_i64().unwrap_or(0)),
        JsonType::U64 => Decimal::from_u64(j.as_u64().unwrap_or(0)),
        JsonType::Double => dec_res(Decimal::from_f64(j.as_f64().unwrap_or(0.0))?)?,
        JsonType::String => {
            let s = str_of(&j).unwrap_or(b"");
            match Decimal::parse_bytes(trim_space(s)) {
                Ok(Res::Ok(d)) => d,
                Ok(Res::Truncated(d)) => {
                    ctx.truncated(truncated("DECIMAL", s))?;
                    d
                }
                Ok(Res::Overflow(d)) => {
                    ctx.overflow(Error::Overflow("DECIMAL"))?;
                    d
                }
                Err(_) => {
                    ctx.truncated(truncated("DECIMAL", s))?;
                    Decimal::zero()
                }
            }
        }
        JsonType::Object | JsonType::Array | JsonType::Opaque => Decimal::zero(),
        JsonType::Date | JsonType::Datetime | JsonType::Timestamp | JsonType::Time => {
            match temporal(&j)? {
                (Some(t), _) => to_time::time_decimal(&t)?,
                (_, Some(d)) => to_time::duration_decimal(&d)?,
                _ => Decimal::zero(),
            }
        }
    })
}

fn json_as_int(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let unsigned = c.ft.is_unsigned();
    map1::<JsonT, IntT>(c.n, c.typed(0)?, ctx, |j, ctx| to_int(j, unsigned, ctx).map(Some))
}

fn json_as_real(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<JsonT, RealT>(c.n, c.typed(0)?, ctx, |j, ctx| {
        let r = to_real(j, ctx)?;
        num::fit_real(r, c.ft, ctx).map(Some)
    })
}

fn json_as_decimal(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    map1::<JsonT, DecT>(c.n, c.typed(0)?, ctx, |j, ctx| {
        let d = to_decimal(j, ctx)?;
        fit_decimal(d, c.ft, ctx).map(Some)
    })
}

/// The unquoted text of a JSON string as UTF-8 (lossy: the bytes were validated UTF-8 when
/// the value was built).
fn unquoted(j: &JsonRef<'_>) -> String {
    String::from_utf8_lossy(str_of(j).unwrap_or(b"")).into_owned()
}

/// TiDB `castJSONAsTime`: a date or time value converted to the target type and precision
/// (a `TIME` added to today), a string parsed as a time, anything else NULL after the
/// invalid-time handling.
fn json_as_time(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let (tp, fsp) = (c.ft.time_type(), c.ft.fsp());
    let mut out = VecCol::new(EvalType::DateTime, c.n);
    let arg = c.typed::<JsonT>(0)?;
    let mut today = None;
    for i in 0..c.n {
        let v = match arg.get(i) {
            None => None,
            Some(j) => match (j.json_type(), temporal(&j)?) {
                (_, (Some(t), _)) => Some(t.with_type(tp, fsp)?),
                (_, (_, Some(d))) => {
                    let base = match today {
                        Some(t) => t,
                        None => *today.insert(Time::today(&ctx.cfg.tz)?),
                    };
                    Some(base.add_duration(&d, tp, fsp)?)
                }
                (JsonType::String, _) => to_time::parse_time(&unquoted(&j), c.ft, ctx)?,
                _ => {
                    let text = j.to_text().unwrap_or_default();
                    ctx.invalid_time(Error::IncorrectDatetime(text.chars().take(64).collect()))?;
                    None
                }
            },
        };
        TimeT::push_out(&mut out, v);
    }
    Ok(out)
}

/// TiDB `castJSONAsDuration`: a date or time value's time of day, a `TIME` rounded to the
/// target precision, a string parsed as a duration, anything else NULL after a truncation.
fn json_as_duration(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let fsp = c.ft.fsp();
    map1::<JsonT, DurT>(c.n, c.typed(0)?, ctx, |j, ctx| match (j.json_type(), temporal(&j)?) {
        (_, (Some(t), _)) => {
            let t = t.round_frac(fsp)?;
            let nanos = ((i64::from(t.hour()) * 60 + i64::from(t.minute())) * 60
                + i64::from(t.second()))
                * 1_000_000_000
                + i64::from(t.micro()) * 1_000;
            Ok(Some(Duration::from_nanos(nanos, fsp)?))
        }
        (_, (_, Some(d))) => Ok(Some(d.round_frac(fsp)?)),
        (JsonType::String, _) => to_time::parse_duration(unquoted(&j).trim(), fsp, ctx),
        _ => {
            no_number("TIME", &j, ctx)?;
            Ok(None)
        }
    })
}
