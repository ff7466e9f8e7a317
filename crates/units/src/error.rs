//! The crate's one error type.

/// Longest part of the offending text kept in a [`ParseError`], in bytes.
const MAX_INPUT: usize = 64;

/// A size or duration string that did not parse.
///
/// The error keeps the offending text (its first 64 bytes, so a hostile value cannot make
/// errors large) and a short reason; `Display` reads
/// `invalid duration "100": a number needs a unit: d, h, m, s, ms, us or ns`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A [`ReadableSize`](crate::ReadableSize) did not parse.
    #[error("invalid size {input:?}: {reason}")]
    Size {
        /// The text, cut to 64 bytes.
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A [`ReadableDuration`](crate::ReadableDuration) did not parse.
    #[error("invalid duration {input:?}: {reason}")]
    Duration {
        /// The text, cut to 64 bytes.
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl ParseError {
    /// `"size"` or `"duration"`.
    pub fn quantity(&self) -> &'static str {
        match self {
            ParseError::Size { .. } => "size",
            ParseError::Duration { .. } => "duration",
        }
    }

    /// The offending text (its first 64 bytes).
    pub fn input(&self) -> &str {
        match self {
            ParseError::Size { input, .. } | ParseError::Duration { input, .. } => input,
        }
    }

    /// What is wrong with the text.
    pub fn reason(&self) -> &'static str {
        match self {
            ParseError::Size { reason, .. } | ParseError::Duration { reason, .. } => reason,
        }
    }

    pub(crate) fn size(input: &str, reason: &'static str) -> Self {
        ParseError::Size { input: cut(input), reason }
    }

    pub(crate) fn duration(input: &str, reason: &'static str) -> Self {
        ParseError::Duration { input: cut(input), reason }
    }
}

/// The first [`MAX_INPUT`] bytes of `input`, cut on a character boundary.
fn cut(input: &str) -> String {
    let mut end = input.len().min(MAX_INPUT);
    while !input.is_char_boundary(end) {
        end -= 1;
    }
    input.get(..end).unwrap_or_default().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_a_bounded_prefix_of_the_input() {
        let e = ParseError::size("4XB", "unknown unit");
        assert_eq!((e.quantity(), e.input(), e.reason()), ("size", "4XB", "unknown unit"));
        assert_eq!(e.to_string(), "invalid size \"4XB\": unknown unit");
        let long = "é".repeat(100);
        let e = ParseError::duration(&long, "r");
        assert_eq!(e.input(), "é".repeat(32), "64 bytes, cut on a char boundary");
        let e = ParseError::duration(&format!("x{long}"), "r");
        assert_eq!(e.input().len(), 63);
    }
}
