//! The key filter ("aux index"): a binary fuse filter with 8-bit fingerprints over the
//! farmhash `fingerprint64` of each distinct key.
//!
//! Layout (little-endian), see `docs/design/0003-sst-format.md`:
//!
//! ```text
//! u32 checksum | u32 filter type | u32 len | len bytes
//! type 0 = no filter (len 0); type 1 = BinaryFuse8, bytes =
//!   u64 seed | u32 segment_length | u32 segment_length_mask | u32 segment_count_length | fingerprints
//! ```

use bytes::Bytes;
use xorf::{BinaryFuse8, Filter as _};

use crate::codec::{Cursor, put_u32, put_u64};
use crate::error::{CorruptKind, Error, Result};
use crate::types::{ChecksumType, FileId};

/// Filter type: none.
pub const FILTER_NONE: u32 = 0;
/// Filter type: BinaryFuse8 (serialization v1 of this crate).
pub const FILTER_BINARY_FUSE8: u32 = 1;

/// The 64-bit key hash the filter is built over.
#[inline]
pub fn key_hash(key: &[u8]) -> u64 {
    farmhash::fingerprint64(key)
}

/// Appends the encoded filter over `hashes` (any order, duplicates allowed) to `out`.
pub(crate) fn encode_filter(hashes: &mut Vec<u64>, checksum: ChecksumType, out: &mut Vec<u8>) {
    hashes.sort_unstable();
    hashes.dedup();
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    match (!hashes.is_empty()).then(|| BinaryFuse8::try_from(hashes.as_slice()).ok()).flatten() {
        Some(f) => {
            put_u32(out, FILTER_BINARY_FUSE8);
            put_u32(out, (20 + f.fingerprints.len()) as u32);
            put_u64(out, f.descriptor.seed);
            put_u32(out, f.descriptor.segment_length);
            put_u32(out, f.descriptor.segment_length_mask);
            put_u32(out, f.descriptor.segment_count_length);
            out.extend_from_slice(&f.fingerprints);
        }
        // Construction fails only for pathological inputs; a table without a filter is
        // still correct, point gets just go to the index.
        None => {
            put_u32(out, FILTER_NONE);
            put_u32(out, 0);
        }
    }
    let sum = checksum.compute(&out[start + 4..]);
    out[start..start + 4].copy_from_slice(&sum.to_le_bytes());
}

/// A decoded key filter.
#[derive(Debug, Clone)]
pub(crate) enum KeyFilter {
    /// The table has no filter: every key may be present.
    None,
    /// A validated binary fuse filter.
    Fuse(Box<BinaryFuse8>),
}

impl KeyFilter {
    /// Decodes and validates the aux-index section. `abs` is its absolute file offset.
    pub(crate) fn decode(
        data: &Bytes,
        checksum: ChecksumType,
        file_id: FileId,
        abs: u64,
    ) -> Result<Self> {
        let corrupt = |k, d| Error::corrupt(file_id, abs, k, d);
        let mut c = Cursor::checked_section(data, checksum, file_id, abs, "filter checksum")?;
        let ty = c.u32("filter type")?;
        let len = c.u32("filter length")? as usize;
        let body = c.bytes(len, "filter body")?;
        match ty {
            FILTER_NONE if len == 0 => Ok(KeyFilter::None),
            FILTER_BINARY_FUSE8 => {
                let mut b = Cursor::new(body, file_id, abs + 12);
                let seed = b.u64("filter seed")?;
                let segment_length = b.u32("filter segment length")?;
                let segment_length_mask = b.u32("filter segment mask")?;
                let segment_count_length = b.u32("filter segment count length")?;
                let fingerprints = b.bytes(b.remaining(), "filter fingerprints")?;
                // Every probe index is < segment_count_length + 2 × segment_length when the
                // segment length is a power of two, the mask is length − 1 and there is at
                // least one segment; require that, so lookups cannot index out of bounds.
                let need = u64::from(segment_count_length) + 2 * u64::from(segment_length);
                let ok = segment_length.is_power_of_two()
                    && segment_length_mask == segment_length - 1
                    && segment_count_length >= segment_length
                    && segment_count_length % segment_length == 0
                    && need <= u64::from(u32::MAX)
                    && fingerprints.len() as u64 >= need;
                if !ok {
                    return Err(corrupt(CorruptKind::Inconsistent, "filter descriptor"));
                }
                Ok(KeyFilter::Fuse(Box::new(BinaryFuse8 {
                    descriptor: xorf::Descriptor {
                        seed,
                        segment_length,
                        segment_length_mask,
                        segment_count_length,
                    },
                    fingerprints: fingerprints.into(),
                })))
            }
            _ => Err(corrupt(CorruptKind::Unsupported, "filter type")),
        }
    }

    /// False only when `key` is certainly not in the table.
    pub(crate) fn may_contain(&self, key: &[u8]) -> bool {
        match self {
            KeyFilter::None => true,
            KeyFilter::Fuse(f) => f.contains(&key_hash(key)),
        }
    }

    pub(crate) fn size(&self) -> usize {
        match self {
            KeyFilter::None => 0,
            KeyFilter::Fuse(f) => f.fingerprints.len() + 32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn farmhash_fingerprint64_known_vector() {
        // Published example of farmhash's Fingerprint64.
        assert_eq!(key_hash(b"hello world"), 6381520714923946011);
        // Cross-checked against Google's C++ FarmHash (`Fingerprint64`) through its Python
        // binding, covering the short, medium and long code paths.
        let long: Vec<u8> = (0..200u8).collect();
        let cases: [(&[u8], u64); 6] = [
            (b"", 11160318154034397263),
            (b"a", 12917804110809363939),
            (b"0123456789abcdef", 6105018409752412263),
            (&[b'x'; 33], 12270365409943098935),
            (&[b'y'; 65], 13246502507848426076),
            (&long, 525935771297148851),
        ];
        for (input, want) in cases {
            assert_eq!(key_hash(input), want, "len {}", input.len());
        }
    }

    #[test]
    fn no_false_negatives_and_few_false_positives() {
        let keys: Vec<Vec<u8>> = (0..5000u32).map(|i| format!("key{i:06}").into_bytes()).collect();
        let mut hashes: Vec<u64> = keys.iter().map(|k| key_hash(k)).collect();
        let mut out = Vec::new();
        encode_filter(&mut hashes, ChecksumType::Crc32c, &mut out);
        let f = KeyFilter::decode(&Bytes::from(out), ChecksumType::Crc32c, FileId(1), 0).unwrap();
        assert!(matches!(f, KeyFilter::Fuse(_)));
        assert!(keys.iter().all(|k| f.may_contain(k)));
        let fp = (0..10_000u32).filter(|i| f.may_contain(format!("other{i}").as_bytes())).count();
        assert!(fp < 100, "false positives {fp}");
    }

    #[test]
    fn empty_key_set_writes_no_filter() {
        let mut out = Vec::new();
        encode_filter(&mut Vec::new(), ChecksumType::Crc32c, &mut out);
        assert_eq!(&out[4..], &[0, 0, 0, 0, 0, 0, 0, 0]);
        let f = KeyFilter::decode(&Bytes::from(out), ChecksumType::Crc32c, FileId(1), 0).unwrap();
        assert!(f.may_contain(b"anything"));
    }

    #[test]
    fn inconsistent_descriptor_is_rejected() {
        let mut hashes = vec![1, 2, 3];
        let mut out = Vec::new();
        encode_filter(&mut hashes, ChecksumType::None, &mut out);
        // Bump the segment length (offset 4 + 4 + 4 + 8) to a value the fingerprints can't hold.
        out[20..24].copy_from_slice(&(1u32 << 20).to_le_bytes());
        let e = KeyFilter::decode(&Bytes::from(out), ChecksumType::None, FileId(1), 0).unwrap_err();
        assert_eq!(e.corrupt_kind(), Some(CorruptKind::Inconsistent));
    }
}
