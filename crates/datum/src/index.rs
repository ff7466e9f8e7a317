//! TiDB index values: the old layout and the new ("version 0" and clustered "version 1")
//! layouts, decoded as TiKV's index scan reads them and encoded as TiDB writes them
//! (`pkg/tablecodec`: `GenIndexValuePortal`).
//!
//! ```text
//! old        [handle: 8 BE, unique int-handle index only] [untouched '1']      (≤ 9 bytes;
//!            a value with neither is the single byte '0')
//! version 0  [tail len] [options] [padding to 10] [int handle: 8 BE, unique] [untouched]
//! version 1  [tail len] [125] [1] [options] [untouched]           (clustered tables, 5.0+)
//! options    [127, u16 BE len, common handle datums]  unique index of a common-handle table
//!            [126, comparable i64 partition id]        global index
//!            [row v2 restored data, starts with 128]   new collation
//! ```
//!
//! The tail length counts padding, the int handle and the untouched flag. Index keys are
//! `t{table}_i{index}` + key-mode datums of the index columns, then (non-unique indexes, or
//! a unique index holding a NULL) the handle: an int handle as a comparable-i64 datum, a
//! common handle as its datums ([`crate::key::encode_index_key`]).
//!
//! ```
//! use rcop_datum::index::{IndexValueOptions, encode_index_value_v0, index_version, split_index_value};
//!
//! // A unique index of an int-handle table, handle 7, no new-collation data: old layout.
//! let mut v = Vec::new();
//! encode_index_value_v0(&IndexValueOptions::new().int_handle(7), &mut v);
//! assert_eq!(v, [0, 0, 0, 0, 0, 0, 0, 7]);
//!
//! // The same with a global index partition: the new layout.
//! v.clear();
//! encode_index_value_v0(&IndexValueOptions::new().int_handle(7).partition_id(3), &mut v);
//! let parts = split_index_value(&v, index_version(&v).unwrap()).unwrap();
//! assert_eq!(parts.partition_id, Some(3));
//! assert_eq!(parts.tail, [0, 0, 0, 0, 0, 0, 0, 7]);
//! ```

use crate::codec::{self, Reader};
use crate::error::{Error, Result};
use crate::row::v2::CODEC_VER;

/// Longest value of the old layout; anything longer is a new-layout value.
pub const MAX_OLD_ENCODED_VALUE_LEN: usize = 9;
/// Second byte of a clustered "version 1" value (TiDB `IndexVersionFlag`).
pub const VERSION_FLAG: u8 = 125;
/// Start of the partition id segment (TiDB `PartitionIDFlag`).
pub const PARTITION_ID_FLAG: u8 = 126;
/// Start of the common handle segment (TiDB `CommonHandleFlag`).
pub const COMMON_HANDLE_FLAG: u8 = 127;
/// Start of the restored data segment: a row v2 value (TiDB `RestoreDataFlag`).
pub const RESTORED_DATA_FLAG: u8 = CODEC_VER;
/// Last byte of an untouched index value (TiDB `kv.UnCommitIndexKVFlag`).
pub const UNTOUCHED_FLAG: u8 = b'1';
/// Length TiDB pads a version 0 value to when it holds no int handle.
const PADDED_LEN: usize = 10;

/// The index value version (TiDB `getIndexVersion`): 1 for clustered-index values, else 0.
///
/// A value of 3 or 4 bytes is version 1 (`[0, 125, 1]` with or without the untouched flag);
/// other values of at most [`MAX_OLD_ENCODED_VALUE_LEN`] bytes are version 0; a longer value
/// is version `value[2]` when its tail length is 0 or 1 and `value[1]` is [`VERSION_FLAG`].
///
/// # Errors
///
/// A long value whose tail length is not shorter than the value.
pub fn index_version(value: &[u8]) -> Result<u8> {
    if value.len() == 3 || value.len() == 4 {
        return Ok(1);
    }
    if value.len() <= MAX_OLD_ENCODED_VALUE_LEN {
        return Ok(0);
    }
    match *value {
        [tail, ..] if usize::from(tail) >= value.len() => Err(bad_tail()),
        [0 | 1, VERSION_FLAG, version, ..] => Ok(version),
        _ => Ok(0),
    }
}

fn bad_tail() -> Error {
    Error::Invalid { what: "index value", reason: "tail length not shorter than the value" }
}

/// The segments of a new-layout index value (one longer than
/// [`MAX_OLD_ENCODED_VALUE_LEN`]), borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct IndexValueParts<'a> {
    /// The common handle's key-mode datums (unique index of a common-handle table), or empty.
    pub common_handle: &'a [u8],
    /// The partition id of a global index entry.
    pub partition_id: Option<i64>,
    /// The restored data (a row v2 value), or empty.
    pub restored: &'a [u8],
    /// The tail: padding, the int handle (unique index of an int-handle table: its first 8
    /// bytes, big-endian) and the untouched flag.
    pub tail: &'a [u8],
}

/// Splits a new-layout value of `version` (from [`index_version`]) into its segments, as
/// TiKV's index scan does: version 1 skips the version bytes, every other version is read
/// as version 0.
///
/// # Errors
///
/// A corrupt tail length, a truncated common handle or partition id, or bytes after the
/// options that are none of them.
pub fn split_index_value(value: &[u8], version: u8) -> Result<IndexValueParts<'_>> {
    let tail_len =
        usize::from(*value.first().ok_or(Error::Eof { what: "index value", need: 1, have: 0 })?);
    if tail_len >= value.len() {
        return Err(bad_tail());
    }
    let skip = if version == 1 { 3 } else { 1 };
    let body_end = value.len() - tail_len;
    let body = value.get(skip..body_end).ok_or(bad_tail())?;
    let tail = value.get(body_end..).unwrap_or_default();
    let mut parts = IndexValueParts { tail, ..IndexValueParts::default() };
    let mut rest = body;
    if let [COMMON_HANDLE_FLAG, a, b, after @ ..] = rest {
        let n = usize::from(u16::from_be_bytes([*a, *b]));
        let handle = after.get(..n).ok_or(Error::Invalid {
            what: "index value",
            reason: "common handle longer than the value",
        })?;
        parts.common_handle = handle;
        rest = after.get(n..).unwrap_or_default();
    } else if rest.first() == Some(&COMMON_HANDLE_FLAG) {
        return Err(Error::Eof {
            what: "index value common handle length",
            need: 3,
            have: rest.len(),
        });
    }
    if rest.first() == Some(&PARTITION_ID_FLAG) {
        let mut r = Reader::new(rest.get(1..).unwrap_or_default());
        if r.remaining() < 8 {
            return Err(Error::Eof { what: "index value partition id", need: 9, have: rest.len() });
        }
        parts.partition_id = Some(codec::decode_i64(&mut r)?);
        rest = r.rest();
    }
    if rest.first() == Some(&RESTORED_DATA_FLAG) {
        parts.restored = rest;
        rest = &[];
    }
    if !rest.is_empty() {
        return Err(Error::Invalid {
            what: "index value",
            reason: "unexpected bytes after the options",
        });
    }
    Ok(parts)
}

/// What an index value holds besides the index columns, for the encoders.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct IndexValueOptions<'a> {
    /// The int handle, stored in the value by unique indexes of int-handle tables.
    pub int_handle: Option<i64>,
    /// The common handle's key-mode datums, stored by unique indexes of common-handle tables.
    pub common_handle: Option<&'a [u8]>,
    /// The partition id of a global index entry.
    pub partition_id: Option<i64>,
    /// The restored data (a row v2 value) of a new-collation index.
    pub restored: Option<&'a [u8]>,
    /// Whether to end with the untouched flag.
    pub untouched: bool,
}

impl<'a> IndexValueOptions<'a> {
    /// Nothing besides the index columns (a non-unique index entry without new-collation data).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`int_handle`](Self::int_handle).
    #[must_use]
    pub fn int_handle(mut self, h: i64) -> Self {
        self.int_handle = Some(h);
        self
    }

    /// Sets [`common_handle`](Self::common_handle).
    #[must_use]
    pub fn common_handle(mut self, datums: &'a [u8]) -> Self {
        self.common_handle = Some(datums);
        self
    }

    /// Sets [`partition_id`](Self::partition_id).
    #[must_use]
    pub fn partition_id(mut self, id: i64) -> Self {
        self.partition_id = Some(id);
        self
    }

    /// Sets [`restored`](Self::restored).
    #[must_use]
    pub fn restored(mut self, row: &'a [u8]) -> Self {
        self.restored = Some(row);
        self
    }

    /// Sets [`untouched`](Self::untouched).
    #[must_use]
    pub fn untouched(mut self, untouched: bool) -> Self {
        self.untouched = untouched;
        self
    }
}

fn push_common_handle(out: &mut Vec<u8>, h: &[u8]) {
    out.push(COMMON_HANDLE_FLAG);
    // TiDB writes the length as a u16; a longer handle cannot be stored.
    let n = u16::try_from(h.len()).unwrap_or(u16::MAX);
    out.extend_from_slice(&n.to_be_bytes());
    out.extend_from_slice(h.get(..usize::from(n)).unwrap_or(h));
}

fn push_partition_id(out: &mut Vec<u8>, id: i64) {
    out.push(PARTITION_ID_FLAG);
    codec::encode_i64(out, id);
}

/// Appends the value TiDB writes for a table without a version 1 clustered index
/// (`genIndexValueVersion0`): the old layout when there is neither a common handle, a
/// partition id nor restored data, else the version 0 layout (padded to 10 bytes when it
/// holds no int handle).
pub fn encode_index_value_v0(opts: &IndexValueOptions<'_>, out: &mut Vec<u8>) {
    let start = out.len();
    if opts.common_handle.is_none() && opts.partition_id.is_none() && opts.restored.is_none() {
        if let Some(h) = opts.int_handle {
            out.extend_from_slice(&(h as u64).to_be_bytes());
        }
        if opts.untouched {
            out.push(UNTOUCHED_FLAG);
        }
        if out.len() == start {
            out.push(b'0');
        }
        return;
    }
    out.push(0);
    if let Some(h) = opts.common_handle {
        push_common_handle(out, h);
    }
    if let Some(p) = opts.partition_id {
        push_partition_id(out, p);
    }
    if let Some(r) = opts.restored {
        out.extend_from_slice(r);
    }
    let mut tail = 0usize;
    if let Some(h) = opts.int_handle {
        tail += 8;
        out.extend_from_slice(&(h as u64).to_be_bytes());
    } else if out.len() - start < PADDED_LEN {
        let pad = PADDED_LEN - (out.len() - start);
        tail += pad;
        out.resize(out.len() + pad, 0);
    }
    if opts.untouched {
        tail += 1;
        out.push(UNTOUCHED_FLAG);
    }
    if let Some(b) = out.get_mut(start) {
        *b = tail as u8;
    }
}

/// Appends the value TiDB writes for an index of a version 1 clustered table
/// (`GenIndexValueForClusteredIndexVersion1`): `[tail] 125 1`, the options, the untouched
/// flag.
///
/// # Errors
///
/// An int handle: clustered tables have common handles.
pub fn encode_index_value_v1(opts: &IndexValueOptions<'_>, out: &mut Vec<u8>) -> Result<()> {
    if opts.int_handle.is_some() {
        return Err(Error::Invalid {
            what: "index value",
            reason: "a version 1 value holds no int handle",
        });
    }
    out.extend_from_slice(&[u8::from(opts.untouched), VERSION_FLAG, 1]);
    if let Some(h) = opts.common_handle {
        push_common_handle(out, h);
    }
    if let Some(p) = opts.partition_id {
        push_partition_id(out, p);
    }
    if let Some(r) = opts.restored {
        out.extend_from_slice(r);
    }
    if opts.untouched {
        out.push(UNTOUCHED_FLAG);
    }
    Ok(())
}

/// The number of trailing spaces of `s`: what a version 1 value restores a `_bin` VARCHAR
/// column with (TiDB `stringutil.GetTailSpaceCount`), its key holding the value without them.
pub fn trailing_spaces(s: &[u8]) -> u64 {
    s.iter().rev().take_while(|&&b| b == b' ').count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::RowEncoder;

    #[test]
    fn old_layout() {
        let enc = |o: IndexValueOptions<'_>| {
            let mut v = Vec::new();
            encode_index_value_v0(&o, &mut v);
            v
        };
        assert_eq!(enc(IndexValueOptions::new()), b"0");
        assert_eq!(enc(IndexValueOptions::new().untouched(true)), b"1");
        assert_eq!(enc(IndexValueOptions::new().int_handle(1)), [0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(
            enc(IndexValueOptions::new().int_handle(-1).untouched(true)),
            [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, b'1']
        );
        for v in [&b"0"[..], &[0; 8], &[0; 9]] {
            assert_eq!(index_version(v).unwrap(), 0);
        }
    }

    #[test]
    fn version_0_padding_and_handle() {
        let mut v = Vec::new();
        encode_index_value_v0(&IndexValueOptions::new().partition_id(-2), &mut v);
        // [tail] 126 pid (9 bytes) = 10 bytes: no padding needed.
        assert_eq!(v.len(), 10);
        assert_eq!(v[0], 0);
        let p = split_index_value(&v, index_version(&v).unwrap()).unwrap();
        assert_eq!((p.partition_id, p.tail), (Some(-2), &[][..]));

        let mut row = Vec::new();
        RowEncoder::new().bytes(3, b"A").finish(&mut row).unwrap();
        v.clear();
        encode_index_value_v0(&IndexValueOptions::new().restored(&row).untouched(true), &mut v);
        // [tail] + a 10-byte row needs no padding; then the flag.
        assert_eq!(v.len(), 1 + row.len() + 1);
        assert_eq!(v[0], 1);
        let p = split_index_value(&v, 0).unwrap();
        assert_eq!((p.restored, p.tail), (&row[..], &[UNTOUCHED_FLAG][..]));

        v.clear();
        encode_index_value_v0(&IndexValueOptions::new().common_handle(&[3, 1]), &mut v);
        assert_eq!(v, [4, 127, 0, 2, 3, 1, 0, 0, 0, 0]);
        let p = split_index_value(&v, index_version(&v).unwrap()).unwrap();
        assert_eq!((p.common_handle, p.tail), (&[3, 1][..], &[0; 4][..]));
    }

    #[test]
    fn version_1() {
        let mut v = Vec::new();
        encode_index_value_v1(&IndexValueOptions::new(), &mut v).unwrap();
        assert_eq!(v, [0, 125, 1]);
        assert_eq!(index_version(&v).unwrap(), 1);
        v.clear();
        encode_index_value_v1(&IndexValueOptions::new().untouched(true), &mut v).unwrap();
        assert_eq!(v, [1, 125, 1, b'1']);
        assert_eq!(index_version(&v).unwrap(), 1);
        let h = [3, 0x80, 0, 0, 0, 0, 0, 0, 9];
        v.clear();
        encode_index_value_v1(&IndexValueOptions::new().common_handle(&h).partition_id(7), &mut v)
            .unwrap();
        assert_eq!(index_version(&v).unwrap(), 1);
        let p = split_index_value(&v, 1).unwrap();
        assert_eq!((p.common_handle, p.partition_id), (&h[..], Some(7)));
        assert!(encode_index_value_v1(&IndexValueOptions::new().int_handle(1), &mut v).is_err());
    }

    /// Values TiDB wrote for `insert into t values (1, "a ", "A ")` into
    /// `t(a int, b varchar(10) collate utf8mb4_bin, c varchar(10) collate utf8mb4_unicode_ci)`
    /// with unique and non-unique indexes, as kept in TiKV's
    /// `components/tidb_query_executors/src/index_scan_executor.rs` (`test_int_handle_varchar_index`).
    #[test]
    fn tidb_values() {
        // Non-unique i_b: tail 0, restored {2: "a "}.
        let v = [0x0, 0x80, 0x0, 0x1, 0x0, 0x0, 0x0, 0x2, 0x2, 0x0, 0x61, 0x20];
        assert_eq!(index_version(&v).unwrap(), 0);
        let p = split_index_value(&v, 0).unwrap();
        assert_eq!(p.restored, &v[1..]);
        assert!(p.tail.is_empty() && p.common_handle.is_empty() && p.partition_id.is_none());
        let mut row = Vec::new();
        RowEncoder::new().bytes(2, b"a ").finish(&mut row).unwrap();
        let mut ours = Vec::new();
        encode_index_value_v0(&IndexValueOptions::new().restored(&row), &mut ours);
        assert_eq!(ours, v);
        // Unique i_ub: tail 8 holding handle 1.
        let v = [
            0x8, 0x80, 0x0, 0x1, 0x0, 0x0, 0x0, 0x2, 0x2, 0x0, 0x61, 0x20, 0x0, 0x0, 0x0, 0x0, 0x0,
            0x0, 0x0, 0x1,
        ];
        let p = split_index_value(&v, index_version(&v).unwrap()).unwrap();
        assert_eq!(p.tail, [0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(p.restored, &v[1..12]);
        ours.clear();
        encode_index_value_v0(&IndexValueOptions::new().restored(&row).int_handle(1), &mut ours);
        assert_eq!(ours, v);
    }

    #[test]
    fn corrupt_values() {
        assert!(index_version(&[10; 10]).is_err());
        assert!(split_index_value(&[], 0).is_err());
        assert!(split_index_value(&[0, 127, 0], 0).is_err());
        assert!(split_index_value(&[0, 127, 0, 9, 1], 0).is_err());
        assert!(split_index_value(&[0, 126, 1, 2, 3], 0).is_err());
        assert!(split_index_value(&[0, 5, 5, 5, 5, 5, 5, 5, 5, 5], 0).is_err());
        // Version 1 with a tail reaching into the version bytes.
        assert!(split_index_value(&[9, 125, 1, 0, 0, 0, 0, 0, 0, 0], 1).is_err());
        assert_eq!(trailing_spaces(b"a  "), 2);
        assert_eq!(trailing_spaces(b"   "), 3);
        assert_eq!(trailing_spaces(b" a"), 0);
    }
}
