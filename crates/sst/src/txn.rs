//! Transaction chunk files (`{prefix}/txn/{xx}/{id:016x}.txn`): the cloud engine writes the
//! mutations of a large transaction into chunks in object storage instead of its memtable,
//! and ships references to them (mem-data v2's `TxnFileRefs`) with an offloaded request.
//!
//! Layout (format 1, little-endian; every section ends with a `u32` checksum of its content,
//! under the footer's checksum type — trailing, where an SST's comes first):
//!
//! ```text
//! [data blocks][index][hash index][properties][footer: 20 bytes]
//! footer:  u32 index_offset | u32 hash_index_offset | u32 properties_offset | u8 0 |
//!          u8 checksum type | u16 format = 1 | u32 magic 0xA608B6CC
//! block:   u32 n | u16 common_prefix_len | (n + 1) × u32 entry offset |
//!          entries (u16 suffix_len | suffix | u8 op | value) | u32 checksum
//! index:   u32 n_blocks | (n + 1) × u32 block offset | (n + 1) × u32 key offset |
//!          first key of each block, then the chunk's biggest key | u32 checksum
//! hash:    u32 n_buckets | u32 0 | n_buckets × u32 end | 12-byte entries | u32 checksum
//! props:   repeated (u16 klen | key | u32 vlen | value) | u32 checksum
//! ```
//!
//! A block's common key prefix is not stored in the block: it is the first
//! `common_prefix_len` bytes of the block's first key in the index. Keys are the shard's
//! inner keys, sorted and unique in a chunk. Ops are kvrpcpb's (`Put` 0, `Del` 1, `Lock` 2,
//! `Insert` 4, `CheckNotExists` 6). A chunk with the `encryption_ver` property is encrypted
//! (not read here: [`Error::Unsupported`]). The reader never uses the hash index (it scans);
//! the builder writes one (farmhash `fingerprint64` of each key, bucket = hash mod a power
//! of two), whose bucket layout is not checked against upstream's reader.

use bytes::Bytes;

use crate::error::{CorruptKind, Error, Result};
use crate::types::{ChecksumType, FileId};

/// The chunk footer's magic number.
pub const TXN_CHUNK_MAGIC: u32 = 0xA608_B6CC;
/// The chunk format this module reads and writes.
pub const TXN_CHUNK_FORMAT: u16 = 1;
/// Bytes of the footer.
pub const TXN_CHUNK_FOOTER_SIZE: usize = 20;

/// `kvrpcpb.Op::Put`.
pub const OP_PUT: u8 = 0;
/// `kvrpcpb.Op::Del`.
pub const OP_DELETE: u8 = 1;
/// `kvrpcpb.Op::Lock`: a lock only, no data (invisible to reads).
pub const OP_LOCK: u8 = 2;
/// `kvrpcpb.Op::Insert`.
pub const OP_INSERT: u8 = 4;
/// `kvrpcpb.Op::CheckNotExists`: a constraint only (invisible to reads).
pub const OP_CHECK_NOT_EXISTS: u8 = 6;

/// The object key of transaction chunk `id` under `prefix`:
/// `{prefix}/txn/{xx}/{id:016x}.txn`, `xx` as for SSTs (the low byte of farmhash
/// `fingerprint64` of the id's little-endian bytes, in hex).
pub fn txn_chunk_key(prefix: &str, id: u64) -> String {
    let xx = farmhash::fingerprint64(&id.to_le_bytes()) & 0xff;
    let prefix = prefix.trim_end_matches('/');
    if prefix.is_empty() {
        format!("txn/{xx:02x}/{id:016x}.txn")
    } else {
        format!("{prefix}/txn/{xx:02x}/{id:016x}.txn")
    }
}

/// One entry of a chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnEntry {
    /// The inner key (the block's common prefix and the entry's suffix).
    pub key: Vec<u8>,
    /// The mutation (`OP_*`).
    pub op: u8,
    /// The value (a slice of the chunk's bytes).
    pub value: Bytes,
}

/// A parsed transaction chunk: footer, index and properties checked; blocks checked as they
/// are read.
#[derive(Debug, Clone)]
pub struct TxnChunk {
    id: FileId,
    data: Bytes,
    checksum: ChecksumType,
    /// `[start, end)` of each block in the file.
    blocks: Vec<(usize, usize)>,
    /// The first key of each block.
    first_keys: Vec<Bytes>,
    biggest: Bytes,
}

struct Cursor<'a> {
    id: FileId,
    data: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Cursor<'a> {
    fn new(id: FileId, data: &'a [u8], base: usize) -> Self {
        Cursor { id, data, pos: 0, base }
    }

    fn err(&self, kind: CorruptKind, detail: &'static str) -> Error {
        Error::corrupt(self.id, (self.base + self.pos) as u64, kind, detail)
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.data.len());
        let Some(end) = end else { return Err(self.err(CorruptKind::Truncated, what)) };
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u16(&mut self, what: &'static str) -> Result<u16> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self, what: &'static str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn offsets(&mut self, n: usize, what: &'static str) -> Result<Vec<usize>> {
        // The count comes from the file: check the bytes exist before allocating.
        let need = n.checked_mul(4).ok_or_else(|| self.err(CorruptKind::OutOfBounds, what))?;
        let raw = self.take(need, what)?;
        Ok(raw
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize)
            .collect())
    }
}

/// Splits `section` (at file offset `base`) into its content and checks the trailing
/// checksum.
fn checked(
    id: FileId,
    section: &[u8],
    base: usize,
    checksum: ChecksumType,
    what: &'static str,
) -> Result<std::ops::Range<usize>> {
    let Some(len) = section.len().checked_sub(4) else {
        return Err(Error::corrupt(id, base as u64, CorruptKind::Truncated, what));
    };
    let stored =
        u32::from_le_bytes([section[len], section[len + 1], section[len + 2], section[len + 3]]);
    if checksum != ChecksumType::None && checksum.compute(&section[..len]) != stored {
        return Err(Error::corrupt(id, base as u64, CorruptKind::ChecksumMismatch, what));
    }
    Ok(base..base + len)
}

fn increasing(offsets: &[usize], end: usize) -> bool {
    offsets.windows(2).all(|w| w[0] <= w[1]) && offsets.last().is_none_or(|l| *l <= end)
}

impl TxnChunk {
    /// Parses chunk `id` from its whole file.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] for a bad footer, section bounds, checksum or index;
    /// [`Error::Unsupported`] for an encrypted chunk.
    pub fn parse(id: u64, data: Bytes) -> Result<TxnChunk> {
        let fid = FileId(id);
        let bad = |off: usize, kind, detail| Error::corrupt(fid, off as u64, kind, detail);
        let size = data.len();
        let Some(footer_at) = size.checked_sub(TXN_CHUNK_FOOTER_SIZE) else {
            return Err(bad(0, CorruptKind::Truncated, "txn chunk shorter than its footer"));
        };
        let mut f = Cursor::new(fid, &data[footer_at..], footer_at);
        let index_offset = f.u32("footer")? as usize;
        let hash_offset = f.u32("footer")? as usize;
        let props_offset = f.u32("footer")? as usize;
        let _reserved = f.take(1, "footer")?;
        let checksum_byte = f.take(1, "footer")?[0];
        let format = f.u16("footer")?;
        let magic = f.u32("footer")?;
        if magic != TXN_CHUNK_MAGIC {
            return Err(bad(footer_at, CorruptKind::BadMagic, "not a txn chunk"));
        }
        if format != TXN_CHUNK_FORMAT {
            return Err(bad(footer_at, CorruptKind::Unsupported, "txn chunk format"));
        }
        let checksum = ChecksumType::from_byte(checksum_byte)
            .ok_or_else(|| bad(footer_at, CorruptKind::Unsupported, "txn chunk checksum type"))?;
        if !(index_offset <= hash_offset
            && hash_offset <= props_offset
            && props_offset <= footer_at)
        {
            return Err(bad(footer_at, CorruptKind::Inconsistent, "txn chunk section offsets"));
        }

        let props =
            checked(fid, &data[props_offset..footer_at], props_offset, checksum, "properties")?;
        let mut p = Cursor::new(fid, &data[props.clone()], props.start);
        while p.pos < p.data.len() {
            let klen = p.u16("property key")? as usize;
            let key = p.take(klen, "property key")?;
            let vlen = p.u32("property value")? as usize;
            let _value = p.take(vlen, "property value")?;
            if key == b"encryption_ver" {
                return Err(Error::Unsupported {
                    file_id: fid,
                    what: "an encrypted txn chunk",
                    feature: "encryption (not built)",
                });
            }
        }
        // The hash index is not read (entries are scanned), but its bytes must be whole.
        checked(fid, &data[hash_offset..props_offset], hash_offset, checksum, "hash index")
            .map(|_| ())
            .or_else(|e| match e.corrupt_kind() {
                // Its checksum's coverage is not pinned against upstream: bounds only.
                Some(CorruptKind::ChecksumMismatch) => Ok(()),
                _ => Err(e),
            })?;

        let index =
            checked(fid, &data[index_offset..hash_offset], index_offset, checksum, "index")?;
        let mut ix = Cursor::new(fid, &data[index.clone()], index.start);
        let n = ix.u32("index")? as usize;
        let block_offs = ix.offsets(n.saturating_add(1), "block offsets")?;
        let key_offs = ix.offsets(n.saturating_add(1), "key offsets")?;
        let keys_at = index.start + ix.pos;
        let keys = data.slice(keys_at..index.end);
        if block_offs.first() != Some(&0) || block_offs.last() != Some(&index_offset) {
            return Err(bad(index.start, CorruptKind::Inconsistent, "block offsets"));
        }
        if !increasing(&block_offs, index_offset) || !increasing(&key_offs, keys.len()) {
            return Err(bad(index.start, CorruptKind::Inconsistent, "index offsets"));
        }
        let mut first_keys = Vec::with_capacity(n);
        let mut blocks = Vec::with_capacity(n);
        for i in 0..n {
            first_keys.push(keys.slice(key_offs[i]..key_offs[i + 1]));
            blocks.push((block_offs[i], block_offs[i + 1]));
        }
        let biggest = keys.slice(key_offs[n]..);
        if first_keys.windows(2).any(|w| w[0] >= w[1])
            || first_keys.last().is_some_and(|k| *k > biggest)
        {
            return Err(bad(index.start, CorruptKind::Inconsistent, "block keys out of order"));
        }
        Ok(TxnChunk { id: fid, data, checksum, blocks, first_keys, biggest })
    }

    /// The chunk id.
    pub fn id(&self) -> u64 {
        self.id.0
    }

    /// Number of data blocks.
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// The smallest key (empty for a chunk without blocks).
    pub fn smallest(&self) -> &[u8] {
        self.first_keys.first().map_or(&[], |k| k.as_ref())
    }

    /// The biggest key.
    pub fn biggest(&self) -> &[u8] {
        &self.biggest
    }

    /// Calls `f` with every entry, in key order; stops at the first error.
    ///
    /// # Errors
    ///
    /// [`Error::Corrupt`] for a block whose checksum, offsets or keys do not hold (keys must
    /// increase strictly within and across blocks and stay within the chunk's biggest key);
    /// what `f` returns.
    pub fn for_each<E: From<Error>>(
        &self,
        mut f: impl FnMut(TxnEntry) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        // The previous entry's key (empty before the first: every key is greater).
        let mut prev: Vec<u8> = Vec::new();
        let mut first_entry = true;
        for (i, &(start, end)) in self.blocks.iter().enumerate() {
            let content =
                checked(self.id, &self.data[start..end], start, self.checksum, "data block")?;
            let block = &self.data[content.clone()];
            let mut c = Cursor::new(self.id, block, start);
            let n = c.u32("block entry count")? as usize;
            let prefix_len = c.u16("block prefix length")? as usize;
            let offs = c.offsets(n.saturating_add(1), "entry offsets")?;
            let area = content.start + c.pos;
            let area_len = content.end - area;
            if offs.first() != Some(&0)
                || offs.last() != Some(&area_len)
                || !increasing(&offs, area_len)
            {
                return Err(Error::corrupt(
                    self.id,
                    start as u64,
                    CorruptKind::Inconsistent,
                    "entry offsets",
                )
                .into());
            }
            let first = &self.first_keys[i];
            let Some(prefix) = first.get(..prefix_len) else {
                return Err(Error::corrupt(
                    self.id,
                    start as u64,
                    CorruptKind::OutOfBounds,
                    "common prefix longer than the first key",
                )
                .into());
            };
            for j in 0..n {
                let (a, b) = (area + offs[j], area + offs[j + 1]);
                let mut e = Cursor::new(self.id, &self.data[a..b], a);
                let slen = e.u16("entry key length")? as usize;
                let suffix = e.take(slen, "entry key")?;
                let op = e.take(1, "entry op")?[0];
                let value = self.data.slice(a + e.pos..b);
                let mut key = Vec::with_capacity(prefix.len() + suffix.len());
                key.extend_from_slice(prefix);
                key.extend_from_slice(suffix);
                let ordered = first_entry || prev < key;
                if !ordered
                    || (j == 0 && key.as_slice() != first.as_ref())
                    || key.as_slice() > self.biggest.as_ref()
                {
                    return Err(Error::corrupt(
                        self.id,
                        a as u64,
                        CorruptKind::Inconsistent,
                        "txn chunk keys out of order",
                    )
                    .into());
                }
                prev.clear();
                prev.extend_from_slice(&key);
                first_entry = false;
                f(TxnEntry { key, op, value })?;
            }
        }
        Ok(())
    }
}

/// Writes a transaction chunk: add entries in strictly increasing key order, then
/// [`finish`](Self::finish).
#[derive(Debug)]
pub struct TxnChunkBuilder {
    target_block_size: usize,
    checksum: ChecksumType,
    out: Vec<u8>,
    block: Vec<(Vec<u8>, u8, Vec<u8>)>,
    block_bytes: usize,
    block_offs: Vec<u32>,
    first_keys: Vec<Vec<u8>>,
    last_key: Option<Vec<u8>>,
    hashes: Vec<(u64, u16, u16)>,
    inserts: u32,
    check_not_exists: u32,
    constraint_blocks: Vec<u8>,
}

impl TxnChunkBuilder {
    /// A builder cutting blocks at about `target_block_size` bytes (upstream: 64 KiB) with
    /// CRC-32C checksums.
    pub fn new(target_block_size: usize) -> Self {
        TxnChunkBuilder {
            target_block_size: target_block_size.max(1),
            checksum: ChecksumType::Crc32c,
            out: Vec::new(),
            block: Vec::new(),
            block_bytes: 0,
            block_offs: Vec::new(),
            first_keys: Vec::new(),
            last_key: None,
            hashes: Vec::new(),
            inserts: 0,
            check_not_exists: 0,
            constraint_blocks: Vec::new(),
        }
    }

    /// Adds an entry.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidInput`] for a key not greater than the previous one, or a key suffix
    /// or a block past the format's `u16`/`u32` fields.
    pub fn add(&mut self, key: &[u8], op: u8, value: &[u8]) -> Result<()> {
        if self.last_key.as_deref().is_some_and(|p| p >= key) {
            return Err(Error::InvalidInput { reason: "txn chunk keys must increase".into() });
        }
        if u16::try_from(key.len()).is_err() {
            return Err(Error::InvalidInput { reason: "txn chunk key over 64 KiB".into() });
        }
        self.last_key = Some(key.to_vec());
        match op {
            OP_INSERT => self.inserts += 1,
            OP_CHECK_NOT_EXISTS => self.check_not_exists += 1,
            _ => {}
        }
        self.block_bytes += key.len() + value.len() + 3;
        self.block.push((key.to_vec(), op, value.to_vec()));
        if self.block_bytes >= self.target_block_size {
            self.finish_block()?;
        }
        Ok(())
    }

    fn finish_block(&mut self) -> Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let block = std::mem::take(&mut self.block);
        self.block_bytes = 0;
        let first = &block[0].0;
        let last = &block[block.len() - 1].0;
        let prefix_len = first.iter().zip(last.iter()).take_while(|(a, b)| a == b).count();
        let prefix_len = prefix_len.min(usize::from(u16::MAX));
        let too_big = || Error::InvalidInput { reason: "txn chunk block over 4 GiB".into() };
        let start = self.out.len();
        self.block_offs.push(u32::try_from(start).map_err(|_| too_big())?);
        let block_idx = u16::try_from(self.first_keys.len()).map_err(|_| too_big())?;
        self.first_keys.push(first.clone());
        let mut entries = Vec::new();
        let mut offs = vec![0u32];
        let mut constraint = 0u8;
        for (k_idx, (key, op, value)) in block.iter().enumerate() {
            let suffix = &key[prefix_len..];
            entries.extend_from_slice(&(suffix.len() as u16).to_le_bytes());
            entries.extend_from_slice(suffix);
            entries.push(*op);
            entries.extend_from_slice(value);
            offs.push(u32::try_from(entries.len()).map_err(|_| too_big())?);
            let k_idx = u16::try_from(k_idx).map_err(|_| too_big())?;
            self.hashes.push((farmhash::fingerprint64(key), block_idx, k_idx));
            if matches!(*op, OP_INSERT | OP_CHECK_NOT_EXISTS) {
                constraint = 1;
            }
        }
        self.constraint_blocks.push(constraint);
        self.out
            .extend_from_slice(&u32::try_from(block.len()).map_err(|_| too_big())?.to_le_bytes());
        self.out.extend_from_slice(&(prefix_len as u16).to_le_bytes());
        for o in offs {
            self.out.extend_from_slice(&o.to_le_bytes());
        }
        self.out.extend_from_slice(&entries);
        let sum = self.checksum.compute(&self.out[start..]);
        self.out.extend_from_slice(&sum.to_le_bytes());
        Ok(())
    }

    fn seal(&mut self, start: usize) {
        let sum = self.checksum.compute(&self.out[start..]);
        self.out.extend_from_slice(&sum.to_le_bytes());
    }

    /// Finishes the chunk and returns its bytes.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidInput`] for a chunk past the format's `u32` offsets.
    pub fn finish(mut self) -> Result<Vec<u8>> {
        self.finish_block()?;
        let too_big = || Error::InvalidInput { reason: "txn chunk over 4 GiB".into() };
        let u32_of = |v: usize| u32::try_from(v).map_err(|_| too_big());
        let index_offset = self.out.len();
        let n = self.first_keys.len();
        self.out.extend_from_slice(&u32_of(n)?.to_le_bytes());
        for o in &self.block_offs {
            self.out.extend_from_slice(&o.to_le_bytes());
        }
        self.out.extend_from_slice(&u32_of(index_offset)?.to_le_bytes());
        let mut keys = Vec::new();
        let mut key_offs = Vec::with_capacity(n + 1);
        for k in &self.first_keys {
            key_offs.push(u32_of(keys.len())?);
            keys.extend_from_slice(k);
        }
        key_offs.push(u32_of(keys.len())?);
        keys.extend_from_slice(self.last_key.as_deref().unwrap_or(&[]));
        for o in key_offs {
            self.out.extend_from_slice(&o.to_le_bytes());
        }
        self.out.extend_from_slice(&keys);
        self.seal(index_offset);

        let hash_offset = self.out.len();
        let buckets = (self.hashes.len().next_power_of_two() / 4).max(2);
        let mut by_bucket: Vec<Vec<(u64, u16, u16)>> = vec![Vec::new(); buckets];
        for h in &self.hashes {
            by_bucket[(h.0 as usize) & (buckets - 1)].push(*h);
        }
        self.out.extend_from_slice(&u32_of(buckets)?.to_le_bytes());
        self.out.extend_from_slice(&0u32.to_le_bytes());
        let mut end = 0usize;
        for b in &by_bucket {
            end += b.len() * 12;
            self.out.extend_from_slice(&u32_of(end)?.to_le_bytes());
        }
        for b in &by_bucket {
            for (hash, block, key) in b {
                self.out.extend_from_slice(&hash.to_le_bytes());
                self.out.extend_from_slice(&block.to_le_bytes());
                self.out.extend_from_slice(&key.to_le_bytes());
            }
        }
        self.seal(hash_offset);

        let props_offset = self.out.len();
        let mut prop = |key: &[u8], value: &[u8]| {
            self.out.extend_from_slice(&(key.len() as u16).to_le_bytes());
            self.out.extend_from_slice(key);
            self.out.extend_from_slice(&(value.len() as u32).to_le_bytes());
            self.out.extend_from_slice(value);
        };
        prop(b"check_ne", &self.check_not_exists.to_le_bytes());
        prop(b"insert", &self.inserts.to_le_bytes());
        let blocks = std::mem::take(&mut self.constraint_blocks);
        prop(b"check_blks", &blocks);
        self.seal(props_offset);

        let mut footer = Vec::with_capacity(TXN_CHUNK_FOOTER_SIZE);
        footer.extend_from_slice(&u32_of(index_offset)?.to_le_bytes());
        footer.extend_from_slice(&u32_of(hash_offset)?.to_le_bytes());
        footer.extend_from_slice(&u32_of(props_offset)?.to_le_bytes());
        footer.push(0);
        footer.push(self.checksum.to_byte());
        footer.extend_from_slice(&TXN_CHUNK_FORMAT.to_le_bytes());
        footer.extend_from_slice(&TXN_CHUNK_MAGIC.to_le_bytes());
        self.out.extend_from_slice(&footer);
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Entries = Vec<(Vec<u8>, u8, Vec<u8>)>;

    fn entries(n: usize) -> Entries {
        (0..n)
            .map(|i| {
                let op = [OP_PUT, OP_DELETE, OP_LOCK, OP_INSERT, OP_CHECK_NOT_EXISTS][i % 5];
                let value =
                    if op == OP_DELETE { Vec::new() } else { format!("value-{i}").into_bytes() };
                (format!("t\x00key{i:06}").into_bytes(), op, value)
            })
            .collect()
    }

    fn build(es: &[(Vec<u8>, u8, Vec<u8>)], block: usize) -> Bytes {
        let mut b = TxnChunkBuilder::new(block);
        for (k, op, v) in es {
            b.add(k, *op, v).unwrap();
        }
        Bytes::from(b.finish().unwrap())
    }

    fn read(c: &TxnChunk) -> Result<Entries> {
        let mut out = Vec::new();
        c.for_each::<Error>(|e| {
            out.push((e.key, e.op, e.value.to_vec()));
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn round_trips_across_block_sizes() {
        let es = entries(1000);
        for block in [1, 64, 4096, 1 << 20] {
            let c = TxnChunk::parse(7, build(&es, block)).unwrap();
            assert_eq!(read(&c).unwrap(), es, "block size {block}");
            assert_eq!(c.smallest(), es[0].0.as_slice());
            assert_eq!(c.biggest(), es[999].0.as_slice());
            if block == 1 {
                assert_eq!(c.num_blocks(), 1000);
            }
        }
        let empty = TxnChunk::parse(1, build(&[], 64)).unwrap();
        assert_eq!(read(&empty).unwrap(), vec![]);
    }

    #[test]
    fn every_byte_flip_is_refused_or_changes_nothing_silently() {
        let es = entries(40);
        let good = build(&es, 256);
        let mut accepted_changed = 0;
        for i in 0..good.len() {
            for bit in [0x01u8, 0x80] {
                let mut bad = good.to_vec();
                bad[i] ^= bit;
                let parsed = TxnChunk::parse(7, Bytes::from(bad)).and_then(|c| read(&c));
                if let Ok(got) = parsed
                    && got != es
                {
                    accepted_changed += 1;
                }
            }
        }
        // Only the hash index (not read) may change without an error.
        assert_eq!(accepted_changed, 0);
    }

    #[test]
    fn hostile_headers_do_not_allocate_or_panic() {
        let good = build(&entries(10), 64).to_vec();
        let n = good.len();
        // An index claiming 2^32-1 blocks.
        let index_offset =
            u32::from_le_bytes([good[n - 20], good[n - 19], good[n - 18], good[n - 17]]) as usize;
        let mut bad = good.clone();
        bad[index_offset..index_offset + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(TxnChunk::parse(1, Bytes::from(bad)).is_err());
        for len in 0..24 {
            assert!(
                TxnChunk::parse(1, Bytes::from(good[n.saturating_sub(len)..].to_vec())).is_err()
            );
        }
        let mut b = TxnChunkBuilder::new(64);
        b.add(b"b", OP_PUT, b"").unwrap();
        assert!(b.add(b"a", OP_PUT, b"").is_err());
        assert!(b.add(b"b", OP_PUT, b"").is_err());
    }

    #[test]
    fn encrypted_chunks_are_unsupported() {
        let mut b = TxnChunkBuilder::new(64);
        b.add(b"a", OP_PUT, b"v").unwrap();
        let mut bytes = b.finish().unwrap();
        // Rewrite the properties with an `encryption_ver`.
        let n = bytes.len();
        let props_offset =
            u32::from_le_bytes([bytes[n - 12], bytes[n - 11], bytes[n - 10], bytes[n - 9]])
                as usize;
        let footer = bytes[n - 20..].to_vec();
        bytes.truncate(props_offset);
        let mut props = Vec::new();
        props.extend_from_slice(&14u16.to_le_bytes());
        props.extend_from_slice(b"encryption_ver");
        props.extend_from_slice(&4u32.to_le_bytes());
        props.extend_from_slice(&1u32.to_le_bytes());
        let sum = ChecksumType::Crc32c.compute(&props);
        bytes.extend_from_slice(&props);
        bytes.extend_from_slice(&sum.to_le_bytes());
        bytes.extend_from_slice(&footer);
        assert!(matches!(TxnChunk::parse(1, Bytes::from(bytes)), Err(Error::Unsupported { .. })));
    }

    #[cfg(feature = "object-store")]
    #[test]
    fn object_keys_follow_the_sst_layout() {
        let k = txn_chunk_key("pre/", 0x1234);
        assert!(k.starts_with("pre/txn/") && k.ends_with("/0000000000001234.txn"), "{k}");
        let sst = crate::store::object_key("pre", FileId(0x1234));
        assert_eq!(&k[8..10], &sst[4..6], "same hash byte as the SST key");
    }
}
