//! Small value types shared by the format, the store and the caches.

use std::fmt;

use bytes::Bytes;

/// The id of an SST or L0 file (allocated from the placement driver's TSO upstream).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FileId(pub u64);

impl fmt::Display for FileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// Key of one decompressed block in the block cache: the file and the block's absolute
/// offset in that file (for an L0 file, the offset includes the column family's start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlockKey {
    /// The file holding the block.
    pub file_id: FileId,
    /// Absolute byte offset of the block's checksum field in the file.
    pub offset: u32,
}

/// Compression of the data blocks of one file (footer byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// Stored as is (footer value 0).
    #[default]
    None,
    /// `u32` uncompressed length, then one raw LZ4 block (footer value 1).
    Lz4,
    /// One Zstandard frame (footer value 2).
    Zstd,
}

impl Compression {
    /// The footer byte.
    pub fn to_byte(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Lz4 => 1,
            Compression::Zstd => 2,
        }
    }

    /// Parses the footer byte.
    pub fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(Compression::None),
            1 => Some(Compression::Lz4),
            2 => Some(Compression::Zstd),
            _ => None,
        }
    }
}

/// Checksum algorithm of the blocks of one file (footer byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ChecksumType {
    /// No checksum; the `u32` field is written as 0 and not verified (footer value 0).
    None,
    /// CRC-32C (Castagnoli), the default (footer value 1).
    #[default]
    Crc32c,
    /// CRC-32 (IEEE), read-only support for older files (footer value 2).
    Crc32,
}

impl ChecksumType {
    /// The footer byte.
    pub fn to_byte(self) -> u8 {
        match self {
            ChecksumType::None => 0,
            ChecksumType::Crc32c => 1,
            ChecksumType::Crc32 => 2,
        }
    }

    /// Parses the footer byte.
    pub fn from_byte(b: u8) -> Option<Self> {
        match b {
            0 => Some(ChecksumType::None),
            1 => Some(ChecksumType::Crc32c),
            2 => Some(ChecksumType::Crc32),
            _ => None,
        }
    }

    /// The checksum of `data` under this algorithm.
    pub fn compute(self, data: &[u8]) -> u32 {
        match self {
            ChecksumType::None => 0,
            ChecksumType::Crc32c => crc32c::crc32c(data),
            ChecksumType::Crc32 => crc32fast::hash(data),
        }
    }
}

/// Entry meta bit: the entry is a kvengine tombstone.
pub const BIT_DELETE: u8 = 1;
/// Entry meta bit: an older version of the key follows in the old-version section; the
/// entry carries its version number in the `old_version` field.
pub const BIT_HAS_OLD_VERSION: u8 = 2;
/// Entry meta bit: the value is a reference into a blob file.
pub const BIT_BLOB_REF: u8 = 4;

/// One version of a key as stored in a block, borrowed from the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueRef<'a> {
    /// Meta bits ([`BIT_DELETE`], [`BIT_HAS_OLD_VERSION`], [`BIT_BLOB_REF`]).
    pub meta: u8,
    /// The version (commit ts in the write column family).
    pub version: u64,
    /// The next older version of the same key, when [`BIT_HAS_OLD_VERSION`] is set.
    pub old_version: Option<u64>,
    /// Up to 255 bytes of user meta.
    pub user_meta: &'a [u8],
    /// The value bytes.
    pub value: &'a [u8],
}

impl ValueRef<'_> {
    /// True when the kvengine delete bit is set.
    pub fn is_deleted(&self) -> bool {
        self.meta & BIT_DELETE != 0
    }
}

/// One version of a key, owning its bytes (slices of a shared block buffer, no copy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Value {
    /// Meta bits.
    pub meta: u8,
    /// The version.
    pub version: u64,
    /// The next older version, when one exists in the file.
    pub old_version: Option<u64>,
    /// User meta bytes.
    pub user_meta: Bytes,
    /// Value bytes.
    pub value: Bytes,
}

/// One version to add to a [`TableBuilder`](crate::TableBuilder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewValue<'a> {
    /// Meta bits; [`BIT_HAS_OLD_VERSION`] is managed by the builder and ignored here.
    pub meta: u8,
    /// The version; versions of one key must be added newest first.
    pub version: u64,
    /// User meta, at most 255 bytes.
    pub user_meta: &'a [u8],
    /// The value.
    pub value: &'a [u8],
}
