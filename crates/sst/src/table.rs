//! Reading SST files: metadata, block sources, iterators and point gets.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use crate::block::{Block, BlockKind, BlockRun};
use crate::compress::decode_block;
use crate::error::{CorruptKind, Error, Result};
use crate::filter::KeyFilter;
use crate::footer::{FOOTER_SIZE, Footer};
use crate::index::{BlockHandle, Index};
use crate::props::Properties;
use crate::types::{BlockKey, FileId, Value, ValueRef};

/// Everything about a table except its data blocks: footer, both indexes, filter and
/// properties. This is what the metadata cache holds per file.
#[derive(Debug, Clone)]
pub struct TableMeta {
    file_id: FileId,
    base: u32,
    len: u64,
    footer: Footer,
    index: Index,
    old_index: Index,
    filter: KeyFilter,
    props: Properties,
}

/// Which section of a table a block belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    /// Latest version of each key.
    Data,
    /// Older versions.
    Old,
}

impl TableMeta {
    /// Parses the metadata of a whole table held in memory.
    pub fn from_table(file_id: FileId, table: &Bytes) -> Result<Self> {
        Self::from_tail(file_id, 0, table.clone(), 0, table.len() as u64)
    }

    /// Parses the metadata of the table of `table_len` bytes starting at absolute offset
    /// `base` of file `file_id`, from `tail` = the table's bytes `[tail_start, table_len)`.
    /// The tail must start at or before the footer's index offset; use
    /// [`footer_of`](Self::footer_of) on the last 28 bytes to learn it.
    pub fn from_tail(
        file_id: FileId,
        base: u32,
        tail: Bytes,
        tail_start: u64,
        table_len: u64,
    ) -> Result<Self> {
        let abs = |rel: u64| u64::from(base) + rel;
        if tail_start.checked_add(tail.len() as u64) != Some(table_len) {
            return Err(Error::corrupt(
                file_id,
                abs(tail_start),
                CorruptKind::Truncated,
                "tail does not reach the end of the table",
            ));
        }
        let footer_rel = table_len.checked_sub(FOOTER_SIZE as u64).ok_or_else(|| {
            Error::corrupt(file_id, abs(0), CorruptKind::Truncated, "file shorter than the footer")
        })?;
        if tail_start > footer_rel {
            return Err(Error::corrupt(
                file_id,
                abs(tail_start),
                CorruptKind::Truncated,
                "tail shorter than the footer",
            ));
        }
        let footer_buf = tail.get((footer_rel - tail_start) as usize..).unwrap_or_default();
        let footer = Footer::decode(footer_buf, table_len, file_id, abs(footer_rel))?;
        if u64::from(footer.index_offset) < tail_start {
            return Err(Error::corrupt(
                file_id,
                abs(u64::from(footer.index_offset)),
                CorruptKind::OutOfBounds,
                "metadata starts before the bytes read (meta offset mismatch)",
            ));
        }
        let section = |from: u32, to: u64| -> Bytes {
            let s = (u64::from(from) - tail_start) as usize;
            let e = (to - tail_start) as usize;
            tail.slice(s..e)
        };
        let index = Index::decode(
            section(footer.index_offset, u64::from(footer.old_index_offset)),
            footer.checksum,
            0..footer.old_data_offset,
            true,
            file_id,
            abs(u64::from(footer.index_offset)),
        )?;
        let old_index = Index::decode(
            section(footer.old_index_offset, u64::from(footer.aux_index_offset)),
            footer.checksum,
            footer.old_data_offset..footer.index_offset,
            false,
            file_id,
            abs(u64::from(footer.old_index_offset)),
        )?;
        let filter = KeyFilter::decode(
            &section(footer.aux_index_offset, u64::from(footer.properties_offset)),
            footer.checksum,
            file_id,
            abs(u64::from(footer.aux_index_offset)),
        )?;
        let props = Properties::decode(
            &section(footer.properties_offset, footer_rel),
            footer.checksum,
            file_id,
            abs(u64::from(footer.properties_offset)),
        )?;
        Ok(TableMeta { file_id, base, len: table_len, footer, index, old_index, filter, props })
    }

    /// Decodes just the footer from the last [`FOOTER_SIZE`] bytes of a table of
    /// `table_len` bytes.
    pub fn footer_of(file_id: FileId, last: &[u8], table_len: u64) -> Result<Footer> {
        let rel = table_len.saturating_sub(FOOTER_SIZE as u64);
        let buf = last.get(last.len().saturating_sub(FOOTER_SIZE)..).unwrap_or_default();
        Footer::decode(buf, table_len, file_id, rel)
    }

    /// The file this table lives in.
    pub fn file_id(&self) -> FileId {
        self.file_id
    }

    /// Absolute offset of the table in its file (non-zero for L0 column families).
    pub fn base(&self) -> u32 {
        self.base
    }

    /// Table length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when the table has no key.
    pub fn is_empty(&self) -> bool {
        self.index.len() == 0
    }

    /// The footer.
    pub fn footer(&self) -> &Footer {
        &self.footer
    }

    /// The properties.
    pub fn properties(&self) -> &Properties {
        &self.props
    }

    /// Offset of the metadata (index) section, what `TableCreate.meta_offset` carries.
    pub fn meta_offset(&self) -> u32 {
        self.footer.index_offset
    }

    /// Number of blocks in `section`.
    pub fn num_blocks(&self, section: Section) -> usize {
        self.index_of(section).len()
    }

    /// Handle of block `i` of `section` (`i < num_blocks(section)`).
    pub fn block_handle(&self, section: Section, i: usize) -> BlockHandle {
        self.index_of(section).handle(i)
    }

    /// First key of block `i` of `section`, written into `buf`.
    pub fn block_first_key(&self, section: Section, i: usize, buf: &mut Vec<u8>) {
        self.index_of(section).first_key_into(i, buf)
    }

    fn index_of(&self, section: Section) -> &Index {
        match section {
            Section::Data => &self.index,
            Section::Old => &self.old_index,
        }
    }

    /// Cache key of a block of this table.
    pub fn block_key(&self, handle: BlockHandle) -> BlockKey {
        BlockKey { file_id: self.file_id, offset: self.base.saturating_add(handle.offset) }
    }

    /// False only when `key` is certainly absent (filter check).
    pub fn may_contain(&self, key: &[u8]) -> bool {
        self.filter.may_contain(key)
    }

    /// Indexes of the blocks of `section` that may hold keys in `[start, end)`; an empty
    /// `end` means unbounded.
    pub fn blocks_for_range(&self, section: Section, start: &[u8], end: &[u8]) -> Range<usize> {
        let idx = self.index_of(section);
        let first = match section {
            Section::Data => idx.seek_gt(start).saturating_sub(1),
            // Versions of one key may straddle blocks: start at the block before the first
            // block whose first key is >= start.
            Section::Old => idx.seek_ge(start).saturating_sub(1),
        };
        let last = if end.is_empty() { idx.len() } else { idx.seek_ge(end) };
        first..last.max(first)
    }

    /// Stored (on-disk) bytes of the latest-version blocks overlapping `[start, end)` (empty
    /// `end` = unbounded): the per-table input of the storage node's offload decision
    /// (upstream `range_blocks_size`). Uses the index only.
    pub fn range_blocks_size(&self, start: &[u8], end: &[u8]) -> u64 {
        self.blocks_for_range(Section::Data, start, end)
            .map(|i| u64::from(self.index.handle(i).len))
            .sum()
    }

    /// Decodes the stored bytes of block `handle` (checksum, decompression, validation).
    pub fn decode_block(&self, handle: BlockHandle, stored: &Bytes) -> Result<Block> {
        let abs = u64::from(self.base) + u64::from(handle.offset);
        if stored.len() as u64 != u64::from(handle.len) {
            return Err(Error::corrupt(
                self.file_id,
                abs,
                CorruptKind::Truncated,
                "block shorter than its index entry",
            ));
        }
        let kind = if handle.offset < self.footer.old_data_offset {
            BlockKind::Data
        } else {
            BlockKind::Old
        };
        let payload =
            decode_block(stored, self.footer.compression, self.footer.checksum, self.file_id, abs)?;
        Block::decode(payload, kind, self.file_id, abs)
    }

    /// Bytes the stored block `stored` decodes to, read from its header (an upper bound, at
    /// most [`MAX_BLOCK_SIZE`](crate::MAX_BLOCK_SIZE)): what to reserve before decoding it.
    pub fn decoded_len(&self, stored: &[u8]) -> u64 {
        crate::compress::decoded_len(stored, self.footer.compression)
    }

    /// Approximate memory held, for cache weights.
    pub fn size(&self) -> usize {
        256 + self.index.size()
            + self.old_index.size()
            + self.filter.size()
            + self.props.smallest.len()
            + self.props.biggest.len()
    }
}

/// Where a table's blocks come from.
pub trait BlockSource {
    /// Returns the decoded block `handle` of the table `meta`.
    fn block(&self, meta: &TableMeta, handle: BlockHandle) -> Result<Block>;
}

/// A table held entirely in memory (a local file, an L0 file, a test).
#[derive(Debug, Clone)]
pub struct InMemory {
    data: Bytes,
}

impl InMemory {
    /// Wraps the table's bytes.
    pub fn new(data: Bytes) -> Self {
        InMemory { data }
    }
}

impl BlockSource for InMemory {
    fn block(&self, meta: &TableMeta, handle: BlockHandle) -> Result<Block> {
        let r = handle.range();
        let stored = self
            .data
            .get(r.start as usize..r.end as usize)
            .map(|s| self.data.slice_ref(s))
            .ok_or_else(|| {
                Error::corrupt(
                    meta.file_id,
                    u64::from(meta.base) + r.start,
                    CorruptKind::OutOfBounds,
                    "block past the end of the file",
                )
            })?;
        meta.decode_block(handle, &stored)
    }
}

impl<S: BlockSource + ?Sized> BlockSource for &S {
    fn block(&self, meta: &TableMeta, handle: BlockHandle) -> Result<Block> {
        (**self).block(meta, handle)
    }
}

impl<S: BlockSource + ?Sized> BlockSource for Arc<S> {
    fn block(&self, meta: &TableMeta, handle: BlockHandle) -> Result<Block> {
        (**self).block(meta, handle)
    }
}

/// A readable table: metadata plus a source of blocks.
#[derive(Debug, Clone)]
pub struct Table<S> {
    meta: Arc<TableMeta>,
    source: S,
}

impl Table<InMemory> {
    /// Opens a table held in memory.
    pub fn open_in_memory(file_id: FileId, data: Bytes) -> Result<Self> {
        let meta = TableMeta::from_table(file_id, &data)?;
        Ok(Table::new(Arc::new(meta), InMemory::new(data)))
    }
}

impl<S: BlockSource> Table<S> {
    /// Combines metadata and a block source.
    pub fn new(meta: Arc<TableMeta>, source: S) -> Self {
        Table { meta, source }
    }

    /// The table's metadata.
    pub fn meta(&self) -> &Arc<TableMeta> {
        &self.meta
    }

    /// The block source.
    pub fn source(&self) -> &S {
        &self.source
    }

    fn load(&self, section: Section, i: usize) -> Result<Block> {
        self.source.block(&self.meta, self.meta.block_handle(section, i))
    }

    /// An unpositioned iterator over the latest version of each key.
    pub fn iter(&self) -> TableIter<'_, S> {
        TableIter {
            table: self,
            block_idx: usize::MAX,
            block: None,
            entry: 0,
            valid: false,
            key: Vec::new(),
        }
    }

    /// The newest version of `key` with version `<= read_ts`, consulting the filter first.
    pub fn get(&self, key: &[u8], read_ts: u64) -> Result<Option<Value>> {
        if !self.meta.may_contain(key) {
            return Ok(None);
        }
        let i = self.meta.index.seek_gt(key);
        if i == 0 {
            return Ok(None);
        }
        let block = self.load(Section::Data, i - 1)?;
        let pos = block.seek_ge(key);
        if pos >= block.len() || block.cmp_key(pos, key).is_ne() {
            return Ok(None);
        }
        let (_, v) = block.entry(pos);
        if v.version <= read_ts {
            return Ok(Some(block.to_value(&v)));
        }
        match v.old_version {
            Some(_) => self.get_old(key, read_ts),
            None => Ok(None),
        }
    }

    /// The newest older version (old-version section) of `key` with version `<= read_ts`.
    fn get_old(&self, key: &[u8], read_ts: u64) -> Result<Option<Value>> {
        let range = self.meta.blocks_for_range(Section::Old, key, &[]);
        for b in range {
            let block = self.load(Section::Old, b)?;
            let mut pos = block.seek_ge(key);
            while pos < block.len() {
                if block.cmp_key(pos, key).is_gt() {
                    return Ok(None);
                }
                let (_, v) = block.entry(pos);
                if v.version <= read_ts {
                    return Ok(Some(block.to_value(&v)));
                }
                pos += 1;
            }
        }
        Ok(None)
    }
}

/// Iterator over the latest version of each key, forward and backward.
///
/// Moving within a cached block reads entry offsets in place: no allocation (the key
/// buffer is reused) and no decompression per entry.
#[derive(Debug)]
pub struct TableIter<'a, S> {
    table: &'a Table<S>,
    block_idx: usize,
    block: Option<Block>,
    entry: usize,
    valid: bool,
    key: Vec<u8>,
}

impl<S: BlockSource> TableIter<'_, S> {
    /// True when positioned on an entry.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current key (empty when not valid).
    pub fn key(&self) -> &[u8] {
        if self.valid { &self.key } else { &[] }
    }

    /// The decoded block the current entry lies in: [`value`](Self::value)'s bytes are a
    /// slice of it, so a caller may keep the value past the iterator's next step by holding
    /// this buffer (a cheap reference count) instead of copying. `None` when not valid.
    pub fn block_bytes(&self) -> Option<&Bytes> {
        match (&self.block, self.valid) {
            (Some(b), true) => Some(b.bytes()),
            _ => None,
        }
    }

    /// The current block from the current entry to its end (`None` when not valid): a
    /// forward scan reads a block's entries from it without stepping the iterator key by
    /// key, then moves past what it used with [`skip_in_block`](Self::skip_in_block) and
    /// [`next`](Self::next).
    #[inline]
    pub fn block_run(&self) -> Option<BlockRun<'_>> {
        match (&self.block, self.valid) {
            (Some(b), true) => Some(BlockRun::new(b, self.entry)),
            _ => None,
        }
    }

    /// Moves forward `k` entries within the current block. A `k` that would leave the block
    /// stops on its last entry: crossing into the next block is [`next`](Self::next)'s work.
    pub fn skip_in_block(&mut self, k: usize) {
        if !self.valid || k == 0 {
            return;
        }
        let last = self.block.as_ref().map_or(0, |b| b.len().saturating_sub(1));
        self.settle(self.entry.saturating_add(k).min(last));
    }

    /// The latest version of the current key.
    pub fn value(&self) -> ValueRef<'_> {
        match (&self.block, self.valid) {
            (Some(b), true) => b.entry(self.entry).1,
            _ => ValueRef { meta: 0, version: 0, old_version: None, user_meta: &[], value: &[] },
        }
    }

    /// The newest version of the current key with version `<= read_ts`, looking into the
    /// old-version section when the latest is too new. `None` when there is none.
    pub fn value_at(&self, read_ts: u64) -> Result<Option<Value>> {
        let Some(b) = self.block.as_ref().filter(|_| self.valid) else {
            return Ok(None);
        };
        let (_, v) = b.entry(self.entry);
        if v.version <= read_ts {
            return Ok(Some(b.to_value(&v)));
        }
        match v.old_version {
            Some(_) => self.table.get_old(&self.key, read_ts),
            None => Ok(None),
        }
    }

    fn set_block(&mut self, i: usize) -> Result<()> {
        if self.block_idx != i || self.block.is_none() {
            self.block = None;
            self.block = Some(self.table.load(Section::Data, i)?);
            self.block_idx = i;
        }
        Ok(())
    }

    /// Positions on entry `e` of the current block, or marks invalid.
    fn settle(&mut self, e: usize) {
        self.entry = e;
        match &self.block {
            Some(b) if e < b.len() => {
                b.key_into(e, &mut self.key);
                self.valid = true;
            }
            _ => self.valid = false,
        }
    }

    fn num_blocks(&self) -> usize {
        self.table.meta.index.len()
    }

    /// Positions on the first key `>= key`.
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        self.valid = false;
        let n = self.num_blocks();
        let mut i = self.table.meta.index.seek_gt(key).saturating_sub(1);
        while i < n {
            self.set_block(i)?;
            let pos = self.block.as_ref().map_or(0, |b| b.seek_ge(key));
            if self.block.as_ref().is_some_and(|b| pos < b.len()) {
                self.settle(pos);
                return Ok(());
            }
            i += 1;
        }
        Ok(())
    }

    /// Positions on the last key `<= key`.
    pub fn seek_for_prev(&mut self, key: &[u8]) -> Result<()> {
        self.valid = false;
        let mut i = self.table.meta.index.seek_gt(key);
        while i > 0 {
            i -= 1;
            self.set_block(i)?;
            let pos = self.block.as_ref().map_or(0, |b| b.seek_gt(key));
            if pos > 0 {
                self.settle(pos - 1);
                return Ok(());
            }
        }
        Ok(())
    }

    /// Positions on the smallest key.
    pub fn seek_to_first(&mut self) -> Result<()> {
        self.valid = false;
        if self.num_blocks() > 0 {
            self.set_block(0)?;
            self.settle(0);
            if !self.valid {
                return self.next_block();
            }
        }
        Ok(())
    }

    /// Positions on the biggest key.
    pub fn seek_to_last(&mut self) -> Result<()> {
        self.valid = false;
        let n = self.num_blocks();
        if n > 0 {
            self.set_block(n - 1)?;
            let len = self.block.as_ref().map_or(0, Block::len);
            if len == 0 {
                return self.prev_block();
            }
            self.settle(len - 1);
        }
        Ok(())
    }

    fn next_block(&mut self) -> Result<()> {
        let n = self.num_blocks();
        let mut i = self.block_idx;
        while i.wrapping_add(1) < n {
            i += 1;
            self.set_block(i)?;
            self.settle(0);
            if self.valid {
                return Ok(());
            }
        }
        self.valid = false;
        Ok(())
    }

    fn prev_block(&mut self) -> Result<()> {
        let mut i = self.block_idx;
        while i > 0 && i != usize::MAX {
            i -= 1;
            self.set_block(i)?;
            let len = self.block.as_ref().map_or(0, Block::len);
            if len > 0 {
                self.settle(len - 1);
                return Ok(());
            }
        }
        self.valid = false;
        Ok(())
    }

    /// Moves to the next key. Does nothing when not valid.
    #[inline]
    #[expect(
        clippy::should_implement_trait,
        reason = "a fallible cursor step (seek/next/prev/valid), not an Iterator"
    )]
    pub fn next(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        let e = self.entry + 1;
        if let Some(b) = &self.block
            && e < b.len()
        {
            self.entry = e;
            let plen = b.prefix().len();
            self.key.truncate(plen);
            self.key.extend_from_slice(b.suffix(e));
            return Ok(());
        }
        self.next_block()
    }

    /// Moves to the previous key. Does nothing when not valid.
    pub fn prev(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        if self.entry > 0 {
            self.settle(self.entry - 1);
            return Ok(());
        }
        self.prev_block()
    }
}

impl Block {
    /// Copies nothing: the returned value's bytes are slices of the block's buffer.
    pub(crate) fn to_value(&self, v: &ValueRef<'_>) -> Value {
        Value {
            meta: v.meta,
            version: v.version,
            old_version: v.old_version,
            user_meta: self.slice_ref(v.user_meta),
            value: self.slice_ref(v.value),
        }
    }
}
