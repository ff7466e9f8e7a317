//! Field types as the engine uses them: eval types, collations, time and decimal details.

use rcop_datum::TimeType;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::row::ValueKind;
use rcop_proto::tipb;

pub use crate::collation::{Collation, collation_name};
use crate::error::{Error, Feature, Result};

/// `FieldType.flag` bit: NOT NULL.
pub const FLAG_NOT_NULL: u32 = 1;
/// `FieldType.flag` bit: UNSIGNED.
pub const FLAG_UNSIGNED: u32 = 32;

/// The in-memory representation an expression value has, by field type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EvalType {
    /// Signed or unsigned 64-bit integers (the UNSIGNED flag tells which).
    Int,
    /// `f64`.
    Real,
    /// [`rcop_datum::Decimal`].
    Decimal,
    /// Byte strings.
    Bytes,
    /// [`rcop_datum::Time`]: DATE, DATETIME and TIMESTAMP (timestamps in the session zone).
    DateTime,
    /// [`rcop_datum::Duration`].
    Duration,
    /// Binary JSON ([`rcop_datum::Json`]).
    Json,
    /// `ENUM`: the 1-based index of the member (0 for the empty value) and its name.
    Enum,
    /// `VECTOR(FLOAT32)` ([`rcop_datum::VectorRef`]), TiKV ≥ v8.4.
    VectorFloat32,
}

/// The parts of a tipb `FieldType` (or `ColumnInfo`) the engine looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldType {
    /// MySQL type code.
    pub tp: u8,
    /// Flag bits (`FLAG_*`).
    pub flag: u32,
    /// Display length.
    pub flen: i32,
    /// Fraction digits (decimal) or fsp (time, duration); -1 when unspecified.
    pub decimal: i32,
    /// Collation id.
    pub collate: i32,
    /// Character set (tipb `FieldType.charset`; a `ColumnInfo` has none).
    pub charset: Charset,
}

/// The character set a field type names, where the engine has rules of its own for it (TiKV
/// picks the case mapping of `UPPER` / `LOWER` by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Charset {
    /// None named (an empty or absent `charset`).
    #[default]
    Unspecified,
    /// `utf8mb4` or `utf8`.
    Utf8Mb4,
    /// `gbk`.
    Gbk,
    /// `gb18030`.
    Gb18030,
    /// Any other (`binary`, `latin1`, `ascii`, ...).
    Other,
}

impl Charset {
    /// The charset named `name` (TiDB writes the lower-case names).
    pub fn from_name(name: &str) -> Charset {
        match name {
            "" => Charset::Unspecified,
            "utf8mb4" | "utf8" => Charset::Utf8Mb4,
            "gbk" => Charset::Gbk,
            "gb18030" => Charset::Gb18030,
            _ => Charset::Other,
        }
    }
}

impl FieldType {
    /// A field type of the given MySQL type with no flags.
    pub const fn new(tp: u8) -> FieldType {
        FieldType { tp, flag: 0, flen: -1, decimal: -1, collate: 63, charset: Charset::Unspecified }
    }

    /// `BIGINT` (signed).
    pub const fn long_long() -> FieldType {
        FieldType::new(mt::LONG_LONG)
    }

    /// Reads a tipb `FieldType`; a missing type is `Unspecified` (0), a code outside a byte
    /// becomes `Geometry` (0xFF), which the engine rejects as unsupported.
    pub fn from_proto(ft: Option<&tipb::FieldType>) -> FieldType {
        match ft {
            None => FieldType::new(mt::UNSPECIFIED),
            Some(ft) => FieldType {
                tp: type_code(ft.tp.unwrap_or(0)),
                flag: ft.flag.unwrap_or(0),
                flen: ft.flen.unwrap_or(-1),
                decimal: ft.decimal.unwrap_or(-1),
                collate: ft.collate.unwrap_or(63),
                charset: Charset::from_name(ft.charset.as_deref().unwrap_or_default()),
            },
        }
    }

    /// Reads the type of a tipb `ColumnInfo`.
    pub fn from_column(c: &tipb::ColumnInfo) -> FieldType {
        FieldType {
            tp: type_code(c.tp.unwrap_or(0)),
            flag: c.flag.unwrap_or(0) as u32,
            flen: c.column_len.unwrap_or(-1),
            decimal: c.decimal.unwrap_or(-1),
            collate: c.collation.unwrap_or(63),
            charset: Charset::Unspecified,
        }
    }

    /// True when the UNSIGNED flag is set.
    #[inline]
    pub fn is_unsigned(&self) -> bool {
        self.flag & FLAG_UNSIGNED != 0
    }

    /// True when the NOT NULL flag is set.
    #[inline]
    pub fn is_not_null(&self) -> bool {
        self.flag & FLAG_NOT_NULL != 0
    }

    /// The eval type, or an error naming the unsupported type.
    pub fn eval_type(&self) -> Result<EvalType> {
        Ok(match self.tp {
            // TiKV evaluates BIT as an integer (`EvalType::try_from(FieldTypeTp)`).
            mt::TINY
            | mt::SHORT
            | mt::INT24
            | mt::LONG
            | mt::LONG_LONG
            | mt::YEAR
            | mt::BIT => EvalType::Int,
            mt::FLOAT | mt::DOUBLE => EvalType::Real,
            mt::NEW_DECIMAL => EvalType::Decimal,
            mt::VARCHAR
            | mt::VAR_STRING
            | mt::STRING
            | mt::TINY_BLOB
            | mt::MEDIUM_BLOB
            | mt::LONG_BLOB
            | mt::BLOB
            // As TiKV: the type of a bare NULL evaluates as a string.
            | mt::NULL => EvalType::Bytes,
            mt::DATE | mt::DATETIME | mt::TIMESTAMP | mt::NEW_DATE => EvalType::DateTime,
            mt::DURATION => EvalType::Duration,
            mt::JSON => EvalType::Json,
            mt::ENUM => EvalType::Enum,
            mt::TIDB_VECTOR_FLOAT32 => EvalType::VectorFloat32,
            // SET: TiKV refuses it too — `EvalType::try_from` (tidb_query_datatype
            // `def/eval_type.rs`) sends Set to its catch-all `UnsupportedType` arm (its test
            // table says `(Set, None)`), so TiKV's `check_supported` refuses any SET column
            // or expression.
            tp => return Err(Error::unsupported(Feature::FieldType, type_name(tp))),
        })
    }

    /// How a value of this type is stored in row format v2.
    pub fn value_kind(&self) -> Result<ValueKind> {
        Ok(match self.eval_type()? {
            // BIT is stored unsigned whatever its flag says (TiDB `fieldType2Flag`).
            EvalType::Int if self.is_unsigned() || self.tp == mt::BIT => ValueKind::Uint,
            EvalType::Int => ValueKind::Int,
            EvalType::Real => ValueKind::Float,
            EvalType::Decimal => ValueKind::Decimal,
            EvalType::Bytes => ValueKind::Bytes,
            EvalType::DateTime => ValueKind::Time,
            EvalType::Duration => ValueKind::Duration,
            EvalType::Json => ValueKind::Json,
            EvalType::Enum => ValueKind::Uint,
            // Stored as its binary form, like a byte string.
            EvalType::VectorFloat32 => ValueKind::Bytes,
        })
    }

    /// The time type of a DATE/DATETIME/TIMESTAMP field.
    pub fn time_type(&self) -> TimeType {
        match self.tp {
            mt::DATE | mt::NEW_DATE => TimeType::Date,
            mt::TIMESTAMP => TimeType::Timestamp,
            _ => TimeType::DateTime,
        }
    }

    /// The fsp of a time or duration field (0 when unspecified, at most 6).
    pub fn fsp(&self) -> u8 {
        if self.tp == mt::DATE || self.tp == mt::NEW_DATE {
            return 0;
        }
        self.decimal.clamp(0, 6) as u8
    }

    /// The collation, or an error naming an unsupported one.
    pub fn collation(&self) -> Result<Collation> {
        Collation::from_id(self.collate)
    }
}

/// A readable name of a MySQL type code for error messages.
pub fn type_name(tp: u8) -> String {
    let name = match tp {
        mt::TINY => "Tiny",
        mt::SHORT => "Short",
        mt::LONG => "Long",
        mt::FLOAT => "Float",
        mt::DOUBLE => "Double",
        mt::NULL => "Null",
        mt::TIMESTAMP => "Timestamp",
        mt::LONG_LONG => "LongLong",
        mt::INT24 => "Int24",
        mt::DATE => "Date",
        mt::DURATION => "Duration",
        mt::DATETIME => "Datetime",
        mt::YEAR => "Year",
        mt::NEW_DATE => "NewDate",
        mt::VARCHAR => "Varchar",
        mt::NEW_DECIMAL => "NewDecimal",
        mt::TINY_BLOB => "TinyBlob",
        mt::MEDIUM_BLOB => "MediumBlob",
        mt::LONG_BLOB => "LongBlob",
        mt::BLOB => "Blob",
        mt::VAR_STRING => "VarString",
        mt::STRING => "String",
        mt::BIT => "Bit",
        mt::JSON => "Json",
        mt::ENUM => "Enum",
        mt::SET => "Set",
        mt::GEOMETRY => "Geometry",
        mt::TIDB_VECTOR_FLOAT32 => "TiDBVectorFloat32",
        mt::UNSPECIFIED => "Unspecified",
        _ => "type",
    };
    format!("{name} ({tp})")
}

/// A MySQL type code from the wire: codes that do not fit a byte map to `Geometry` (0xFF),
/// an unsupported type, instead of being silently truncated into a supported one.
fn type_code(tp: i32) -> u8 {
    u8::try_from(tp).unwrap_or(mt::GEOMETRY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_type_is_named() {
        let e = FieldType::new(mt::SET).eval_type().unwrap_err().to_string();
        assert!(e.contains("Set (248)"), "{e}");
        assert_eq!(FieldType::new(mt::JSON).eval_type().unwrap(), EvalType::Json);
        assert_eq!(FieldType::new(mt::ENUM).eval_type().unwrap(), EvalType::Enum);
        assert_eq!(FieldType::new(mt::BIT).eval_type().unwrap(), EvalType::Int);
        assert_eq!(FieldType::new(mt::BIT).value_kind().unwrap(), ValueKind::Uint);
        let v = FieldType::new(mt::TIDB_VECTOR_FLOAT32);
        assert_eq!(v.eval_type().unwrap(), EvalType::VectorFloat32);
        assert_eq!(v.value_kind().unwrap(), ValueKind::Bytes);
    }
}
