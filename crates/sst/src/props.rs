//! Table properties.
//!
//! Layout: `u32 checksum` then repeated `u16 key_len | key | u32 value_len | value` up to the
//! footer. Keys are ASCII names; numbers are `u64` little-endian. Unknown keys are skipped so
//! newer writers can add properties.

use bytes::Bytes;

use crate::codec::{Cursor, put_u16, put_u32};
use crate::error::{CorruptKind, Error, Result};
use crate::types::{ChecksumType, FileId};

/// Statistics and bounds of one table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Properties {
    /// Smallest key (empty for an empty table).
    pub smallest: Bytes,
    /// Biggest key (empty for an empty table).
    pub biggest: Bytes,
    /// Largest version of any entry.
    pub max_ts: u64,
    /// Number of distinct keys (latest-version entries).
    pub entries: u64,
    /// Number of older-version entries.
    pub old_entries: u64,
    /// Number of latest-version entries with an empty value.
    pub tombs: u64,
    /// Σ over latest-version entries of key + user meta + value length (uncompressed).
    pub kv_size: u64,
    /// Bytes of blob files referenced (always 0: this crate writes no blob refs itself).
    pub in_use_total_blob_size: u64,
}

const SMALLEST: &[u8] = b"smallest";
const BIGGEST: &[u8] = b"biggest";
const MAX_TS: &[u8] = b"max_ts";
const ENTRIES: &[u8] = b"entries";
const OLD_ENTRIES: &[u8] = b"old_entries";
const TOMBS: &[u8] = b"tombs";
const KV_SIZE: &[u8] = b"kv_size";
const BLOB_SIZE: &[u8] = b"in_use_total_blob_size";
const ENCRYPTION_VER: &[u8] = b"encryption_ver";

impl Properties {
    /// Appends the encoded section (with checksum) to `out`.
    pub(crate) fn encode_into(&self, checksum: ChecksumType, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        let mut kv = |k: &[u8], v: &[u8]| {
            put_u16(out, k.len() as u16);
            out.extend_from_slice(k);
            put_u32(out, v.len() as u32);
            out.extend_from_slice(v);
        };
        kv(SMALLEST, &self.smallest);
        kv(BIGGEST, &self.biggest);
        kv(MAX_TS, &self.max_ts.to_le_bytes());
        kv(ENTRIES, &self.entries.to_le_bytes());
        kv(OLD_ENTRIES, &self.old_entries.to_le_bytes());
        kv(TOMBS, &self.tombs.to_le_bytes());
        kv(KV_SIZE, &self.kv_size.to_le_bytes());
        kv(BLOB_SIZE, &self.in_use_total_blob_size.to_le_bytes());
        let sum = checksum.compute(&out[start + 4..]);
        out[start..start + 4].copy_from_slice(&sum.to_le_bytes());
    }

    /// Decodes the section. `abs` is its absolute file offset.
    pub(crate) fn decode(
        data: &Bytes,
        checksum: ChecksumType,
        file_id: FileId,
        abs: u64,
    ) -> Result<Self> {
        let corrupt = |k, d| Error::corrupt(file_id, abs, k, d);
        let mut c = Cursor::checked_section(data, checksum, file_id, abs, "properties checksum")?;
        let mut p = Properties::default();
        while c.remaining() > 0 {
            let kl = c.u16("property key length")? as usize;
            let k = c.bytes(kl, "property key")?;
            let vl = c.u32("property value length")? as usize;
            let vpos = c.pos();
            let v = c.bytes(vl, "property value")?;
            let num = || -> Result<u64> {
                let a: [u8; 8] = v.try_into().map_err(|_| {
                    corrupt(CorruptKind::Inconsistent, "numeric property is not 8 bytes")
                })?;
                Ok(u64::from_le_bytes(a))
            };
            match k {
                SMALLEST => p.smallest = data.slice(vpos..vpos + vl),
                BIGGEST => p.biggest = data.slice(vpos..vpos + vl),
                MAX_TS => p.max_ts = num()?,
                ENTRIES => p.entries = num()?,
                OLD_ENTRIES => p.old_entries = num()?,
                TOMBS => p.tombs = num()?,
                KV_SIZE => p.kv_size = num()?,
                BLOB_SIZE => p.in_use_total_blob_size = num()?,
                // Upstream encrypts the data blocks of such a file (AES-256-CTR under a key
                // this crate does not have): refused, not decoded as corrupt bytes.
                ENCRYPTION_VER => {
                    return Err(Error::Unsupported {
                        file_id,
                        what: "an encrypted SST",
                        feature: "encryption (not built)",
                    });
                }
                _ => {}
            }
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_exact_prefix() {
        let p = Properties {
            smallest: Bytes::from_static(b"a"),
            biggest: Bytes::from_static(b"zz"),
            max_ts: 42,
            entries: 3,
            old_entries: 1,
            tombs: 1,
            kv_size: 77,
            in_use_total_blob_size: 0,
        };
        let mut out = Vec::new();
        p.encode_into(ChecksumType::Crc32c, &mut out);
        assert_eq!(hex::encode(&out[4..4 + 2 + 8 + 4 + 1]), "0800736d616c6c6573740100000061");
        let q = Properties::decode(&Bytes::from(out), ChecksumType::Crc32c, FileId(1), 0).unwrap();
        assert_eq!(p, q);
    }

    #[test]
    fn an_encrypted_file_is_unsupported_not_corrupt() {
        let mut out = Vec::new();
        Properties::default().encode_into(ChecksumType::Crc32c, &mut out);
        // Append `encryption_ver` = 1 and re-seal the checksum.
        put_u16(&mut out, ENCRYPTION_VER.len() as u16);
        out.extend_from_slice(ENCRYPTION_VER);
        put_u32(&mut out, 4);
        out.extend_from_slice(&1u32.to_le_bytes());
        let sum = ChecksumType::Crc32c.compute(&out[4..]);
        out[..4].copy_from_slice(&sum.to_le_bytes());
        let e =
            Properties::decode(&Bytes::from(out), ChecksumType::Crc32c, FileId(9), 0).unwrap_err();
        assert!(matches!(e, Error::Unsupported { file_id: FileId(9), .. }), "{e}");
    }
}
