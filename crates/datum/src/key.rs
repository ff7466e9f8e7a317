//! TiDB table keys and the API v2 keyspace prefix.
//!
//! - record key: `t` + comparable i64 table id + `_r` + comparable i64 handle (19 bytes), or
//!   + key-mode datums for a common handle;
//! - index key: `t` + table id + `_i` + comparable i64 index id + key-mode datums;
//! - API v2 keys carry `x` + 3-byte big-endian keyspace id in front.

use crate::codec::{self, Reader};
use crate::error::{Error, Result};

/// First byte of every table key.
pub const TABLE_PREFIX: u8 = b't';
/// Separator before a record handle.
pub const RECORD_SEP: &[u8; 2] = b"_r";
/// Separator before an index id.
pub const INDEX_SEP: &[u8; 2] = b"_i";
/// Length of `t` + table id + separator.
pub const TABLE_PREFIX_LEN: usize = 1 + 8 + 2;
/// Length of an int-handle record key.
pub const RECORD_KEY_LEN: usize = TABLE_PREFIX_LEN + 8;

/// Keyspace mode byte of transactional keys.
pub const KEYSPACE_TXN: u8 = b'x';
/// Keyspace mode byte of raw keys.
pub const KEYSPACE_RAW: u8 = b'r';
/// Length of the API v2 keyspace prefix.
pub const KEYSPACE_PREFIX_LEN: usize = 4;

/// A keyspace id (24 bits used).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct KeyspaceId(pub u32);

impl KeyspaceId {
    /// Largest keyspace id: three bytes.
    pub const MAX: u32 = 0x00FF_FFFF;

    /// The 4-byte transactional prefix `x` + 3-byte BE id. Errors above [`KeyspaceId::MAX`].
    pub fn txn_prefix(self) -> Result<[u8; 4]> {
        if self.0 > Self::MAX {
            return Err(Error::Overflow { what: "keyspace id" });
        }
        let b = self.0.to_be_bytes();
        Ok([KEYSPACE_TXN, b[1], b[2], b[3]])
    }
}

impl std::fmt::Display for KeyspaceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Splits an API v2 key into its keyspace id and the key after the prefix. Accepts the `x`
/// (transactional) and `r` (raw) modes.
pub fn split_keyspace(key: &[u8]) -> Result<(KeyspaceId, &[u8])> {
    match key {
        [m, a, b, c, rest @ ..] if *m == KEYSPACE_TXN || *m == KEYSPACE_RAW => {
            Ok((KeyspaceId(u32::from_be_bytes([0, *a, *b, *c])), rest))
        }
        [_, _, _, _, ..] => {
            Err(Error::Invalid { what: "keyspace key", reason: "unknown mode byte" })
        }
        _ => {
            Err(Error::Eof { what: "keyspace prefix", need: KEYSPACE_PREFIX_LEN, have: key.len() })
        }
    }
}

/// Like [`split_keyspace`], but only for transactional (`x`) keys — what coprocessor ranges
/// and MVCC keys carry.
pub fn split_txn_keyspace(key: &[u8]) -> Result<(KeyspaceId, &[u8])> {
    match key.first() {
        Some(&KEYSPACE_TXN) => split_keyspace(key),
        Some(_) => Err(Error::Invalid { what: "keyspace key", reason: "not a transactional key" }),
        None => Err(Error::Eof { what: "keyspace prefix", need: KEYSPACE_PREFIX_LEN, have: 0 }),
    }
}

fn table_prefix(out: &mut Vec<u8>, table_id: i64, sep: &[u8; 2]) {
    out.push(TABLE_PREFIX);
    codec::encode_i64(out, table_id);
    out.extend_from_slice(sep);
}

/// Appends `t{table_id}_r`, the prefix of every record of the table.
pub fn encode_record_prefix(out: &mut Vec<u8>, table_id: i64) {
    table_prefix(out, table_id, RECORD_SEP);
}

/// Appends the record key of an int handle.
pub fn encode_record_key(out: &mut Vec<u8>, table_id: i64, handle: i64) {
    encode_record_prefix(out, table_id);
    codec::encode_i64(out, handle);
}

/// Appends the record key of a common handle, given its key-mode datums already encoded.
pub fn encode_common_handle_record_key(out: &mut Vec<u8>, table_id: i64, handle: &[u8]) {
    encode_record_prefix(out, table_id);
    out.extend_from_slice(handle);
}

/// Appends `t{table_id}_i{index_id}`, the prefix of every entry of the index.
pub fn encode_index_prefix(out: &mut Vec<u8>, table_id: i64, index_id: i64) {
    table_prefix(out, table_id, INDEX_SEP);
    codec::encode_i64(out, index_id);
}

/// Appends an index key: the prefix, then the index columns' key-mode datums (already
/// encoded, handle datums included where the index needs them).
pub fn encode_index_key(out: &mut Vec<u8>, table_id: i64, index_id: i64, values: &[u8]) {
    encode_index_prefix(out, table_id, index_id);
    out.extend_from_slice(values);
}

/// Reads the table id of a table key (record or index).
pub fn decode_table_id(key: &[u8]) -> Result<i64> {
    let mut r = Reader::new(key);
    if r.read_u8("table key")? != TABLE_PREFIX {
        return Err(Error::Invalid { what: "table key", reason: "missing 't' prefix" });
    }
    codec::decode_i64(&mut r)
}

fn check_prefix<'a>(key: &'a [u8], sep: &[u8; 2], what: &'static str) -> Result<(i64, Reader<'a>)> {
    let mut r = Reader::new(key);
    if r.read_u8(what)? != TABLE_PREFIX {
        return Err(Error::Invalid { what, reason: "missing 't' prefix" });
    }
    let table_id = codec::decode_i64(&mut r)?;
    if r.read_bytes(2, what)? != sep {
        return Err(Error::Invalid { what, reason: "wrong separator" });
    }
    Ok((table_id, r))
}

/// Decodes an int-handle record key into `(table id, handle)`.
pub fn decode_record_key(key: &[u8]) -> Result<(i64, i64)> {
    let (table_id, mut r) = check_prefix(key, RECORD_SEP, "record key")?;
    let handle = codec::decode_i64(&mut r)?;
    if !r.is_empty() {
        return Err(Error::Invalid { what: "record key", reason: "trailing bytes after handle" });
    }
    Ok((table_id, handle))
}

/// Splits a record key into `(table id, handle bytes)`: 8 bytes for an int handle, the
/// key-mode datums for a common handle.
pub fn split_record_key(key: &[u8]) -> Result<(i64, &[u8])> {
    let (table_id, r) = check_prefix(key, RECORD_SEP, "record key")?;
    Ok((table_id, r.rest()))
}

/// Splits an index key into `(table id, index id, encoded index values)`.
pub fn split_index_key(key: &[u8]) -> Result<(i64, i64, &[u8])> {
    let (table_id, mut r) = check_prefix(key, INDEX_SEP, "index key")?;
    let index_id = codec::decode_i64(&mut r)?;
    Ok((table_id, index_id, r.rest()))
}

/// The smallest key greater than every key that starts with `key`: add one to the last byte
/// that is not `FF` and drop what follows; an all-`FF` (or empty) key gets `00` appended.
pub fn prefix_next(key: &[u8]) -> Vec<u8> {
    let mut out = key.to_vec();
    prefix_next_in_place(&mut out);
    out
}

/// [`prefix_next`] rewriting `key` in place.
pub fn prefix_next_in_place(key: &mut Vec<u8>) {
    match key.iter().rposition(|&b| b != 0xFF) {
        Some(i) => {
            key[i] += 1;
            for b in &mut key[i + 1..] {
                *b = 0;
            }
        }
        None => key.push(0),
    }
}

/// True when `[start, end)` covers exactly one key: `end == prefix_next(start)` (TiKV's rule).
pub fn is_point(start: &[u8], end: &[u8]) -> bool {
    match start.iter().rposition(|&b| b != 0xFF) {
        // prefix_next keeps the length and zeroes the tail.
        Some(i) if end.len() == start.len() => {
            end[..i] == start[..i] && end[i] == start[i] + 1 && end[i + 1..].iter().all(|&b| b == 0)
        }
        Some(_) => false,
        None => end.len() == start.len() + 1 && end.starts_with(start) && end.last() == Some(&0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_keys() {
        let mut k = Vec::new();
        encode_record_key(&mut k, 53, 2);
        assert_eq!(hex::encode(&k), "7480000000000000355f728000000000000002");
        assert_eq!(decode_record_key(&k).unwrap(), (53, 2));
        k.clear();
        encode_record_key(&mut k, 1, 1);
        assert_eq!(hex::encode(&k), "7480000000000000015f728000000000000001");
        assert_eq!(k.len(), RECORD_KEY_LEN);
        assert!(decode_record_key(&k[..18]).is_err());
        let mut long = k.clone();
        long.push(0);
        assert!(decode_record_key(&long).is_err());
        assert_eq!(split_record_key(&long).unwrap().1.len(), 9);
        let mut idx = k.clone();
        idx[10] = b'i';
        assert!(decode_record_key(&idx).is_err());
    }

    #[test]
    fn index_keys() {
        let mut vals = Vec::new();
        crate::Datum::Int(7).encode(crate::datum::Mode::Key, &mut vals).unwrap();
        crate::Datum::Int(9).encode(crate::datum::Mode::Key, &mut vals).unwrap();
        let mut k = Vec::new();
        encode_index_key(&mut k, 1, 2, &vals);
        assert_eq!(
            hex::encode(&k),
            "7480000000000000015f698000000000000002038000000000000007038000000000000009"
        );
        assert_eq!(split_index_key(&k).unwrap(), (1, 2, &vals[..]));
        assert_eq!(decode_table_id(&k).unwrap(), 1);
    }

    #[test]
    fn keyspace() {
        let p = KeyspaceId(0x010203).txn_prefix().unwrap();
        assert_eq!(p, [b'x', 1, 2, 3]);
        assert!(KeyspaceId(1 << 24).txn_prefix().is_err());
        let mut key = p.to_vec();
        key.extend_from_slice(b"t123");
        assert_eq!(split_keyspace(&key).unwrap(), (KeyspaceId(0x010203), &b"t123"[..]));
        assert!(split_keyspace(b"x12").is_err());
        assert!(split_keyspace(b"m123t").is_err());
        assert_eq!(split_keyspace(b"r\0\0\x01").unwrap(), (KeyspaceId(1), &b""[..]));
        assert!(split_txn_keyspace(b"r\0\0\x01").is_err());
        assert_eq!(split_txn_keyspace(&key).unwrap().0, KeyspaceId(0x010203));
    }

    #[test]
    fn prefix_next_vectors() {
        let cases: [(&[u8], &[u8]); 5] = [
            (&[], &[0]),
            (&[0xFF], &[0xFF, 0]),
            (&[1, 0xFF], &[2, 0]),
            (&[0, 1, 0xFF, 5], &[0, 1, 0xFF, 6]),
            (&[0, 0xFF, 0xFF, 0xFF], &[1, 0, 0, 0]),
        ];
        for (k, want) in cases {
            assert_eq!(prefix_next(k), want, "prefix_next({k:?})");
            assert!(is_point(k, want), "is_point({k:?}, {want:?})");
        }
        assert!(!is_point(&[1, 2], &[1, 4]));
        assert!(!is_point(&[1, 2], &[1, 3, 0]));
        assert!(!is_point(&[1, 2], &[1, 3, 1]));
        assert!(!is_point(&[0xFF], &[0xFF, 1]));
        assert!(!is_point(&[1, 2], &[]));
    }
}
