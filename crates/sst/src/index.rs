//! Block index of one section (latest versions or old versions).
//!
//! Layout (little-endian):
//!
//! ```text
//! u32 checksum | u32 INDEX_FORMAT_V1 (=1) | u32 num_blocks | num_blocks × u32 key offset |
//! num_blocks × {u64 origin_fid, u32 origin_off, u32 curr_off} | u16 common_prefix_len | prefix |
//! u32 keys_len | first-key suffixes
//! ```
//!
//! The checksum covers everything after it. Key offsets index into the suffix area; a
//! suffix ends where the next begins. `curr_off` is the block's offset from the start of
//! the table; a block ends where the next one starts, the last one at the section end.

use std::cmp::Ordering;
use std::ops::Range;

use bytes::Bytes;

use crate::codec::{Cursor, cmp_split, common_prefix_len, put_u16, put_u32, put_u64, u32_at};
use crate::error::{CorruptKind, Error, Result};
use crate::types::{ChecksumType, FileId};

/// Format number of the index.
pub const INDEX_FORMAT_V1: u32 = 1;

/// Where one stored block lives, relative to the start of its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlockHandle {
    /// Offset of the block's checksum field from the start of the table.
    pub offset: u32,
    /// Stored length (checksum + possibly compressed payload).
    pub len: u32,
}

impl BlockHandle {
    /// The byte range of the block relative to the table start.
    pub fn range(&self) -> Range<u64> {
        u64::from(self.offset)..u64::from(self.offset) + u64::from(self.len)
    }
}

/// Collects the first key and offset of each block of a section.
#[derive(Debug, Default)]
pub(crate) struct IndexBuilder {
    keys: Vec<u8>,
    key_ends: Vec<usize>,
    offsets: Vec<u32>,
}

impl IndexBuilder {
    pub(crate) fn add(&mut self, first_key: &[u8], offset: u32) {
        self.keys.extend_from_slice(first_key);
        self.key_ends.push(self.keys.len());
        self.offsets.push(offset);
    }

    fn key(&self, i: usize) -> &[u8] {
        let s = if i == 0 { 0 } else { self.key_ends[i - 1] };
        &self.keys[s..self.key_ends[i]]
    }

    /// Appends the encoded index (with checksum) to `out`.
    /// `base` is added to every recorded offset (the old section's blocks are recorded
    /// relative to the section and placed after the data section at finish).
    pub(crate) fn finish_into(
        &self,
        file_id: FileId,
        base: u32,
        checksum: ChecksumType,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let too_big = || Error::InvalidInput { reason: "index larger than 4 GiB".into() };
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        let n = self.offsets.len();
        put_u32(out, INDEX_FORMAT_V1);
        put_u32(out, u32::try_from(n).map_err(|_| too_big())?);
        let plen = if n == 0 {
            0
        } else {
            common_prefix_len(self.key(0), self.key(n - 1)).min(u16::MAX as usize)
        };
        let mut off = 0usize;
        for i in 0..n {
            put_u32(out, u32::try_from(off).map_err(|_| too_big())?);
            off += self.key(i).len() - plen;
        }
        for &o in &self.offsets {
            let o = o.checked_add(base).ok_or_else(too_big)?;
            put_u64(out, file_id.0);
            put_u32(out, o);
            put_u32(out, o);
        }
        put_u16(out, plen as u16);
        if n > 0 {
            out.extend_from_slice(&self.key(0)[..plen]);
        }
        put_u32(out, u32::try_from(off).map_err(|_| too_big())?);
        for i in 0..n {
            out.extend_from_slice(&self.key(i)[plen..]);
        }
        let sum = checksum.compute(&out[start + 4..]);
        out[start..start + 4].copy_from_slice(&sum.to_le_bytes());
        Ok(())
    }
}

/// A decoded, validated index.
#[derive(Clone)]
pub(crate) struct Index {
    data: Bytes,
    n: usize,
    key_offs: usize,
    handles: usize,
    prefix: Range<usize>,
    keys: usize,
    keys_len: usize,
    section_end: u32,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index").field("blocks", &self.n).finish()
    }
}

impl Index {
    /// Decodes the index at `section` (bytes of the index), validating that the blocks tile
    /// `blocks` = `[section_start, section_end)` of the table in increasing order and that the
    /// first keys are ordered. `abs` is the absolute file offset of `data`, for errors.
    pub(crate) fn decode(
        data: Bytes,
        checksum: ChecksumType,
        blocks: Range<u32>,
        strict_keys: bool,
        file_id: FileId,
        abs: u64,
    ) -> Result<Index> {
        let corrupt = |k, d| Error::corrupt(file_id, abs, k, d);
        let mut c = Cursor::checked_section(&data, checksum, file_id, abs, "index checksum")?;
        if c.u32("index format")? != INDEX_FORMAT_V1 {
            return Err(corrupt(CorruptKind::Unsupported, "index format version"));
        }
        let n = c.u32("index block count")? as usize;
        let key_offs = c.pos();
        c.bytes(
            n.checked_mul(4).ok_or_else(|| corrupt(CorruptKind::OutOfBounds, "index count"))?,
            "index key offsets",
        )?;
        let handles = c.pos();
        c.bytes(
            n.checked_mul(16).ok_or_else(|| corrupt(CorruptKind::OutOfBounds, "index count"))?,
            "index handles",
        )?;
        let plen = c.u16("index prefix length")? as usize;
        let ps = c.pos();
        c.bytes(plen, "index prefix")?;
        let keys_len = c.u32("index keys length")? as usize;
        let keys = c.pos();
        c.bytes(keys_len, "index keys")?;
        let idx = Index {
            n,
            key_offs,
            handles,
            prefix: ps..ps + plen,
            keys,
            keys_len,
            section_end: blocks.end,
            data,
        };
        idx.validate(blocks.start, strict_keys)
            .map_err(|d| corrupt(CorruptKind::Inconsistent, d))?;
        Ok(idx)
    }

    fn validate(&self, section_start: u32, strict: bool) -> Result<(), &'static str> {
        let mut prev_key_off = 0usize;
        for i in 0..self.n {
            let ko = u32_at(&self.data, self.key_offs + i * 4).ok_or("key offset")? as usize;
            if ko < prev_key_off || ko > self.keys_len || (i == 0 && ko != 0) {
                return Err("index key offsets not increasing");
            }
            prev_key_off = ko;
            let cur = self.curr_off(i);
            let expected_lo =
                if i == 0 { section_start } else { self.curr_off(i - 1).saturating_add(4) };
            if (i == 0 && cur != section_start) || cur < expected_lo {
                return Err("block offsets do not tile the section");
            }
            if u64::from(cur) + 4 > u64::from(self.section_end) {
                return Err("block offset past the section end");
            }
            if i > 0 {
                let ord = self.suffix(i - 1).cmp(self.suffix(i));
                if ord == Ordering::Greater || (strict && ord == Ordering::Equal) {
                    return Err("index keys out of order");
                }
            }
        }
        if self.n == 0 && section_start != self.section_end {
            return Err("section has bytes but no blocks");
        }
        Ok(())
    }

    fn curr_off(&self, i: usize) -> u32 {
        u32_at(&self.data, self.handles + i * 16 + 12).unwrap_or(0)
    }

    /// Number of blocks.
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    fn prefix(&self) -> &[u8] {
        self.data.get(self.prefix.clone()).unwrap_or_default()
    }

    fn suffix(&self, i: usize) -> &[u8] {
        let s = u32_at(&self.data, self.key_offs + i * 4).unwrap_or(0) as usize;
        let e = if i + 1 < self.n {
            u32_at(&self.data, self.key_offs + (i + 1) * 4).unwrap_or(0) as usize
        } else {
            self.keys_len
        };
        self.data.get(self.keys + s..self.keys + e).unwrap_or_default()
    }

    /// First key of block `i`, appended to `buf` after clearing it.
    pub(crate) fn first_key_into(&self, i: usize, buf: &mut Vec<u8>) {
        buf.clear();
        buf.extend_from_slice(self.prefix());
        buf.extend_from_slice(self.suffix(i));
    }

    /// Handle of block `i` (`i < len()`; validated on decode).
    pub(crate) fn handle(&self, i: usize) -> BlockHandle {
        let offset = self.curr_off(i);
        let end = if i + 1 < self.n { self.curr_off(i + 1) } else { self.section_end };
        BlockHandle { offset, len: end.saturating_sub(offset) }
    }

    /// Index of the first block whose first key is `> key` (`len()` when none).
    pub(crate) fn seek_gt(&self, key: &[u8]) -> usize {
        let prefix = self.prefix();
        let (mut lo, mut hi) = (0, self.n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if cmp_split(prefix, self.suffix(mid), key) != Ordering::Greater {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Index of the first block whose first key is `>= key` (`len()` when none).
    pub(crate) fn seek_ge(&self, key: &[u8]) -> usize {
        let prefix = self.prefix();
        let (mut lo, mut hi) = (0, self.n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if cmp_split(prefix, self.suffix(mid), key) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Approximate in-memory size, for cache weights.
    pub(crate) fn size(&self) -> usize {
        self.data.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_decodes_and_seeks() {
        let mut b = IndexBuilder::default();
        b.add(b"apple", 0);
        b.add(b"apricot", 100);
        b.add(b"avocado", 250);
        let mut out = Vec::new();
        b.finish_into(FileId(9), 0, ChecksumType::Crc32c, &mut out).unwrap();
        // checksum, format, count, 3 key offsets, 3 handles, plen=1 "a", keys_len, suffixes
        assert_eq!(out.len(), 4 + 4 + 4 + 12 + 48 + 2 + 1 + 4 + (4 + 6 + 6));
        let idx = Index::decode(Bytes::from(out), ChecksumType::Crc32c, 0..400, true, FileId(9), 0)
            .unwrap();
        assert_eq!(idx.len(), 3);
        assert_eq!(idx.handle(1), BlockHandle { offset: 100, len: 150 });
        assert_eq!(idx.handle(2), BlockHandle { offset: 250, len: 150 });
        assert_eq!(idx.seek_gt(b"apricot"), 2);
        assert_eq!(idx.seek_ge(b"apricot"), 1);
        assert_eq!(idx.seek_gt(b"a"), 0);
        let mut k = Vec::new();
        idx.first_key_into(2, &mut k);
        assert_eq!(k, b"avocado");
        // Blocks must tile the section.
        let mut out = Vec::new();
        b.finish_into(FileId(9), 0, ChecksumType::Crc32c, &mut out).unwrap();
        let e = Index::decode(Bytes::from(out), ChecksumType::Crc32c, 0..200, true, FileId(9), 0)
            .unwrap_err();
        assert_eq!(e.corrupt_kind(), Some(CorruptKind::Inconsistent));
    }
}
