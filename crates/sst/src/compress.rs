//! Block checksums and compression.
//!
//! A stored block is `u32 checksum | payload`, where the checksum covers the payload bytes
//! as stored (compressed). LZ4 payloads are `u32 uncompressed length | raw LZ4 block`;
//! Zstd payloads are one frame that records its content size. Without the `zstd` feature,
//! Zstd blocks are neither written nor read: both give [`Error::Unsupported`].

use bytes::Bytes;

use crate::error::{CorruptKind, Error, Result};
use crate::types::{ChecksumType, Compression, FileId};

/// Upper bound on a decompressed block. Blocks are 64 KiB by default; one huge entry can
/// make a block larger (the builder refuses entries that would not fit under this bound).
/// It keeps a corrupt length field, or a tiny zstd frame that claims a huge content size,
/// from asking for more: 64 MiB covers TiDB's default 6 MiB entry limit with a wide margin
/// while bounding the amplification of a hostile 20-byte frame.
pub const MAX_BLOCK_SIZE: usize = 64 << 20;

/// Appends `u32 checksum | compressed(payload)` to `out`; on error `out` is left as it was.
///
/// `file_id` names the file being written in errors.
pub(crate) fn encode_block(
    payload: &[u8],
    compression: Compression,
    checksum: ChecksumType,
    zstd_level: i32,
    file_id: FileId,
    out: &mut Vec<u8>,
) -> Result<()> {
    let start = out.len();
    let res = encode_into(payload, compression, checksum, zstd_level, file_id, out);
    if res.is_err() {
        out.truncate(start);
    }
    res
}

fn encode_into(
    payload: &[u8],
    compression: Compression,
    checksum: ChecksumType,
    zstd_level: i32,
    file_id: FileId,
    out: &mut Vec<u8>,
) -> Result<()> {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    match compression {
        Compression::None => out.extend_from_slice(payload),
        Compression::Lz4 => {
            let len = u32::try_from(payload.len())
                .map_err(|_| Error::InvalidInput { reason: "block larger than 4 GiB".into() })?;
            out.extend_from_slice(&len.to_le_bytes());
            let body = out.len();
            out.resize(body + lz4_flex::block::get_maximum_output_size(payload.len()), 0);
            let n = lz4_flex::block::compress_into(payload, &mut out[body..]).map_err(|e| {
                Error::InvalidInput { reason: format!("lz4 compression failed: {e}") }
            })?;
            out.truncate(body + n);
        }
        Compression::Zstd => zstd_compress(payload, zstd_level, file_id, out)?,
    }
    let sum = checksum.compute(&out[start + 4..]);
    out[start..start + 4].copy_from_slice(&sum.to_le_bytes());
    Ok(())
}

/// Verifies the checksum of a stored block and returns its decompressed payload.
///
/// `offset` is the block's absolute file offset, used in errors.
pub(crate) fn decode_block(
    stored: &Bytes,
    compression: Compression,
    checksum: ChecksumType,
    file_id: FileId,
    offset: u64,
) -> Result<Bytes> {
    let corrupt = |kind, detail| Error::corrupt(file_id, offset, kind, detail);
    let (sum, body) = stored
        .split_first_chunk::<4>()
        .ok_or_else(|| corrupt(CorruptKind::Truncated, "block shorter than its checksum"))?;
    verify_checksum(checksum, u32::from_le_bytes(*sum), body)
        .map_err(|()| corrupt(CorruptKind::ChecksumMismatch, "block checksum"))?;
    match compression {
        Compression::None => Ok(stored.slice(4..)),
        Compression::Lz4 => {
            let (len, raw) = body
                .split_first_chunk::<4>()
                .ok_or_else(|| corrupt(CorruptKind::Truncated, "lz4 length"))?;
            let len = u32::from_le_bytes(*len) as usize;
            // LZ4 cannot expand a block by more than 255:1.
            if len > MAX_BLOCK_SIZE || len > raw.len().saturating_mul(255).saturating_add(16) {
                return Err(corrupt(CorruptKind::Decompress, "lz4 length implausible"));
            }
            // Into fresh capacity, not a zeroed buffer (zeroing cost a tenth of a cold
            // fetch); the checked decoder never writes past `len` bytes.
            let out = lz4_flex::block::decompress(raw, len)
                .map_err(|_| corrupt(CorruptKind::Decompress, "lz4 payload"))?;
            if out.len() != len {
                return Err(corrupt(CorruptKind::Decompress, "lz4 length mismatch"));
            }
            Ok(Bytes::from(out))
        }
        Compression::Zstd => zstd_decompress(body, file_id, offset),
    }
}

/// Appends one Zstd frame of `payload` (which records its content size) to `out`.
#[cfg(feature = "zstd")]
fn zstd_compress(payload: &[u8], level: i32, _file_id: FileId, out: &mut Vec<u8>) -> Result<()> {
    let frame = zstd::bulk::compress(payload, level)
        .map_err(|e| Error::InvalidInput { reason: format!("zstd compression failed: {e}") })?;
    out.extend_from_slice(&frame);
    Ok(())
}

/// Without the `zstd` feature a Zstd block cannot be written.
#[cfg(not(feature = "zstd"))]
fn zstd_compress(_payload: &[u8], _level: i32, file_id: FileId, _out: &mut Vec<u8>) -> Result<()> {
    Err(zstd_unsupported(file_id))
}

/// Bytes `stored` (`u32 checksum | payload`) decompresses to, read from its header without
/// decompressing: at most [`MAX_BLOCK_SIZE`] (the decoder refuses more), the stored length
/// for an unknown size.
pub(crate) fn decoded_len(stored: &[u8], compression: Compression) -> u64 {
    let body = stored.get(4..).unwrap_or_default();
    let claimed = match compression {
        Compression::None => body.len() as u64,
        Compression::Lz4 => body
            .first_chunk::<4>()
            .map_or(body.len() as u64, |len| u64::from(u32::from_le_bytes(*len))),
        Compression::Zstd => zstd_content_size(body).unwrap_or(MAX_BLOCK_SIZE as u64),
    };
    claimed.min(MAX_BLOCK_SIZE as u64)
}

#[cfg(feature = "zstd")]
fn zstd_content_size(body: &[u8]) -> Option<u64> {
    zstd::zstd_safe::get_frame_content_size(body).ok().flatten()
}

#[cfg(not(feature = "zstd"))]
fn zstd_content_size(_body: &[u8]) -> Option<u64> {
    None
}

/// Decompresses one Zstd frame whose recorded content size is at most [`MAX_BLOCK_SIZE`].
#[cfg(feature = "zstd")]
fn zstd_decompress(body: &[u8], file_id: FileId, offset: u64) -> Result<Bytes> {
    let corrupt = |detail| Error::corrupt(file_id, offset, CorruptKind::Decompress, detail);
    let size = zstd::zstd_safe::get_frame_content_size(body)
        .ok()
        .flatten()
        .ok_or_else(|| corrupt("zstd frame content size"))?;
    let size = usize::try_from(size)
        .ok()
        .filter(|&s| s <= MAX_BLOCK_SIZE)
        .ok_or_else(|| corrupt("zstd size implausible"))?;
    let out = zstd::bulk::decompress(body, size).map_err(|_| corrupt("zstd payload"))?;
    if out.len() != size {
        return Err(corrupt("zstd length mismatch"));
    }
    Ok(Bytes::from(out))
}

/// Without the `zstd` feature a Zstd block cannot be read (its checksum was verified: the
/// bytes are intact, this build just cannot decompress them).
#[cfg(not(feature = "zstd"))]
fn zstd_decompress(_body: &[u8], file_id: FileId, _offset: u64) -> Result<Bytes> {
    Err(zstd_unsupported(file_id))
}

#[cfg(not(feature = "zstd"))]
fn zstd_unsupported(file_id: FileId) -> Error {
    Error::Unsupported { file_id, what: "zstd compression", feature: "zstd" }
}

/// Checks `stored_sum` against `body` under `checksum`.
pub(crate) fn verify_checksum(
    checksum: ChecksumType,
    stored_sum: u32,
    body: &[u8],
) -> Result<(), ()> {
    match checksum {
        ChecksumType::None => Ok(()),
        c if c.compute(body) == stored_sum => Ok(()),
        _ => Err(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(c: Compression) {
        let payload: Vec<u8> = (0..10_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        let mut out = Vec::new();
        encode_block(&payload, c, ChecksumType::Crc32c, 3, FileId(1), &mut out).unwrap();
        let stored = Bytes::from(out);
        let got = decode_block(&stored, c, ChecksumType::Crc32c, FileId(1), 0).unwrap();
        assert_eq!(got.as_ref(), payload.as_slice());
        // The checksum covers the stored bytes after the checksum field.
        assert_eq!(
            u32::from_le_bytes(stored[..4].try_into().unwrap()),
            crc32c::crc32c(&stored[4..])
        );
    }

    #[test]
    fn roundtrips() {
        roundtrip(Compression::None);
        roundtrip(Compression::Lz4);
        #[cfg(feature = "zstd")]
        roundtrip(Compression::Zstd);
    }

    #[test]
    fn lz4_layout_is_length_then_raw_block() {
        let payload = b"hello hello hello hello hello";
        let mut out = Vec::new();
        encode_block(payload, Compression::Lz4, ChecksumType::Crc32c, 3, FileId(1), &mut out)
            .unwrap();
        assert_eq!(&out[4..8], &(payload.len() as u32).to_le_bytes());
        assert_eq!(lz4_flex::block::decompress(&out[8..], payload.len()).unwrap(), payload);
    }

    #[test]
    fn bad_checksum_and_payloads_are_typed_errors() {
        let mut out = Vec::new();
        encode_block(b"abcdefgh", Compression::Lz4, ChecksumType::Crc32c, 3, FileId(3), &mut out)
            .unwrap();
        out[6] ^= 1;
        let e =
            decode_block(&Bytes::from(out), Compression::Lz4, ChecksumType::Crc32c, FileId(3), 40)
                .unwrap_err();
        assert_eq!(e.corrupt_kind(), Some(CorruptKind::ChecksumMismatch));
        // Garbage under a valid "none" checksum.
        let garbage = Bytes::from_static(&[0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 1, 2, 3]);
        let e = decode_block(&garbage, Compression::Lz4, ChecksumType::None, FileId(3), 40)
            .unwrap_err();
        assert_eq!(e.corrupt_kind(), Some(CorruptKind::Decompress));
        let e = decode_block(&garbage, Compression::Zstd, ChecksumType::None, FileId(3), 40)
            .unwrap_err();
        if cfg!(feature = "zstd") {
            assert_eq!(e.corrupt_kind(), Some(CorruptKind::Decompress));
        } else {
            assert!(matches!(e, Error::Unsupported { feature: "zstd", .. }), "{e:?}");
        }
    }

    #[test]
    fn lz4_length_field_off_by_any_amount_is_a_typed_error() {
        let payload: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8 ^ (i / 700) as u8).collect();
        let mut out = Vec::new();
        encode_block(&payload, Compression::Lz4, ChecksumType::None, 3, FileId(4), &mut out)
            .unwrap();
        for claimed in [0u32, 1, 12, 4999, 5001, 6000, 65_536] {
            let mut bad = out.clone();
            bad[4..8].copy_from_slice(&claimed.to_le_bytes());
            let e =
                decode_block(&Bytes::from(bad), Compression::Lz4, ChecksumType::None, FileId(4), 0)
                    .unwrap_err();
            assert_eq!(e.corrupt_kind(), Some(CorruptKind::Decompress), "{claimed}");
        }
        // And every truncation of the raw block.
        for cut in 8..out.len() {
            let r = decode_block(
                &Bytes::copy_from_slice(&out[..cut]),
                Compression::Lz4,
                ChecksumType::None,
                FileId(4),
                0,
            );
            assert!(r.is_err(), "{cut}");
        }
    }

    /// A stored Zstd block under a correct crc32c: the frame is what the zstd 1.5.4 CLI
    /// writes for `b"hello hello hello"` (content size recorded), so a build without libzstd
    /// can hold one; `zstd_fixture_decodes` checks it where the feature is on.
    fn stored_zstd_block() -> Bytes {
        let frame: &[u8] = &[
            0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x11, 0x65, 0x00, 0x00, 0x30, 0x68, 0x65, 0x6c, 0x6c,
            0x6f, 0x20, 0x01, 0x00, 0x31, 0x4a, 0x11,
        ];
        let mut out = crc32c::crc32c(frame).to_le_bytes().to_vec();
        out.extend_from_slice(frame);
        Bytes::from(out)
    }

    #[cfg(feature = "zstd")]
    #[test]
    fn zstd_fixture_decodes() {
        let got = decode_block(
            &stored_zstd_block(),
            Compression::Zstd,
            ChecksumType::Crc32c,
            FileId(5),
            0,
        )
        .unwrap();
        assert_eq!(got.as_ref(), b"hello hello hello");
    }

    #[cfg(not(feature = "zstd"))]
    #[test]
    fn zstd_without_the_feature_is_a_typed_error() {
        let mut out = b"keep".to_vec();
        let e =
            encode_block(b"abc", Compression::Zstd, ChecksumType::Crc32c, 3, FileId(4), &mut out)
                .unwrap_err();
        assert!(
            matches!(e, Error::Unsupported { file_id: FileId(4), feature: "zstd", .. }),
            "{e:?}"
        );
        assert!(e.to_string().contains("`zstd` feature"), "{e}");
        assert_eq!(out, b"keep", "a failed encode leaves the buffer as it was");
        assert!(!e.is_retryable());
        assert_eq!(e.corrupt_kind(), None, "the bytes are not corrupt");

        let stored = stored_zstd_block();
        let e = decode_block(&stored, Compression::Zstd, ChecksumType::Crc32c, FileId(5), 80)
            .unwrap_err();
        assert!(
            matches!(e, Error::Unsupported { file_id: FileId(5), feature: "zstd", .. }),
            "{e:?}"
        );
        // A bad checksum is still reported as corruption first.
        let mut bad = stored.to_vec();
        bad[0] ^= 1;
        let e =
            decode_block(&Bytes::from(bad), Compression::Zstd, ChecksumType::Crc32c, FileId(5), 80)
                .unwrap_err();
        assert_eq!(e.corrupt_kind(), Some(CorruptKind::ChecksumMismatch));
    }
}
