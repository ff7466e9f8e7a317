//! The one error type of `rcop-datum`.

/// What went wrong while decoding or converting TiDB data.
///
/// Decoders never panic: every malformed input maps to one of these variants.
/// `offset` fields are byte offsets into the input the decoder was given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input ended before a value was complete.
    #[error("unexpected end of input decoding {what}: need {need} bytes, {have} left")]
    Eof {
        /// What was being decoded.
        what: &'static str,
        /// Bytes needed.
        need: usize,
        /// Bytes available.
        have: usize,
    },
    /// A varint ran past 10 bytes or overflowed 64 bits.
    #[error("invalid varint at offset {offset}")]
    BadVarint {
        /// Offset of the varint's first byte.
        offset: usize,
    },
    /// A memcomparable group marker or padding byte was invalid.
    #[error("invalid memcomparable bytes at offset {offset}: {reason}")]
    BadMemcomparable {
        /// Offset of the offending group.
        offset: usize,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A datum flag byte that the decoder does not know or cannot accept here.
    #[error("invalid datum flag {flag:#04x} at offset {offset}")]
    BadFlag {
        /// The flag byte.
        flag: u8,
        /// Offset of the flag byte.
        offset: usize,
    },
    /// A length field that is negative or exceeds what remains.
    #[error("invalid length {len} for {what}")]
    BadLength {
        /// What carried the length.
        what: &'static str,
        /// The length as decoded.
        len: i64,
    },
    /// A structurally invalid encoded value (row, key, decimal, time …).
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// The kind of value.
        what: &'static str,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A value out of the representable range (MySQL error 1690 / 1264 class).
    #[error("{what} value is out of range")]
    Overflow {
        /// The kind of value.
        what: &'static str,
    },
    /// Division by zero.
    #[error("division by 0")]
    DivisionByZero,
    /// Text that does not parse as the requested type (MySQL "Incorrect … value").
    #[error("incorrect {what} value: '{text}'")]
    Parse {
        /// The target type.
        what: &'static str,
        /// The offending text (truncated to 64 bytes).
        text: String,
    },
    /// An unknown or invalid time zone name or offset.
    #[error("unknown or invalid time zone '{0}'")]
    TimeZone(String),
}

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Builds an [`Error::Parse`] with the offending text cut to 64 bytes.
pub(crate) fn parse_error(what: &'static str, text: &str) -> Error {
    let mut end = text.len().min(64);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Error::Parse { what, text: text[..end].to_owned() }
}
