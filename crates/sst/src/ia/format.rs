//! The bytes and names of the disk cache's files.
//!
//! Every cache file is its payload followed by a 16-byte trailer:
//! `u32 crc32c(payload) | u64 payload_len | u32 magic "RIA1"`, little-endian. A file whose
//! length, magic or checksum disagrees is corrupt and never served.
//!
//! - segment `ia/segment/{file_id}-{start}-{end}.seg` (decimal, as upstream): the file's
//!   bytes `[start, end)`;
//! - metadata `ia/meta/{file_id:016x}.meta`: `u64 start | u64 file_size | bytes [start, size)`;
//! - manifest `ia/manifest`: upstream's `u8 version = 1 | i64 main-queue capacity`, then our
//!   `u32 crc32c` of those 9 bytes.
//!
//! Files being written are `{final name}.{n}.tmp`.

use bytes::Bytes;

use crate::types::FileId;

/// Length of the trailer every cache file ends with.
pub(crate) const TRAILER_LEN: usize = 16;
const MAGIC: u32 = u32::from_le_bytes(*b"RIA1");
const MANIFEST_VERSION: u8 = 1;
const MANIFEST_LEN: usize = 13;

/// A segment: bytes `[start, end)` of file `file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct SegKey {
    pub(crate) file: FileId,
    pub(crate) start: u64,
    pub(crate) end: u64,
}

impl SegKey {
    pub(crate) fn len(&self) -> u64 {
        self.end - self.start
    }

    /// Bytes the segment takes on disk.
    pub(crate) fn disk_len(&self) -> u64 {
        self.len() + TRAILER_LEN as u64
    }

    pub(crate) fn file_name(&self) -> String {
        format!("{}-{}-{}.seg", self.file.0, self.start, self.end)
    }

    /// Parses a segment file name; `None` for anything else.
    pub(crate) fn parse(name: &str) -> Option<SegKey> {
        let stem = name.strip_suffix(".seg")?;
        let mut it = stem.split('-');
        let file = it.next()?.parse().ok()?;
        let start = it.next()?.parse().ok()?;
        let end: u64 = it.next()?.parse().ok()?;
        if it.next().is_some() || end <= start {
            return None;
        }
        Some(SegKey { file: FileId(file), start, end })
    }
}

/// The metadata file name of `id`.
pub(crate) fn meta_name(id: FileId) -> String {
    format!("{:016x}.meta", id.0)
}

/// Parses a metadata file name.
pub(crate) fn parse_meta_name(name: &str) -> Option<FileId> {
    let stem = name.strip_suffix(".meta")?;
    if stem.len() != 16 {
        return None;
    }
    u64::from_str_radix(stem, 16).ok().map(FileId)
}

/// The trailer of `payload`.
pub(crate) fn trailer(payload: &[u8]) -> [u8; TRAILER_LEN] {
    let mut t = [0u8; TRAILER_LEN];
    t[..4].copy_from_slice(&crc32c::crc32c(payload).to_le_bytes());
    t[4..12].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    t[12..].copy_from_slice(&MAGIC.to_le_bytes());
    t
}

/// Why a cache file was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bad {
    Truncated,
    Magic,
    Length,
    Checksum,
}

impl Bad {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Bad::Truncated => "truncated",
            Bad::Magic => "bad magic",
            Bad::Length => "length mismatch",
            Bad::Checksum => "checksum mismatch",
        }
    }
}

/// Checks a whole cache file and returns its payload (a slice of `file`).
pub(crate) fn verify(file: Bytes, expect_len: Option<u64>) -> Result<Bytes, Bad> {
    let n = file.len().checked_sub(TRAILER_LEN).ok_or(Bad::Truncated)?;
    let t = file.get(n..).ok_or(Bad::Truncated)?;
    let word = |r: std::ops::Range<usize>| t.get(r).unwrap_or_default();
    let magic = u32::from_le_bytes(word(12..16).try_into().map_err(|_| Bad::Truncated)?);
    if magic != MAGIC {
        return Err(Bad::Magic);
    }
    let len = u64::from_le_bytes(word(4..12).try_into().map_err(|_| Bad::Truncated)?);
    if len != n as u64 || expect_len.is_some_and(|e| e != len) {
        return Err(Bad::Length);
    }
    let crc = u32::from_le_bytes(word(0..4).try_into().map_err(|_| Bad::Truncated)?);
    let payload = file.slice(..n);
    if crc32c::crc32c(&payload) != crc {
        return Err(Bad::Checksum);
    }
    Ok(payload)
}

/// The payload of a metadata file.
pub(crate) fn meta_payload(start: u64, size: u64, tail: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(16 + tail.len());
    v.extend_from_slice(&start.to_le_bytes());
    v.extend_from_slice(&size.to_le_bytes());
    v.extend_from_slice(tail);
    v
}

/// Splits a verified metadata payload into `(start, size, tail)`.
pub(crate) fn split_meta(payload: Bytes) -> Option<(u64, u64, Bytes)> {
    let start = u64::from_le_bytes(payload.get(..8)?.try_into().ok()?);
    let size = u64::from_le_bytes(payload.get(8..16)?.try_into().ok()?);
    let tail = payload.slice(16..);
    (start.checked_add(tail.len() as u64) == Some(size)).then_some((start, size, tail))
}

/// The manifest's bytes for a main-queue capacity.
pub(crate) fn manifest(main_cap: u64) -> [u8; MANIFEST_LEN] {
    let mut m = [0u8; MANIFEST_LEN];
    m[0] = MANIFEST_VERSION;
    let cap = i64::try_from(main_cap).unwrap_or(i64::MAX);
    m[1..9].copy_from_slice(&cap.to_le_bytes());
    let crc = crc32c::crc32c(&m[..9]);
    m[9..].copy_from_slice(&crc.to_le_bytes());
    m
}

/// The main-queue capacity a manifest records, if it is valid.
pub(crate) fn parse_manifest(b: &[u8]) -> Option<u64> {
    if b.len() != MANIFEST_LEN || b.first() != Some(&MANIFEST_VERSION) {
        return None;
    }
    let crc = u32::from_le_bytes(b.get(9..13)?.try_into().ok()?);
    if crc32c::crc32c(b.get(..9)?) != crc {
        return None;
    }
    u64::try_from(i64::from_le_bytes(b.get(1..9)?.try_into().ok()?)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roundtrip_and_reject_others() {
        let k = SegKey { file: FileId(42), start: 100, end: 2000 };
        assert_eq!(k.file_name(), "42-100-2000.seg");
        assert_eq!(SegKey::parse(&k.file_name()), Some(k));
        for bad in ["42-100-2000.seg.1.tmp", "42-100.seg", "42-9-9.seg", "x-1-2.seg", "1-2-3-4.seg"]
        {
            assert_eq!(SegKey::parse(bad), None, "{bad}");
        }
        assert_eq!(meta_name(FileId(0xab)), "00000000000000ab.meta");
        assert_eq!(parse_meta_name("00000000000000ab.meta"), Some(FileId(0xab)));
        assert_eq!(parse_meta_name("ab.meta"), None);
    }

    #[test]
    fn every_flip_and_truncation_is_detected() {
        let payload = b"segment bytes of some length".to_vec();
        let mut file = payload.clone();
        file.extend_from_slice(&trailer(&payload));
        assert_eq!(verify(Bytes::from(file.clone()), Some(payload.len() as u64)).unwrap(), payload);
        for i in 0..file.len() {
            let mut f = file.clone();
            f[i] ^= 0x10;
            assert!(verify(Bytes::from(f), None).is_err(), "flip at {i}");
        }
        for n in 0..file.len() {
            assert!(verify(Bytes::from(file[..n].to_vec()), None).is_err(), "truncated to {n}");
        }
        assert_eq!(verify(Bytes::from(file), Some(3)), Err(Bad::Length));
    }

    #[test]
    fn meta_and_manifest_roundtrip() {
        let p = meta_payload(10, 13, b"abc");
        assert_eq!(split_meta(Bytes::from(p)), Some((10, 13, Bytes::from_static(b"abc"))));
        assert_eq!(split_meta(Bytes::from(meta_payload(10, 14, b"abc"))), None);
        let m = manifest(1 << 30);
        assert_eq!(parse_manifest(&m), Some(1 << 30));
        let mut bad = m;
        bad[3] ^= 1;
        assert_eq!(parse_manifest(&bad), None);
    }
}
