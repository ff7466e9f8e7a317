//! Data blocks: building, decoding (with full validation) and in-place access.
//!
//! Decompressed payload layout (little-endian):
//!
//! ```text
//! u32 BLOCK_FORMAT_V1 (=1) | u32 n | n × u32 entry offset | u16 common_prefix_len | prefix | entries
//! entry = u16 key_suffix_len | suffix | u8 meta | u64 version | [u64 old_version] |
//!         u8 user_meta_len | user_meta | value
//! ```
//!
//! Entry offsets are relative to the start of the entries area; an entry ends where the
//! next one starts (the last one at the end of the payload), which is how the value length
//! is known.

use std::cmp::Ordering;

use bytes::Bytes;

use crate::codec::{
    cmp_split, common_prefix_len, put_u16, put_u32, put_u64, u16_at, u32_at, u64_at,
};
use crate::error::{CorruptKind, Error, Result};
use crate::types::{BIT_HAS_OLD_VERSION, FileId, ValueRef};

/// Format number written at the start of every block payload.
pub const BLOCK_FORMAT_V1: u32 = 1;

/// Which section a block belongs to; decides the ordering rule validated on decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockKind {
    /// Latest versions: keys strictly increasing.
    Data,
    /// Older versions: keys non-decreasing, versions strictly decreasing within a key.
    Old,
}

/// Accumulates entries of one block.
#[derive(Debug, Default)]
pub(crate) struct BlockBuilder {
    keys: Vec<u8>,
    key_ends: Vec<usize>,
    tails: Vec<u8>,
    tail_ends: Vec<usize>,
}

impl BlockBuilder {
    pub(crate) fn is_empty(&self) -> bool {
        self.key_ends.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.key_ends.len()
    }

    /// Uncompressed size if finished now (prefix compression ignored).
    pub(crate) fn estimated_size(&self) -> usize {
        10 + self.key_ends.len() * 6 + self.keys.len() + self.tails.len()
    }

    fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.key_ends[i - 1] };
        &self.keys[start..self.key_ends[i]]
    }

    /// Adds one entry. Lengths were validated by the table builder.
    pub(crate) fn add(&mut self, key: &[u8], v: &ValueRef<'_>) {
        self.keys.extend_from_slice(key);
        self.key_ends.push(self.keys.len());
        self.tails.push(v.meta);
        put_u64(&mut self.tails, v.version);
        if let Some(old) = v.old_version {
            put_u64(&mut self.tails, old);
        }
        self.tails.push(v.user_meta.len() as u8);
        self.tails.extend_from_slice(v.user_meta);
        self.tails.extend_from_slice(v.value);
        self.tail_ends.push(self.tails.len());
    }

    /// Writes the uncompressed payload to `out` and resets the builder.
    pub(crate) fn finish_into(&mut self, out: &mut Vec<u8>) -> Result<()> {
        let n = self.len();
        let plen = if n == 0 {
            0
        } else {
            common_prefix_len(self.key(0), self.key(n - 1)).min(u16::MAX as usize)
        };
        let too_big = || Error::InvalidInput { reason: "block larger than 4 GiB".into() };
        put_u32(out, BLOCK_FORMAT_V1);
        put_u32(out, u32::try_from(n).map_err(|_| too_big())?);
        let mut off = 0usize;
        let mut tail_start = 0;
        for i in 0..n {
            put_u32(out, u32::try_from(off).map_err(|_| too_big())?);
            let suffix_len = self.key(i).len() - plen;
            off += 2 + suffix_len + (self.tail_ends[i] - tail_start);
            tail_start = self.tail_ends[i];
        }
        put_u16(out, plen as u16);
        if n > 0 {
            out.extend_from_slice(&self.key(0)[..plen]);
        }
        let mut tail_start = 0;
        for i in 0..n {
            let suffix = &self.key(i)[plen..];
            put_u16(out, suffix.len() as u16);
            out.extend_from_slice(suffix);
            out.extend_from_slice(&self.tails[tail_start..self.tail_ends[i]]);
            tail_start = self.tail_ends[i];
        }
        self.keys.clear();
        self.key_ends.clear();
        self.tails.clear();
        self.tail_ends.clear();
        Ok(())
    }
}

/// A decompressed, validated block. Cloning is cheap (the bytes are shared).
///
/// Decoding checks every offset, length and the key order once, so access afterwards
/// is by offsets read in place, with no allocation and no per-entry error path.
#[derive(Clone)]
pub struct Block {
    data: Bytes,
    n: usize,
    prefix_start: usize,
    prefix_len: usize,
    entries: usize,
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Block").field("entries", &self.n).field("bytes", &self.data.len()).finish()
    }
}

/// Parses one entry; `None` when it does not fit its bounds.
#[inline]
fn parse_entry(e: &[u8]) -> Option<(&[u8], ValueRef<'_>)> {
    let sl = u16_at(e, 0)? as usize;
    let mut p = 2 + sl;
    let suffix = e.get(2..p)?;
    let meta = *e.get(p)?;
    let version = u64_at(e, p + 1)?;
    p += 9;
    let old_version = if meta & BIT_HAS_OLD_VERSION != 0 {
        let v = u64_at(e, p)?;
        p += 8;
        Some(v)
    } else {
        None
    };
    let ul = *e.get(p)? as usize;
    let user_meta = e.get(p + 1..p + 1 + ul)?;
    let value = e.get(p + 1 + ul..)?;
    Some((suffix, ValueRef { meta, version, old_version, user_meta, value }))
}

impl Block {
    /// Validates a decompressed payload. `offset` is the block's absolute file offset.
    pub(crate) fn decode(
        data: Bytes,
        kind: BlockKind,
        file_id: FileId,
        offset: u64,
    ) -> Result<Block> {
        let corrupt = |k, d| Error::corrupt(file_id, offset, k, d);
        let fmt =
            u32_at(&data, 0).ok_or_else(|| corrupt(CorruptKind::Truncated, "block header"))?;
        if fmt != BLOCK_FORMAT_V1 {
            return Err(corrupt(CorruptKind::Unsupported, "block format version"));
        }
        let n = u32_at(&data, 4).ok_or_else(|| corrupt(CorruptKind::Truncated, "block header"))?
            as usize;
        let offs_len = n
            .checked_mul(4)
            .filter(|&l| l <= data.len())
            .ok_or_else(|| corrupt(CorruptKind::OutOfBounds, "entry count"))?;
        let plen_pos = 8 + offs_len;
        let prefix_len = u16_at(&data, plen_pos)
            .ok_or_else(|| corrupt(CorruptKind::Truncated, "common prefix length"))?
            as usize;
        let prefix_start = plen_pos + 2;
        let entries = prefix_start + prefix_len;
        if entries > data.len() {
            return Err(corrupt(CorruptKind::OutOfBounds, "common prefix"));
        }
        let block = Block { n, prefix_start, prefix_len, entries, data };
        block.validate(kind).map_err(|d| corrupt(CorruptKind::Inconsistent, d))?;
        Ok(block)
    }

    fn validate(&self, kind: BlockKind) -> Result<(), &'static str> {
        let area = self.data.len() - self.entries;
        let mut prev: Option<(&[u8], u64)> = None;
        let mut prev_off = 0usize;
        for i in 0..self.n {
            let off = u32_at(&self.data, 8 + i * 4).ok_or("entry offset")? as usize;
            if off > area || off < prev_off || (i == 0 && off != 0) {
                return Err("entry offsets not increasing within the block");
            }
            prev_off = off;
            let (s, e) = self.entry_bounds(i);
            let entry = self.data.get(s..e).ok_or("entry bounds")?;
            let (suffix, v) = parse_entry(entry).ok_or("entry does not fit")?;
            if let Some((ps, pv)) = prev {
                let ok = match (ps.cmp(suffix), kind) {
                    (Ordering::Less, _) => true,
                    (Ordering::Equal, BlockKind::Old) => pv > v.version,
                    _ => false,
                };
                if !ok {
                    return Err("keys out of order");
                }
            }
            prev = Some((suffix, v.version));
        }
        Ok(())
    }

    #[inline]
    fn off(&self, i: usize) -> usize {
        u32_at(&self.data, 8 + i * 4).unwrap_or(0) as usize
    }

    /// Absolute start and end of entry `i` in `data`.
    #[inline]
    fn entry_bounds(&self, i: usize) -> (usize, usize) {
        let s = self.entries + self.off(i);
        let e = if i + 1 < self.n { self.entries + self.off(i + 1) } else { self.data.len() };
        (s, e)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when the block holds no entry.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The decompressed block, which every key suffix and value of the block borrows from.
    #[inline]
    pub(crate) fn bytes(&self) -> &Bytes {
        &self.data
    }

    /// Decompressed size in bytes.
    pub fn size(&self) -> usize {
        self.data.len()
    }

    /// The common prefix of all keys of the block.
    #[inline]
    pub(crate) fn prefix(&self) -> &[u8] {
        self.data.get(self.prefix_start..self.prefix_start + self.prefix_len).unwrap_or_default()
    }

    /// Entry `i`: key suffix (after [`Self::prefix`]) and value. `i` must be `< len()`;
    /// out-of-range or (impossible after validation) malformed entries read as empty.
    #[inline]
    pub(crate) fn entry(&self, i: usize) -> (&[u8], ValueRef<'_>) {
        let (s, e) = self.entry_bounds(i);
        self.data.get(s..e).and_then(parse_entry).unwrap_or((&[], EMPTY_VALUE))
    }

    /// Key suffix of entry `i` only.
    #[inline]
    pub(crate) fn suffix(&self, i: usize) -> &[u8] {
        let s = self.entries + self.off(i);
        let sl = u16_at(&self.data, s).unwrap_or(0) as usize;
        self.data.get(s + 2..s + 2 + sl).unwrap_or_default()
    }

    /// Writes the full key of entry `i` into `buf` (reusing its capacity).
    #[inline]
    pub(crate) fn key_into(&self, i: usize, buf: &mut Vec<u8>) {
        buf.clear();
        buf.extend_from_slice(self.prefix());
        buf.extend_from_slice(self.suffix(i));
    }

    /// Index of the first entry whose key is `>= target` (`len()` when none).
    pub(crate) fn seek_ge(&self, target: &[u8]) -> usize {
        let prefix = self.prefix();
        let (mut lo, mut hi) = (0, self.n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if cmp_split(prefix, self.suffix(mid), target) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Index of the first entry whose key is `> target` (`len()` when none).
    pub(crate) fn seek_gt(&self, target: &[u8]) -> usize {
        let prefix = self.prefix();
        let (mut lo, mut hi) = (0, self.n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if cmp_split(prefix, self.suffix(mid), target) != Ordering::Greater {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// A `Bytes` sharing the block's buffer for `sub`, a slice obtained from this block
    /// (anything else yields an empty `Bytes`).
    pub(crate) fn slice_ref(&self, sub: &[u8]) -> Bytes {
        let start = (sub.as_ptr() as usize).checked_sub(self.data.as_ptr() as usize);
        match start {
            Some(s) if !sub.is_empty() && s + sub.len() <= self.data.len() => {
                self.data.slice(s..s + sub.len())
            }
            _ => Bytes::new(),
        }
    }

    /// Compares the key of entry `i` with `target`.
    #[inline]
    pub(crate) fn cmp_key(&self, i: usize, target: &[u8]) -> Ordering {
        cmp_split(self.prefix(), self.suffix(i), target)
    }
}

/// A forward walk over a block's entries from one entry to the block's end, for a scan that
/// reads a block at a time: each entry's key suffix (after [`prefix`](Self::prefix)) and
/// latest version, read with a running offset and no key assembled.
#[derive(Debug, Clone)]
pub struct BlockRun<'a> {
    block: &'a Block,
    /// The next entry's index.
    next: usize,
    /// Where the next entry starts in the block's buffer (the previous one's end).
    start: usize,
}

impl<'a> BlockRun<'a> {
    /// The run of `block` from entry `from` (empty when `from >= len()`).
    pub(crate) fn new(block: &'a Block, from: usize) -> Self {
        let start = if from < block.n { block.entries + block.off(from) } else { 0 };
        BlockRun { block, next: from, start }
    }

    /// The common prefix of every key of the block.
    #[inline]
    pub fn prefix(&self) -> &'a [u8] {
        self.block.prefix()
    }

    /// The decompressed block every suffix and value of the run borrows from.
    #[inline]
    pub fn bytes(&self) -> &'a Bytes {
        self.block.bytes()
    }

    /// Entries left in the run.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.block.n.saturating_sub(self.next)
    }

    /// Compares the key made of the block's prefix and `suffix` (one of the run's) with
    /// `target`, without assembling it.
    #[inline]
    pub fn cmp_suffix(&self, suffix: &[u8], target: &[u8]) -> Ordering {
        cmp_split(self.block.prefix(), suffix, target)
    }

    /// Compares the key of the block's last entry with `target` (`None` for an empty run):
    /// when it is before a bound, so is every key of the run.
    #[inline]
    pub fn cmp_last(&self, target: &[u8]) -> Option<Ordering> {
        let last = self.block.n.checked_sub(1).filter(|&l| l >= self.next)?;
        Some(self.block.cmp_key(last, target))
    }
}

impl<'a> Iterator for BlockRun<'a> {
    type Item = (&'a [u8], ValueRef<'a>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let b = self.block;
        if self.next >= b.n {
            return None;
        }
        self.next += 1;
        let end = if self.next < b.n { b.entries + b.off(self.next) } else { b.data.len() };
        let start = std::mem::replace(&mut self.start, end);
        prefetch(b.data.as_ptr().wrapping_add(end + PREFETCH_AHEAD));
        // Validated on decode: every entry parses; a bad one would read as empty.
        Some(b.data.get(start..end).and_then(parse_entry).unwrap_or((&[], EMPTY_VALUE)))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining(), Some(self.remaining()))
    }
}

/// How far past the next entry [`BlockRun`] asks the processor to load: a scan reads a
/// block's entries in order, and each one's first byte was otherwise a cache miss.
const PREFETCH_AHEAD: usize = 256;

/// Hints the processor to load the cache line at `p` (nothing elsewhere).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch is a hint: it never faults, whatever the address, and reads
        // nothing into the program; SSE, which provides it, is part of the x86_64 baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

const EMPTY_VALUE: ValueRef<'static> =
    ValueRef { meta: 0, version: 0, old_version: None, user_meta: &[], value: &[] };

#[cfg(test)]
mod tests {
    use super::*;

    fn v(version: u64, value: &[u8]) -> ValueRef<'_> {
        ValueRef { meta: 0, version, old_version: None, user_meta: b"um", value }
    }

    #[test]
    fn exact_bytes_of_a_two_entry_block() {
        let mut b = BlockBuilder::default();
        b.add(b"key1", &v(5, b"A"));
        b.add(b"key2", &v(6, b""));
        let mut out = Vec::new();
        b.finish_into(&mut out).unwrap();
        let mut want = Vec::new();
        want.extend_from_slice(&1u32.to_le_bytes());
        want.extend_from_slice(&2u32.to_le_bytes());
        want.extend_from_slice(&0u32.to_le_bytes());
        // entry 0: 2 + 1 + 1 + 8 + 1 + 2 + 1 = 16 bytes
        want.extend_from_slice(&16u32.to_le_bytes());
        want.extend_from_slice(&3u16.to_le_bytes());
        want.extend_from_slice(b"key");
        for (s, ver, val) in [(b"1", 5u64, &b"A"[..]), (b"2", 6, b"")] {
            want.extend_from_slice(&1u16.to_le_bytes());
            want.extend_from_slice(s);
            want.push(0);
            want.extend_from_slice(&ver.to_le_bytes());
            want.push(2);
            want.extend_from_slice(b"um");
            want.extend_from_slice(val);
        }
        assert_eq!(hex::encode(&out), hex::encode(&want));
        let blk = Block::decode(Bytes::from(out), BlockKind::Data, FileId(1), 0).unwrap();
        assert_eq!(blk.len(), 2);
        let (s, val) = blk.entry(1);
        assert_eq!(s, b"2");
        assert_eq!(val.version, 6);
        assert_eq!(blk.seek_ge(b"key15"), 1);
        assert_eq!(blk.seek_ge(b"a"), 0);
        assert_eq!(blk.seek_ge(b"key3"), 2);
        assert_eq!(blk.seek_gt(b"key1"), 1);
    }

    #[test]
    fn a_run_reads_the_entries_from_any_one_to_the_end() {
        let mut b = BlockBuilder::default();
        let keys: Vec<Vec<u8>> = (0..7u8).map(|i| format!("row{i:02}").into_bytes()).collect();
        for (i, k) in keys.iter().enumerate() {
            let mut val = v(10 + i as u64, &k[3..]);
            if i == 3 {
                val.old_version = Some(2);
                val.meta = BIT_HAS_OLD_VERSION;
            }
            b.add(k, &val);
        }
        let mut out = Vec::new();
        b.finish_into(&mut out).unwrap();
        let blk = Block::decode(Bytes::from(out), BlockKind::Data, FileId(1), 0).unwrap();
        for from in 0..=blk.len() {
            let run = BlockRun::new(&blk, from);
            assert_eq!(run.remaining(), blk.len() - from);
            assert_eq!(run.prefix(), b"row0");
            let got: Vec<_> = run.clone().collect();
            let want: Vec<_> = (from..blk.len()).map(|i| blk.entry(i)).collect();
            assert_eq!(got, want, "from {from}");
            for (i, (suffix, _)) in got.iter().enumerate() {
                let key = &keys[from + i];
                assert_eq!(run.cmp_suffix(suffix, key), Ordering::Equal);
                assert_eq!(run.cmp_suffix(suffix, b"row03x"), key.as_slice().cmp(b"row03x"));
            }
            let last = (from < blk.len()).then(|| keys[6].as_slice().cmp(b"row06"));
            assert_eq!(run.cmp_last(b"row06"), last);
        }
    }

    #[test]
    fn out_of_order_keys_are_rejected() {
        let mut b = BlockBuilder::default();
        b.add(b"b", &v(1, b""));
        b.add(b"a", &v(1, b""));
        let mut out = Vec::new();
        b.finish_into(&mut out).unwrap();
        let e = Block::decode(Bytes::from(out), BlockKind::Data, FileId(1), 64).unwrap_err();
        assert_eq!(e.corrupt_kind(), Some(CorruptKind::Inconsistent));
    }

    #[test]
    fn old_blocks_allow_equal_keys_with_decreasing_versions() {
        let mut b = BlockBuilder::default();
        b.add(b"a", &v(9, b""));
        b.add(b"a", &v(8, b""));
        let mut out = Vec::new();
        b.finish_into(&mut out).unwrap();
        let bytes = Bytes::from(out);
        Block::decode(bytes.clone(), BlockKind::Old, FileId(1), 0).unwrap();
        assert!(Block::decode(bytes, BlockKind::Data, FileId(1), 0).is_err());
    }
}
