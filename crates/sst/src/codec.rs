//! Checked little-endian decoding and key comparison helpers.

use std::cmp::Ordering;

use crate::error::{CorruptKind, Error, Result};
use crate::types::FileId;

/// A bounds-checked little-endian reader over a byte slice. Every read that would run past
/// the end returns [`Error::Corrupt`] naming the file and the absolute offset.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    file_id: FileId,
    /// Absolute file offset of `buf[0]`, for error messages.
    base: u64,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8], file_id: FileId, base: u64) -> Self {
        Cursor { buf, pos: 0, file_id, base }
    }

    /// Opens a metadata section: reads its leading u32 checksum, verifies it over the rest of
    /// `buf` (a mismatch is `ChecksumMismatch` naming `what` at `base`), and returns a cursor
    /// positioned after it.
    pub(crate) fn checked_section(
        buf: &'a [u8],
        checksum: crate::types::ChecksumType,
        file_id: FileId,
        base: u64,
        what: &'static str,
    ) -> Result<Self> {
        let mut c = Cursor::new(buf, file_id, base);
        let sum = c.u32(what)?;
        crate::compress::verify_checksum(checksum, sum, buf.get(4..).unwrap_or_default())
            .map_err(|()| Error::corrupt(file_id, base, CorruptKind::ChecksumMismatch, what))?;
        Ok(c)
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    fn err(&self, detail: &'static str) -> Error {
        Error::corrupt(
            self.file_id,
            self.base.saturating_add(self.pos as u64),
            CorruptKind::Truncated,
            detail,
        )
    }

    pub(crate) fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or_else(|| self.err(what))?;
        let s = self.buf.get(self.pos..end).ok_or_else(|| self.err(what))?;
        self.pos = end;
        Ok(s)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N]> {
        let s = self.bytes(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
}

/// Reads a little-endian `u32` at `pos`, or `None` when out of bounds.
#[inline]
pub(crate) fn u32_at(buf: &[u8], pos: usize) -> Option<u32> {
    let end = pos.checked_add(4)?;
    let s = buf.get(pos..end)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Reads a little-endian `u16` at `pos`, or `None` when out of bounds.
#[inline]
pub(crate) fn u16_at(buf: &[u8], pos: usize) -> Option<u16> {
    let end = pos.checked_add(2)?;
    let s = buf.get(pos..end)?;
    Some(u16::from_le_bytes([s[0], s[1]]))
}

/// Reads a little-endian `u64` at `pos`, or `None` when out of bounds.
#[inline]
pub(crate) fn u64_at(buf: &[u8], pos: usize) -> Option<u64> {
    let end = pos.checked_add(8)?;
    let s = buf.get(pos..end)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_le_bytes(a))
}

/// Compares the key `prefix ++ suffix` with `target` without concatenating.
#[inline]
pub(crate) fn cmp_split(prefix: &[u8], suffix: &[u8], target: &[u8]) -> Ordering {
    match target.split_at_checked(prefix.len()) {
        Some((head, tail)) => match prefix.cmp(head) {
            Ordering::Equal => suffix.cmp(tail),
            o => o,
        },
        None => {
            // `target` is shorter than the prefix: the key is longer than `target`.
            match prefix.get(..target.len()).map(|p| p.cmp(target)) {
                Some(Ordering::Equal) | None => Ordering::Greater,
                Some(o) => o,
            }
        }
    }
}

/// Length of the longest common prefix of `a` and `b`.
pub(crate) fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

pub(crate) fn put_u16(buf: &mut Vec<u8>, v: u16) {
    buf.extend_from_slice(&v.to_le_bytes());
}

pub(crate) fn put_u32(buf: &mut Vec<u8>, v: u32) {
    buf.extend_from_slice(&v.to_le_bytes());
}

pub(crate) fn put_u64(buf: &mut Vec<u8>, v: u64) {
    buf.extend_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmp_split_matches_concatenation() {
        let cases: &[(&[u8], &[u8], &[u8])] = &[
            (b"ab", b"c", b"abc"),
            (b"ab", b"c", b"ab"),
            (b"ab", b"", b"abc"),
            (b"ab", b"c", b"a"),
            (b"ab", b"c", b"b"),
            (b"ab", b"c", b""),
            (b"", b"", b""),
            (b"", b"x", b"w"),
            (b"zz", b"", b"za"),
        ];
        for (p, s, t) in cases {
            let full = [*p, *s].concat();
            assert_eq!(cmp_split(p, s, t), full.as_slice().cmp(t), "{p:?} {s:?} {t:?}");
        }
    }

    #[test]
    fn cursor_reports_offset_of_truncation() {
        let mut c = Cursor::new(&[1, 0, 0], FileId(7), 100);
        assert_eq!(c.u16("a").ok(), Some(1));
        let e = c.u32("b").err();
        match e {
            Some(Error::Corrupt { file_id, offset, .. }) => {
                assert_eq!(file_id, FileId(7));
                assert_eq!(offset, 102);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
