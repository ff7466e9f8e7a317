//! Typed access to the JSON, `ENUM` and `VECTOR(FLOAT32)` columns (see [`ColData::Json`],
//! [`ColData::Enum`], [`ColData::Vector`]).

use rcop_datum::{JsonRef, VectorRef};

use super::{BytesVec, ColData, Elem, Scalar, VecCol};
use crate::types::EvalType;

/// Marker for the JSON eval type.
#[derive(Debug)]
pub struct JsonT;

impl Elem for JsonT {
    type R<'a> = JsonRef<'a>;
    type S<'a> = &'a BytesVec;
    const ET: EvalType = EvalType::Json;
    #[inline]
    fn slice(d: &ColData) -> Option<&BytesVec> {
        match d {
            ColData::Json(v) => Some(v),
            _ => None,
        }
    }
    #[inline]
    fn get<'a>(s: Self::S<'a>, i: usize) -> JsonRef<'a> {
        // Every stored value was validated on the way in; a slot out of range reads `null`.
        JsonRef::from_validated(s.get(i)).unwrap_or(JsonRef::NULL)
    }
    #[inline]
    fn scalar(s: &Scalar) -> Option<JsonRef<'_>> {
        match s {
            Scalar::Json(v) => Some(v.as_ref()),
            _ => None,
        }
    }
    #[inline]
    fn push(c: &mut VecCol, v: Option<JsonRef<'_>>) {
        match (&mut c.data, v) {
            (ColData::Json(d), Some(x)) => {
                d.push_json(x);
                c.valid.push(true);
            }
            _ => c.push_null(),
        }
    }
    fn to_scalar(v: JsonRef<'_>) -> Scalar {
        Scalar::Json(v.to_owned())
    }
}

/// An `ENUM` value borrowed from a column: the member index (0 for the empty value) and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnumRef<'a> {
    /// The 1-based member index; 0 is the empty string MySQL stores for invalid input.
    pub value: u64,
    /// The member's name (empty for index 0).
    pub name: &'a [u8],
}

/// Marker for the `ENUM` eval type.
#[derive(Debug)]
pub struct EnumT;

impl Elem for EnumT {
    type R<'a> = EnumRef<'a>;
    type S<'a> = &'a BytesVec;
    const ET: EvalType = EvalType::Enum;
    #[inline]
    fn slice(d: &ColData) -> Option<&BytesVec> {
        match d {
            ColData::Enum(v) => Some(v),
            _ => None,
        }
    }
    #[inline]
    fn get<'a>(s: Self::S<'a>, i: usize) -> EnumRef<'a> {
        let b = s.get(i);
        match (b.get(..8), b.get(8..)) {
            (Some(v), Some(name)) => {
                EnumRef { value: u64::from_le_bytes(v.try_into().unwrap_or_default()), name }
            }
            _ => EnumRef { value: 0, name: &[] },
        }
    }
    #[inline]
    fn scalar(s: &Scalar) -> Option<EnumRef<'_>> {
        match s {
            Scalar::Enum(value, name) => Some(EnumRef { value: *value, name }),
            _ => None,
        }
    }
    #[inline]
    fn push(c: &mut VecCol, v: Option<EnumRef<'_>>) {
        match (&mut c.data, v) {
            (ColData::Enum(d), Some(x)) => {
                d.push_enum(x.value, x.name);
                c.valid.push(true);
            }
            _ => c.push_null(),
        }
    }
    fn to_scalar(v: EnumRef<'_>) -> Scalar {
        Scalar::Enum(v.value, v.name.to_vec())
    }
}

/// Marker for the `VECTOR(FLOAT32)` eval type.
#[derive(Debug)]
pub struct VecT;

impl Elem for VecT {
    type R<'a> = VectorRef<'a>;
    type S<'a> = &'a BytesVec;
    const ET: EvalType = EvalType::VectorFloat32;
    #[inline]
    fn slice(d: &ColData) -> Option<&BytesVec> {
        match d {
            ColData::Vector(v) => Some(v),
            _ => None,
        }
    }
    #[inline]
    fn get<'a>(s: Self::S<'a>, i: usize) -> VectorRef<'a> {
        // Every stored value was validated on the way in; a slot out of range reads `[]`.
        VectorRef::decode(s.get(i)).unwrap_or(VectorRef::EMPTY)
    }
    #[inline]
    fn scalar(s: &Scalar) -> Option<VectorRef<'_>> {
        match s {
            Scalar::Vector(v) => VectorRef::decode(v).ok(),
            _ => None,
        }
    }
    #[inline]
    fn push(c: &mut VecCol, v: Option<VectorRef<'_>>) {
        match (&mut c.data, v) {
            (ColData::Vector(d), Some(x)) => {
                d.push(x.as_bytes());
                c.valid.push(true);
            }
            _ => c.push_null(),
        }
    }
    fn to_scalar(v: VectorRef<'_>) -> Scalar {
        Scalar::Vector(v.as_bytes().to_vec())
    }
}
