//! Writing SST files.

use bytes::Bytes;

use crate::block::BlockBuilder;
use crate::compress::encode_block;
use crate::error::{Error, Result};
use crate::filter::{encode_filter, key_hash};
use crate::footer::{Footer, MAGIC};
use crate::index::IndexBuilder;
use crate::props::Properties;
use crate::types::{BIT_HAS_OLD_VERSION, ChecksumType, Compression, FileId, NewValue, ValueRef};

/// Default target size of a data block before compression (upstream default).
pub const DEFAULT_BLOCK_SIZE: usize = 64 << 10;
/// Default size at which [`TableBuilder::is_full`] reports true (upstream default).
pub const DEFAULT_MAX_TABLE_SIZE: usize = 16 << 20;
/// Default Zstd level (upstream default).
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;

/// Knobs of a [`TableBuilder`].
///
/// Non-exhaustive: outside this crate, start from [`BuilderOptions::default`] or
/// [`BuilderOptions::for_level`] and adjust with the `with_*` setters or the public fields.
///
/// ```
/// use rcop_sst::{BuilderOptions, Compression};
///
/// let opts = BuilderOptions::for_level(1).with_block_size(4 << 10);
/// assert_eq!((opts.block_size, opts.compression), (4 << 10, Compression::Lz4));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BuilderOptions {
    /// Target uncompressed size of a block; a block is closed once it reaches this size.
    pub block_size: usize,
    /// Size at which [`TableBuilder::is_full`] turns true.
    pub max_table_size: usize,
    /// Compression of the data blocks.
    pub compression: Compression,
    /// Zstd level when `compression` is Zstd.
    pub zstd_level: i32,
    /// Checksum of every section.
    pub checksum: ChecksumType,
}

impl Default for BuilderOptions {
    fn default() -> Self {
        BuilderOptions {
            block_size: DEFAULT_BLOCK_SIZE,
            max_table_size: DEFAULT_MAX_TABLE_SIZE,
            compression: Compression::Lz4,
            zstd_level: DEFAULT_ZSTD_LEVEL,
            checksum: ChecksumType::Crc32c,
        }
    }
}

impl BuilderOptions {
    /// Sets [`block_size`](Self::block_size).
    #[must_use]
    pub fn with_block_size(mut self, bytes: usize) -> Self {
        self.block_size = bytes;
        self
    }

    /// Sets [`max_table_size`](Self::max_table_size).
    #[must_use]
    pub fn with_max_table_size(mut self, bytes: usize) -> Self {
        self.max_table_size = bytes;
        self
    }

    /// Sets [`compression`](Self::compression).
    #[must_use]
    pub fn with_compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Sets [`zstd_level`](Self::zstd_level).
    #[must_use]
    pub fn with_zstd_level(mut self, level: i32) -> Self {
        self.zstd_level = level;
        self
    }

    /// Sets [`checksum`](Self::checksum).
    #[must_use]
    pub fn with_checksum(mut self, checksum: ChecksumType) -> Self {
        self.checksum = checksum;
        self
    }

    /// Options for a table of LSM `level`: L0 is stored uncompressed, L1 uses LZ4 and
    /// deeper levels Zstd (upstream's per-level `[LZ4, ZSTD, ZSTD]`), or LZ4 when this build
    /// lacks the `zstd` feature.
    pub fn for_level(level: u32) -> Self {
        BuilderOptions { compression: Self::compression_for_level(level), ..Self::default() }
    }

    /// The compression upstream uses for `level`. Without the `zstd` feature, levels that
    /// upstream compresses with Zstd get LZ4, so default options always build.
    pub fn compression_for_level(level: u32) -> Compression {
        match level {
            0 => Compression::None,
            1 => Compression::Lz4,
            #[cfg(feature = "zstd")]
            _ => Compression::Zstd,
            #[cfg(not(feature = "zstd"))]
            _ => Compression::Lz4,
        }
    }
}

/// The newest entry seen, held back until the next key tells whether an older version
/// follows it.
#[derive(Debug, Default)]
struct Pending {
    key: Vec<u8>,
    meta: u8,
    version: u64,
    user_meta: Vec<u8>,
    value: Vec<u8>,
    latest: bool,
}

/// Builds one SST file in memory.
///
/// Add entries with [`add`](Self::add) in key order, newest version first within a key;
/// the first version of each key goes to the data section, the others to the old-version
/// section. [`finish`](Self::finish) returns the file bytes.
#[derive(Debug)]
pub struct TableBuilder {
    file_id: FileId,
    opts: BuilderOptions,
    data: Vec<u8>,
    old: Vec<u8>,
    data_block: BlockBuilder,
    old_block: BlockBuilder,
    data_index: IndexBuilder,
    old_index: IndexBuilder,
    pending: Option<Pending>,
    hashes: Vec<u64>,
    props: Properties,
    scratch: Vec<u8>,
}

impl TableBuilder {
    /// A builder for file `file_id` (recorded in the index as each block's origin).
    pub fn new(file_id: FileId, opts: BuilderOptions) -> Self {
        TableBuilder {
            file_id,
            opts,
            data: Vec::new(),
            old: Vec::new(),
            data_block: BlockBuilder::default(),
            old_block: BlockBuilder::default(),
            data_index: IndexBuilder::default(),
            old_index: IndexBuilder::default(),
            pending: None,
            hashes: Vec::new(),
            props: Properties::default(),
            scratch: Vec::new(),
        }
    }

    /// Adds one version of `key`.
    ///
    /// Errors with [`Error::InvalidInput`] when `key` sorts before the previous key, when a
    /// version is not strictly older than the previous version of the same key, when the
    /// key is longer than 65535 bytes, the user meta longer than 255 bytes, or the entry too
    /// large for a block ([`MAX_BLOCK_SIZE`](crate::MAX_BLOCK_SIZE) less framing).
    pub fn add(&mut self, key: &[u8], v: &NewValue<'_>) -> Result<()> {
        let invalid = |reason: &str| Err(Error::InvalidInput { reason: reason.to_string() });
        if key.len() > u16::MAX as usize {
            return invalid("key longer than 65535 bytes");
        }
        if v.user_meta.len() > u8::MAX as usize {
            return invalid("user meta longer than 255 bytes");
        }
        // Leave room for the block header and entry framing: a block must decode under
        // MAX_BLOCK_SIZE.
        if key.len() + v.value.len() + v.user_meta.len() > crate::compress::MAX_BLOCK_SIZE - 4096 {
            return invalid("entry larger than the maximum block size");
        }
        let latest = match &self.pending {
            None => true,
            Some(p) => match p.key.as_slice().cmp(key) {
                std::cmp::Ordering::Less => true,
                std::cmp::Ordering::Equal if v.version < p.version => false,
                std::cmp::Ordering::Equal => {
                    return invalid("versions of a key must be added newest first");
                }
                std::cmp::Ordering::Greater => {
                    return invalid("keys must be added in ascending order");
                }
            },
        };
        let mut p = match self.pending.take() {
            Some(mut p) => {
                let old_version = (!latest).then_some(v.version);
                self.flush_pending(&p, old_version)?;
                p.key.clear();
                p.user_meta.clear();
                p.value.clear();
                p
            }
            None => Pending::default(),
        };
        p.key.extend_from_slice(key);
        p.meta = v.meta & !BIT_HAS_OLD_VERSION;
        p.version = v.version;
        p.user_meta.extend_from_slice(v.user_meta);
        p.value.extend_from_slice(v.value);
        p.latest = latest;
        self.pending = Some(p);
        Ok(())
    }

    fn flush_pending(&mut self, p: &Pending, old_version: Option<u64>) -> Result<()> {
        let meta = if old_version.is_some() { p.meta | BIT_HAS_OLD_VERSION } else { p.meta };
        let v = ValueRef {
            meta,
            version: p.version,
            old_version,
            user_meta: &p.user_meta,
            value: &p.value,
        };
        self.props.max_ts = self.props.max_ts.max(p.version);
        if p.latest {
            if self.props.entries == 0 {
                self.props.smallest = Bytes::copy_from_slice(&p.key);
            }
            self.props.entries += 1;
            if p.value.is_empty() {
                self.props.tombs += 1;
            }
            self.props.kv_size += (p.key.len() + p.user_meta.len() + p.value.len()) as u64;
            self.hashes.push(key_hash(&p.key));
            if self.data_block.estimated_size() >= self.opts.block_size {
                self.finish_block(false)?;
            }
            if self.data_block.is_empty() {
                self.data_index.add(&p.key, offset_u32(self.data.len())?);
            }
            self.data_block.add(&p.key, &v);
        } else {
            self.props.old_entries += 1;
            if self.old_block.estimated_size() >= self.opts.block_size {
                self.finish_block(true)?;
            }
            if self.old_block.is_empty() {
                self.old_index.add(&p.key, offset_u32(self.old.len())?);
            }
            self.old_block.add(&p.key, &v);
        }
        Ok(())
    }

    fn finish_block(&mut self, old: bool) -> Result<()> {
        let (block, out) = if old {
            (&mut self.old_block, &mut self.old)
        } else {
            (&mut self.data_block, &mut self.data)
        };
        if block.is_empty() {
            return Ok(());
        }
        self.scratch.clear();
        block.finish_into(&mut self.scratch)?;
        encode_block(
            &self.scratch,
            self.opts.compression,
            self.opts.checksum,
            self.opts.zstd_level,
            self.file_id,
            out,
        )
    }

    /// Bytes written so far plus the open blocks (uncompressed): what the file would
    /// roughly weigh if finished now.
    pub fn estimated_size(&self) -> usize {
        self.data.len()
            + self.old.len()
            + self.data_block.estimated_size()
            + self.old_block.estimated_size()
            + self.pending.as_ref().map_or(0, |p| p.key.len() + p.value.len() + p.user_meta.len())
    }

    /// True once [`estimated_size`](Self::estimated_size) reaches the table size limit: the
    /// caller should finish this table at the next key boundary and start another.
    pub fn is_full(&self) -> bool {
        self.estimated_size() >= self.opts.max_table_size
    }

    /// True when nothing was added.
    pub fn is_empty(&self) -> bool {
        self.pending.is_none()
    }

    /// The file id this builder writes.
    pub fn file_id(&self) -> FileId {
        self.file_id
    }

    /// Finishes the file and returns its bytes.
    pub fn finish(self) -> Result<Bytes> {
        self.finish_with_magic(MAGIC)
    }

    pub(crate) fn finish_with_magic(mut self, magic: u32) -> Result<Bytes> {
        if let Some(p) = self.pending.take() {
            self.flush_pending(&p, None)?;
            self.props.biggest = Bytes::copy_from_slice(&p.key);
        }
        self.finish_block(false)?;
        self.finish_block(true)?;
        let mut out = std::mem::take(&mut self.data);
        let old_data_offset = offset_u32(out.len())?;
        out.extend_from_slice(&self.old);
        let index_offset = offset_u32(out.len())?;
        self.data_index.finish_into(self.file_id, 0, self.opts.checksum, &mut out)?;
        let old_index_offset = offset_u32(out.len())?;
        self.old_index.finish_into(self.file_id, old_data_offset, self.opts.checksum, &mut out)?;
        let aux_index_offset = offset_u32(out.len())?;
        encode_filter(&mut self.hashes, self.opts.checksum, &mut out);
        let properties_offset = offset_u32(out.len())?;
        self.props.encode_into(self.opts.checksum, &mut out);
        Footer {
            old_data_offset,
            index_offset,
            old_index_offset,
            aux_index_offset,
            properties_offset,
            compression: self.opts.compression,
            checksum: self.opts.checksum,
            magic,
        }
        .encode_into(&mut out);
        offset_u32(out.len())?;
        Ok(Bytes::from(out))
    }
}

fn offset_u32(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::InvalidInput {
        reason: "table larger than 4 GiB cannot be addressed by u32 offsets".into(),
    })
}
