//! A bounds-checked little-endian cursor and the length-prefix helpers shared by the decoders
//! and encoders.

use std::ops::Range;

use crate::error::{Error, Field, Result};

/// A cursor over an input slice. `base` is the offset of `buf[0]` in the buffer the caller
/// handed to the public decoder, so that errors report offsets the caller can find.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], base: usize) -> Self {
        Reader { buf, pos: 0, base }
    }

    /// Absolute offset of the next byte.
    pub(crate) fn offset(&self) -> usize {
        self.base.saturating_add(self.pos)
    }

    /// Position of the next byte within `buf`.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    fn array<const N: usize>(&mut self, what: Field) -> Result<[u8; N]> {
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        match rest.first_chunk::<N>() {
            Some(bytes) => {
                self.pos += N;
                Ok(*bytes)
            }
            None => {
                Err(Error::Truncated { what, offset: self.offset(), need: N, have: rest.len() })
            }
        }
    }

    pub(crate) fn u32(&mut self, what: Field) -> Result<u32> {
        self.array::<4>(what).map(u32::from_le_bytes)
    }

    pub(crate) fn u64(&mut self, what: Field) -> Result<u64> {
        self.array::<8>(what).map(u64::from_le_bytes)
    }

    /// Consumes `len` bytes whose length prefix was read at absolute offset `len_offset`,
    /// returning their range within `buf`.
    pub(crate) fn take(
        &mut self,
        what: Field,
        len: u64,
        len_offset: usize,
    ) -> Result<Range<usize>> {
        let have = self.remaining();
        match usize::try_from(len) {
            Ok(n) if n <= have => {
                let start = self.pos;
                self.pos += n;
                Ok(start..self.pos)
            }
            _ => Err(Error::BadLength { what, offset: len_offset, len, have }),
        }
    }

    /// Reads a `u32 LE` length prefix and consumes that many bytes.
    pub(crate) fn u32_prefixed(&mut self, len_field: Field, what: Field) -> Result<Range<usize>> {
        let len_offset = self.offset();
        let len = self.u32(len_field)?;
        self.take(what, u64::from(len), len_offset)
    }

    /// Reads a `u64 LE` length prefix and consumes that many bytes.
    pub(crate) fn u64_prefixed(&mut self, len_field: Field, what: Field) -> Result<Range<usize>> {
        let len_offset = self.offset();
        let len = self.u64(len_field)?;
        self.take(what, len, len_offset)
    }
}

/// Converts a length to the `u32` of a length prefix.
pub(crate) fn u32_len(what: Field, len: usize) -> Result<u32> {
    u32::try_from(len).map_err(|_| Error::TooLarge {
        what,
        len: len as u64,
        max: u64::from(u32::MAX),
    })
}

/// Overwrites the 4 bytes at `at` (written earlier as a placeholder) with `value`.
pub(crate) fn patch_u32(buf: &mut [u8], at: usize, value: u32) {
    if let Some(slot) = buf.get_mut(at..).and_then(|s| s.first_chunk_mut::<4>()) {
        *slot = value.to_le_bytes();
    }
}

/// Overwrites the 8 bytes at `at` (written earlier as a placeholder) with `value`.
pub(crate) fn patch_u64(buf: &mut [u8], at: usize, value: u64) {
    if let Some(slot) = buf.get_mut(at..).and_then(|s| s.first_chunk_mut::<8>()) {
        *slot = value.to_le_bytes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_little_endian_and_reports_absolute_offsets() {
        let buf = [1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 9];
        let mut r = Reader::new(&buf, 100);
        assert_eq!(r.u32(Field::EnvelopeFormat).unwrap(), 1);
        assert_eq!(r.u64(Field::RowCount).unwrap(), 2);
        assert_eq!(r.offset(), 112);
        let err = r.u32(Field::RequestLen).unwrap_err();
        assert!(matches!(
            err,
            Error::Truncated { what: Field::RequestLen, offset: 112, need: 4, have: 1 }
        ));
        // A failed read does not move the cursor.
        assert_eq!(r.offset(), 112);
    }

    #[test]
    fn take_rejects_lengths_beyond_the_input_and_beyond_usize() {
        let buf = [0u8; 3];
        let mut r = Reader::new(&buf, 7);
        assert!(matches!(
            r.take(Field::Key, 4, 5),
            Err(Error::BadLength { what: Field::Key, offset: 5, len: 4, have: 3 })
        ));
        assert!(matches!(r.take(Field::Key, u64::MAX, 5), Err(Error::BadLength { .. })));
        assert_eq!(r.take(Field::Key, 3, 5).unwrap(), 0..3);
        assert_eq!(r.take(Field::Key, 0, 5).unwrap(), 3..3);
    }

    #[test]
    fn u32_len_refuses_what_a_prefix_cannot_describe() {
        assert_eq!(u32_len(Field::Request, 5).unwrap(), 5);
        assert_eq!(u32_len(Field::Request, u32::MAX as usize).unwrap(), u32::MAX);
        if let Some(big) = (u32::MAX as usize).checked_add(1) {
            assert!(matches!(
                u32_len(Field::Request, big),
                Err(Error::TooLarge { what: Field::Request, max: 4_294_967_295, .. })
            ));
        }
    }

    #[test]
    fn patch_overwrites_in_place_and_ignores_out_of_range() {
        let mut buf = vec![0u8; 12];
        patch_u32(&mut buf, 0, 0x0403_0201);
        patch_u64(&mut buf, 4, 0x0807_0605_0403_0201);
        assert_eq!(buf, [1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8]);
        patch_u64(&mut buf, 5, u64::MAX);
        assert_eq!(buf, [1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8]);
    }
}
