//! The 28-byte SST footer.

use crate::codec::{Cursor, put_u16, put_u32};
use crate::error::{CorruptKind, Error, Result};
use crate::types::{ChecksumType, Compression, FileId};

/// Footer size in bytes.
pub const FOOTER_SIZE: usize = 28;
/// Magic number of an SST file.
pub const MAGIC: u32 = 2_940_551_257;
/// Magic number of a "split L0" write-CF-only SST file (same layout).
pub const MAGIC_SPLIT_L0: u32 = 2_940_551_258;
/// The table format version this crate writes and reads.
pub const TABLE_FORMAT_VERSION: u16 = 1;

/// Section offsets and encoding of one table, all relative to the table start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// Start of the old-version data blocks (= end of the latest-version blocks).
    pub old_data_offset: u32,
    /// Start of the index (= the `meta_offset` carried by `TableCreate`).
    pub index_offset: u32,
    /// Start of the old-version index.
    pub old_index_offset: u32,
    /// Start of the filter ("aux index").
    pub aux_index_offset: u32,
    /// Start of the properties.
    pub properties_offset: u32,
    /// Compression of the data blocks.
    pub compression: Compression,
    /// Checksum algorithm of every section.
    pub checksum: ChecksumType,
    /// Magic number ([`MAGIC`] or [`MAGIC_SPLIT_L0`]).
    pub magic: u32,
}

impl Footer {
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        put_u32(out, self.old_data_offset);
        put_u32(out, self.index_offset);
        put_u32(out, self.old_index_offset);
        put_u32(out, self.aux_index_offset);
        put_u32(out, self.properties_offset);
        out.push(self.compression.to_byte());
        out.push(self.checksum.to_byte());
        put_u16(out, TABLE_FORMAT_VERSION);
        put_u32(out, self.magic);
    }

    /// Decodes and checks a footer of a table of `table_len` bytes. `abs` is the absolute
    /// offset of the footer in its file.
    pub(crate) fn decode(buf: &[u8], table_len: u64, file_id: FileId, abs: u64) -> Result<Footer> {
        let corrupt = |k, d| Error::corrupt(file_id, abs, k, d);
        let mut c = Cursor::new(buf, file_id, abs);
        let old_data_offset = c.u32("footer")?;
        let index_offset = c.u32("footer")?;
        let old_index_offset = c.u32("footer")?;
        let aux_index_offset = c.u32("footer")?;
        let properties_offset = c.u32("footer")?;
        let compression = c.u8("footer")?;
        let checksum = c.u8("footer")?;
        let version = c.u16("footer")?;
        let magic = c.u32("footer")?;
        if magic != MAGIC && magic != MAGIC_SPLIT_L0 {
            return Err(corrupt(CorruptKind::BadMagic, "footer magic"));
        }
        if version != TABLE_FORMAT_VERSION {
            return Err(corrupt(CorruptKind::Unsupported, "table format version"));
        }
        let compression = Compression::from_byte(compression)
            .ok_or_else(|| corrupt(CorruptKind::Unsupported, "compression type"))?;
        let checksum = ChecksumType::from_byte(checksum)
            .ok_or_else(|| corrupt(CorruptKind::Unsupported, "checksum type"))?;
        let footer_start = table_len.saturating_sub(FOOTER_SIZE as u64);
        let ordered = old_data_offset <= index_offset
            && index_offset <= old_index_offset
            && old_index_offset <= aux_index_offset
            && aux_index_offset <= properties_offset
            && u64::from(properties_offset) <= footer_start;
        if !ordered {
            return Err(corrupt(CorruptKind::OutOfBounds, "section offsets"));
        }
        Ok(Footer {
            old_data_offset,
            index_offset,
            old_index_offset,
            aux_index_offset,
            properties_offset,
            compression,
            checksum,
            magic,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_bytes() {
        let f = Footer {
            old_data_offset: 1,
            index_offset: 2,
            old_index_offset: 3,
            aux_index_offset: 4,
            properties_offset: 5,
            compression: Compression::Lz4,
            checksum: ChecksumType::Crc32c,
            magic: MAGIC,
        };
        let mut out = Vec::new();
        f.encode_into(&mut out);
        assert_eq!(hex::encode(&out), "010000000200000003000000040000000500000001010100594045af");
        assert_eq!(Footer::decode(&out, 100, FileId(1), 72).unwrap(), f);
        let mut bad = out.clone();
        bad[27] ^= 0xff;
        let e = Footer::decode(&bad, 100, FileId(1), 72).unwrap_err();
        assert_eq!(e.corrupt_kind(), Some(CorruptKind::BadMagic));
        assert!(matches!(e, Error::Corrupt { offset: 72, .. }));
        // Sections past the footer start.
        assert!(Footer::decode(&out, 30, FileId(1), 2).is_err());
    }
}
