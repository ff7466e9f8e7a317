//! The one error type of `rcop-exec`.

use crate::scan::ScanError;

/// MySQL error code of an unclassified error (`ER_UNKNOWN_ERROR`).
pub const ER_UNKNOWN: i32 = 1105;
/// MySQL error code of a value out of range (`ER_DATA_OUT_OF_RANGE`).
pub const ER_DATA_OUT_OF_RANGE: i32 = 1690;
/// MySQL error code of a division by zero (`ER_DIVISION_BY_ZERO`).
pub const ER_DIVISION_BY_ZERO: i32 = 1365;
/// MySQL error code of a truncated value (`ER_TRUNCATED_WRONG_VALUE`).
pub const ER_TRUNCATED_WRONG_VALUE: i32 = 1292;
/// MySQL error code of a result longer than `max_allowed_packet`
/// (`ER_WARN_ALLOWED_PACKET_OVERFLOWED`).
pub const ER_WARN_ALLOWED_PACKET_OVERFLOWED: i32 = 1301;
/// MySQL error code of bytes that are not a string of the character set
/// (`ER_INVALID_CHARACTER_STRING`).
pub const ER_INVALID_CHARACTER_STRING: i32 = 1300;
/// MySQL error code of text that is not base64 (`ER_BAD_BASE64_DATA`).
pub const ER_BAD_BASE64_DATA: i32 = 1958;
/// MySQL error code of a NULL in a NOT NULL column (`ER_BAD_NULL_ERROR`).
pub const ER_BAD_NULL: i32 = 1048;
/// MySQL warning code of a value cut to fit its type (`WARN_DATA_TRUNCATED`).
pub const WARN_DATA_TRUNCATED: i32 = 1265;
/// MySQL error code of a string longer than its type (`ER_DATA_TOO_LONG`).
pub const ER_DATA_TOO_LONG: i32 = 1406;

/// The kinds of things a request can use that the engine may not implement: what an
/// [`Error::Unsupported`] names, and what the capability check ([`crate::check_dag`])
/// reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Feature {
    /// A coprocessor request type other than DAG (103).
    RequestType,
    /// An executor (`tipb.ExecType`), or a form of one (TopN with `partition_by`, …).
    Executor,
    /// An expression node type (`tipb.ExprType`).
    ExprType,
    /// A scalar function signature (`tipb.ScalarFuncSig`).
    ScalarFunc,
    /// An aggregate function (an aggregate `tipb.ExprType`).
    AggregateFunction,
    /// An aggregate mode (`tipb.AggFunctionMode`), DISTINCT, or an argument form.
    AggregateMode,
    /// A column or expression field type (MySQL type code).
    FieldType,
    /// A collation id.
    Collation,
    /// A response encoding (`tipb.EncodeType`).
    EncodeType,
    /// A session time zone.
    TimeZone,
    /// A LIKE escape character.
    LikeEscape,
}

impl Feature {
    /// A short stable name, e.g. for a metric label (`"scalar_func"`).
    pub fn label(self) -> &'static str {
        match self {
            Feature::RequestType => "request_type",
            Feature::Executor => "executor",
            Feature::ExprType => "expr_type",
            Feature::ScalarFunc => "scalar_func",
            Feature::AggregateFunction => "aggregate_function",
            Feature::AggregateMode => "aggregate_mode",
            Feature::FieldType => "field_type",
            Feature::Collation => "collation",
            Feature::EncodeType => "encode_type",
            Feature::TimeZone => "time_zone",
            Feature::LikeEscape => "like_escape",
        }
    }
}

impl std::fmt::Display for Feature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Feature::RequestType => "request type",
            Feature::Executor => "ExecType",
            Feature::ExprType => "ExprType",
            Feature::ScalarFunc => "ScalarFuncSig",
            Feature::AggregateFunction => "aggregate function",
            Feature::AggregateMode => "aggregate",
            Feature::FieldType => "field type",
            Feature::Collation => "collation",
            Feature::EncodeType => "EncodeType",
            Feature::TimeZone => "time zone",
            Feature::LikeEscape => "LIKE escape",
        })
    }
}

/// What went wrong while running a DAG request.
///
/// Request and evaluation errors end up in `SelectResponse.error` (with [`Error::code`]);
/// [`Error::Scan`] maps to `Response.locked`, `Response.region_error` or
/// `Response.other_error`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request uses something this engine does not implement (an executor type, a
    /// scalar function signature, a field type, a collation, an aggregate mode …).
    #[error("unsupported {what}: {detail}")]
    Unsupported {
        /// The kind of thing, e.g. [`Feature::ScalarFunc`].
        what: Feature,
        /// Which one, e.g. "RegexpSig (4311)".
        detail: String,
    },
    /// The request is malformed: undecodable bytes, a bad column offset, a missing child …
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// An expression tree is nested deeper than the configured bound.
    #[error("expression nested deeper than {limit} levels")]
    TooDeep {
        /// The bound.
        limit: usize,
    },
    /// Stored data (a key, a row, a default value) could not be decoded.
    #[error("corrupt data: {0}")]
    Corrupt(#[from] rcop_datum::Error),
    /// A NOT NULL column is absent from a row and has no default value.
    #[error("column {column_id} is NOT NULL but missing from the row and has no default")]
    MissingColumn {
        /// The column id.
        column_id: i64,
    },
    /// A value is out of the range of its type (MySQL error 1690).
    #[error("{0} value is out of range")]
    Overflow(&'static str),
    /// Division by zero in a strict context (MySQL error 1365).
    #[error("division by 0")]
    DivisionByZero,
    /// A value could not be converted without losing data, in a strict context
    /// (MySQL error 1292).
    #[error("truncated incorrect {what} value: '{value}'")]
    Truncated {
        /// The target type.
        what: &'static str,
        /// The offending value, shortened.
        value: String,
    },
    /// A string longer than the result type's length, cut to it (MySQL error 1406).
    #[error("Data Too Long, field len {flen}, data len {len}")]
    DataTooLong {
        /// The type's length (characters, or bytes for a binary string).
        flen: usize,
        /// The value's length in the same unit.
        len: usize,
    },
    /// A value was cut to fit its type (MySQL warning 1265).
    #[error("Data truncated")]
    DataTruncated,
    /// A string, number or time that is not a valid date/time (MySQL error 1292).
    #[error("Incorrect datetime value: '{0}'")]
    IncorrectDatetime(String),
    /// `CAST(… AS SIGNED)` of an integer string above the signed range wrapped to a negative
    /// value (TiKV's warning, code 1105).
    #[error("Cast to signed converted positive out-of-range integer to it's negative complement")]
    CastAsSignedOverflow,
    /// `CAST(… AS UNSIGNED)` of a negative integer string wrapped to a positive value
    /// (TiKV's warning, code 1105).
    #[error("Cast to unsigned converted negative integer to it's positive complement")]
    CastNegIntAsUnsigned,
    /// A string function's result would be longer than `max_allowed_packet` (a warning;
    /// the result is NULL, MySQL code 1301).
    #[error("result of {func}() was larger than max_allowed_packet ({limit}) - truncated")]
    PacketTooLarge {
        /// The SQL function.
        func: &'static str,
        /// The limit in bytes.
        limit: u64,
    },
    /// Bytes that are not a valid string of a character set (MySQL code 1300).
    #[error("invalid {charset} character string: '{value}'")]
    InvalidCharacters {
        /// The character set.
        charset: &'static str,
        /// The offending bytes, as hex, shortened.
        value: String,
    },
    /// `FROM_BASE64` of text that is not base64 (a warning; the result is NULL, MySQL code
    /// 1958).
    #[error("bad base64 data as position {at}")]
    BadBase64 {
        /// The byte offset where decoding failed.
        at: usize,
    },
    /// The scan source failed.
    #[error(transparent)]
    Scan(#[from] ScanError),
    /// An input past one of the engine's size bounds (a LIKE pattern longer than
    /// `MAX_LIKE_PATTERN`, …).
    #[error("{what} of {len} bytes is longer than the {limit} accepted")]
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// Its size in bytes.
        len: usize,
        /// The bound.
        limit: usize,
    },
    /// The request hit one of its [`ExecLimits`](crate::ExecLimits): over its memory
    /// budget, past its deadline, or cancelled.
    #[error(transparent)]
    Aborted(#[from] crate::limits::Abort),
    /// A function's own MySQL error or warning (e.g. an invalid regular expression, 1139;
    /// a corrupt `UNCOMPRESS` input, 1259).
    #[error("{msg}")]
    Eval {
        /// The MySQL error code.
        code: i32,
        /// The message.
        msg: String,
    },
}

impl Error {
    /// The MySQL error code put in `SelectResponse.error.code`.
    pub fn code(&self) -> i32 {
        match self {
            Error::Overflow(_) => ER_DATA_OUT_OF_RANGE,
            Error::DivisionByZero => ER_DIVISION_BY_ZERO,
            Error::Truncated { .. } | Error::IncorrectDatetime(_) => ER_TRUNCATED_WRONG_VALUE,
            Error::DataTooLong { .. } => ER_DATA_TOO_LONG,
            Error::DataTruncated => WARN_DATA_TRUNCATED,
            Error::MissingColumn { .. } => ER_BAD_NULL,
            Error::Eval { code, .. } => *code,
            Error::PacketTooLarge { .. } => ER_WARN_ALLOWED_PACKET_OVERFLOWED,
            Error::InvalidCharacters { .. } => ER_INVALID_CHARACTER_STRING,
            Error::BadBase64 { .. } => ER_BAD_BASE64_DATA,
            _ => ER_UNKNOWN,
        }
    }

    pub(crate) fn unsupported(what: Feature, detail: impl Into<String>) -> Error {
        Error::Unsupported { what, detail: detail.into() }
    }

    pub(crate) fn eval(code: i32, msg: impl Into<String>) -> Error {
        Error::Eval { code, msg: msg.into() }
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> Error {
        Error::InvalidRequest(msg.into())
    }
}

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
