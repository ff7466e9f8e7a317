//! Response row encodings: TypeDefault datum rows and TypeChunk columns.

use rcop_datum::chunk::{ChunkColumn, mysql_type as mt};
use rcop_datum::codec;
use rcop_datum::datum::flag;
use rcop_datum::{TimeType, Tz};
use rcop_proto::tipb;

use crate::batch::Batch;
use crate::column::{ColData, Elem, EnumT, VecCol};
use crate::error::{Error, Feature, Result};
use crate::types::FieldType;

/// The rows of `batch` (logical rows, columns `offsets`) as one response chunk's bytes, in
/// TypeChunk when `chunked`, else TypeDefault. Every column listed must have been decoded.
pub(crate) fn encode_rows(
    batch: &Batch,
    offsets: &[usize],
    schema: &[FieldType],
    tz: &Tz,
    chunked: bool,
) -> Result<Vec<u8>> {
    let mut data = Vec::new();
    if chunked {
        encode_chunk(batch, offsets, schema, &mut data)?;
    } else {
        encode_default(batch, offsets, schema, tz, &mut data)?;
    }
    Ok(data)
}

/// Appends the TypeDefault rows of `batch` (logical rows, columns `offsets`) to `out`.
///
/// Every column listed must have been decoded.
pub fn encode_default(
    batch: &Batch,
    offsets: &[usize],
    schema: &[FieldType],
    tz: &Tz,
    out: &mut Vec<u8>,
) -> Result<()> {
    let cols = columns(batch, offsets, schema)?;
    for &r in &batch.logical {
        let r = r as usize;
        for (c, ft) in &cols {
            encode_datum(c, r, ft, tz, out)?;
        }
    }
    Ok(())
}

fn columns<'a>(
    batch: &'a Batch,
    offsets: &[usize],
    schema: &[FieldType],
) -> Result<Vec<(&'a VecCol, FieldType)>> {
    offsets
        .iter()
        .map(|&o| {
            let c = batch
                .decoded(o)
                .ok_or_else(|| Error::invalid(format!("output column {o} not decoded")))?;
            let ft = schema
                .get(o)
                .copied()
                .ok_or_else(|| Error::invalid(format!("output offset {o} out of range")))?;
            Ok((c, ft))
        })
        .collect()
}

/// Appends one response datum (TiKV's TypeDefault encoding).
pub fn encode_datum(
    c: &VecCol,
    r: usize,
    ft: &FieldType,
    tz: &Tz,
    out: &mut Vec<u8>,
) -> Result<()> {
    if !c.valid.get(r) {
        out.push(flag::NIL);
        return Ok(());
    }
    match &c.data {
        ColData::Int(v) => {
            let x = v.get(r).copied().unwrap_or(0);
            if ft.is_unsigned() {
                out.push(flag::UINT);
                codec::encode_u64(out, x as u64);
            } else {
                out.push(flag::INT);
                codec::encode_i64(out, x);
            }
        }
        ColData::Real(v) => {
            out.push(flag::FLOAT);
            let x = v.get(r).copied().unwrap_or(0.0);
            let x = if ft.tp == mt::FLOAT { f64::from(x as f32) } else { x };
            codec::encode_f64(out, x);
        }
        ColData::Decimal(_) | ColData::Fixed(_) => {
            let d = decimal_at(&c.data, r);
            // The value's own precision, past 65 digits for a product as TiKV writes it.
            out.push(flag::DECIMAL);
            d.write_bin_own(out);
        }
        ColData::Bytes(v) => {
            out.push(flag::COMPACT_BYTES);
            codec::encode_compact_bytes(out, v.get(r));
        }
        ColData::DateTime(v) => {
            let mut t = v.get(r).copied().unwrap_or_else(crate::column::zero_time);
            if t.time_type() == TimeType::Timestamp {
                t = t.to_utc(tz)?;
            }
            out.push(flag::UINT);
            codec::encode_u64(out, t.to_packed_u64());
        }
        ColData::Duration(v) => {
            out.push(flag::DURATION);
            codec::encode_i64(out, v.get(r).map_or(0, |d| d.nanos()));
        }
        ColData::Json(v) => {
            out.push(flag::JSON);
            out.extend_from_slice(v.get(r));
        }
        // TiKV `write_evaluable_datum_enum_uint`: the member index as a Uint datum.
        ColData::Enum(_) => {
            out.push(flag::UINT);
            codec::encode_u64(out, EnumT::get(enum_slice(&c.data), r).value);
        }
        // TiKV `write_evaluable_datum_vector_float32`: flag 20, then the binary form.
        ColData::Vector(v) => {
            out.push(flag::VECTOR_FLOAT32);
            out.extend_from_slice(v.get(r));
        }
    }
    Ok(())
}

fn enum_slice(d: &ColData) -> &crate::column::BytesVec {
    static EMPTY: crate::column::BytesVec = crate::column::BytesVec::new();
    EnumT::slice(d).unwrap_or(&EMPTY)
}

fn decimal_at(d: &ColData, r: usize) -> rcop_datum::Decimal {
    match d {
        ColData::Decimal(v) => v.get(r).copied().unwrap_or_default(),
        ColData::Fixed(f) => {
            f.m.get(r).and_then(|m| crate::fixed::from_fixed(*m, f.scale)).unwrap_or_default()
        }
        _ => rcop_datum::Decimal::zero(),
    }
}

/// Refuses output columns TypeChunk cannot carry: a `BIT` wider than 64 bits (TiKV
/// `Column::from_vector_value` stops at `unimplemented!()` for `flen > 64`), or one whose
/// display length leaves no byte range of the value (TiKV would slice out of range).
///
/// # Errors
///
/// [`Error::Unsupported`] naming the type.
pub fn check_chunk_types(offsets: &[usize], schema: &[FieldType]) -> Result<()> {
    for ft in offsets.iter().filter_map(|&o| schema.get(o)) {
        if ft.tp == mt::BIT && bit_chunk_start(ft.flen).is_none() {
            return Err(Error::unsupported(
                Feature::FieldType,
                format!("Bit (16) of flen {} in a TypeChunk response", ft.flen),
            ));
        }
    }
    Ok(())
}

/// Where the chunk bytes of a `BIT(flen)` value start in its big-endian `u64`: TiKV
/// (`chunk/column.rs`, `from_vector_value` and `append_bit_datum`) writes
/// `to_be_bytes()[(64 - flen) / 8..]`, the `(flen + 7) / 8` low bytes TiDB's
/// `NewBinaryLiteralFromUint` gives a `BIT(flen)` column. `None` where TiKV has no answer.
pub fn bit_chunk_start(flen: i32) -> Option<usize> {
    if flen > 64 {
        return None;
    }
    let start = usize::try_from((64 - i64::from(flen)) / 8).ok()?;
    (start <= 8).then_some(start)
}

/// Appends one TypeChunk block (all `offsets` columns of the logical rows) to `out`.
pub fn encode_chunk(
    batch: &Batch,
    offsets: &[usize],
    schema: &[FieldType],
    out: &mut Vec<u8>,
) -> Result<()> {
    check_chunk_types(offsets, schema)?;
    let cols = columns(batch, offsets, schema)?;
    for (c, ft) in cols {
        let mut cc = ChunkColumn::for_type(ft.tp);
        cc.reserve(batch.logical.len());
        for &r in &batch.logical {
            let r = r as usize;
            if !c.valid.get(r) {
                cc.push_null();
                continue;
            }
            match &c.data {
                ColData::Int(v) if ft.tp == mt::BIT => {
                    let start = bit_chunk_start(ft.flen).unwrap_or(8);
                    let be = (v.get(r).copied().unwrap_or(0) as u64).to_be_bytes();
                    cc.push_var(be.get(start..).unwrap_or_default())?
                }
                ColData::Int(v) => cc.push_u64(v.get(r).copied().unwrap_or(0) as u64)?,
                ColData::Real(v) => {
                    let x = v.get(r).copied().unwrap_or(0.0);
                    if ft.tp == mt::FLOAT {
                        cc.push_fixed(&(x as f32).to_le_bytes())?;
                    } else {
                        cc.push_fixed(&x.to_le_bytes())?;
                    }
                }
                ColData::Decimal(_) | ColData::Fixed(_) => {
                    cc.push_fixed(&decimal_at(&c.data, r).to_chunk_bytes())?
                }
                ColData::Bytes(v) => cc.push_var(v.get(r))?,
                ColData::DateTime(v) => cc.push_u64(v.get(r).map_or(0, |t| t.to_chunk_u64()))?,
                ColData::Duration(v) => cc.push_u64(v.get(r).map_or(0, |d| d.nanos()) as u64)?,
                // JSON: type byte and body; ENUM: u64 LE index then name (TiKV
                // `write_enum_to_chunk`), both stored that way already.
                ColData::Json(v) | ColData::Enum(v) => cc.push_var(v.get(r))?,
                // VECTOR: the binary form (TiKV `append_vector_float32`).
                ColData::Vector(v) => cc.push_var(v.get(r))?,
            }
        }
        cc.encode(out)?;
    }
    Ok(())
}

/// The number of rows a `SelectResponse` carries, read from its chunks without decoding the
/// values: `output_columns` is the DAG's number of output offsets.
///
/// # Errors
///
/// [`Error::Corrupt`] when a chunk does not parse as the response's encoding.
pub fn count_rows(response: &tipb::SelectResponse, output_columns: usize) -> Result<u64> {
    if output_columns == 0 {
        return Ok(0);
    }
    let chunked = response.encode_type() == tipb::EncodeType::TypeChunk;
    let mut rows = 0u64;
    for chunk in &response.chunks {
        let data = chunk.rows_data.as_deref().unwrap_or(&[]);
        if data.is_empty() {
            continue;
        }
        if chunked {
            // Every column of a chunk has the same length; the first one's header says it.
            let mut r = rcop_datum::Reader::new(data);
            rows += u64::from(r.read_u32_le("chunk column length")?);
        } else {
            let mut rest = data;
            let mut datums = 0u64;
            while !rest.is_empty() {
                let (_, tail) = rcop_datum::datum::split_datum(rest)?;
                rest = tail;
                datums += 1;
            }
            rows += datums / output_columns as u64;
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::Scalar;
    use crate::types::EvalType;

    #[test]
    fn reference_vectors() {
        // Row (int 5, "ab", NULL) → 03 80..05 02 04 61 62 00 (formats reference §3.1).
        let mut a = VecCol::new(EvalType::Int, 1);
        a.push_scalar(&Scalar::Int(5));
        let mut b = VecCol::new(EvalType::Bytes, 1);
        b.push_scalar(&Scalar::Bytes(b"ab".to_vec()));
        let mut c = VecCol::new(EvalType::Int, 1);
        c.push_null();
        let batch = Batch::from_cols(vec![a, b, c]);
        let schema = [FieldType::long_long(), FieldType::new(mt::VARCHAR), FieldType::long_long()];
        let mut out = Vec::new();
        encode_default(&batch, &[0, 1, 2], &schema, &Tz::utc(), &mut out).unwrap();
        assert_eq!(hex::encode(&out), "03800000000000000502046162".to_owned() + "00");

        // Int column [1, NULL, 3] → 03000000 01000000 05 01.. 00.. 03.. (§3.2).
        let mut i = VecCol::new(EvalType::Int, 3);
        i.push_scalar(&Scalar::Int(1));
        i.push_null();
        i.push_scalar(&Scalar::Int(3));
        let batch = Batch::from_cols(vec![i]);
        let mut out = Vec::new();
        encode_chunk(&batch, &[0], &[FieldType::long_long()], &mut out).unwrap();
        assert_eq!(
            hex::encode(&out),
            "030000000100000005010000000000000000000000000000000300000000000000"
        );
    }

    /// BIT in TypeChunk: the value's big-endian bytes from `(64 - flen) / 8` on, for every
    /// width TiKV answers (TiKV `chunk/column.rs`); NULL is an empty slot.
    #[test]
    fn bit_chunk_layout() {
        for (flen, x, want) in [
            (1, 1u64, "01"),
            (8, 0xAB, "ab"),
            (9, 0x1FF, "01ff"),
            (10, 0x2A5, "02a5"),
            (16, 0xBEEF, "beef"),
            (17, 0x1_0203, "010203"),
            (64, u64::MAX, "ffffffffffffffff"),
            // No display length: TiKV's slice starts at byte 8, an empty value.
            (-1, 7, ""),
        ] {
            let mut c = VecCol::new(EvalType::Int, 2);
            c.push_scalar(&Scalar::Int(x as i64));
            c.push_null();
            let ft = FieldType { flen, flag: 32, ..FieldType::new(mt::BIT) };
            let mut out = Vec::new();
            encode_chunk(&Batch::from_cols(vec![c]), &[0], &[ft], &mut out).unwrap();
            let n = want.len() / 2;
            // 2 rows, 1 NULL, bitmap 01, offsets 0 n n, then the bytes.
            let expect = format!(
                "02000000010000000100000000000000000{n:x}00000000000000{n:02x}00000000000000{want}"
            );
            assert_eq!(hex::encode(&out), expect, "flen {flen}");
        }
        for flen in [65, -8, i32::MIN, i32::MAX] {
            let ft = FieldType { flen, ..FieldType::new(mt::BIT) };
            assert!(check_chunk_types(&[0], &[ft]).is_err(), "flen {flen}");
        }
    }
}
