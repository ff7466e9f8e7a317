//! The offload wire codec between a storage node and a worker, byte-compatible with the
//! upstream remote coprocessor.
//!
//! A storage node POSTs an **envelope** to a worker's [`COPROCESSOR_PATH`]:
//!
//! ```text
//! u32 LE 1 | u32 LE len | coprocessor.Request | u32 LE len | mem-data | u32 LE len | enginepb.ChangeSet
//! ```
//!
//! The **mem-data** carries the storage node's memtable rows, already MVCC-filtered (empty: no
//! memtable; v1: `u32 LE 1 | rows`; v2: `u32 LE 2 | u64 LE rows_len | rows | u32 LE len |
//! enginepb.TxnFileRefs`). The **rows** are upstream's bincode 1.x `Vec<Row>`: `u64 LE count`,
//! then per row `u64 LE key_len | key | u64 LE start_ts | u64 LE commit_ts | u64 LE value_len |
//! value`, where the key is the full outer key and an empty value is an MVCC delete.
//!
//! Encoding appends to a caller's `Vec<u8>`: [`EnvelopeWriter`] and [`MemDataWriter`] stream
//! rows in place and patch counts and lengths at the end. Decoding is zero-copy over
//! [`Bytes`](bytes::Bytes): [`Envelope`] holds slices of the body, [`MemData`] and [`Rows`]
//! validate every row in one eager pass, after which iteration cannot fail and allocates
//! nothing. Malformed input always yields an [`Error`] carrying the offending offset, never a
//! panic.
//!
//! This crate does no I/O and knows nothing about HTTP beyond the names in its constants.
//!
//! # Example
//!
//! ```
//! use bytes::Bytes;
//! use rcop_proto::coprocessor::Request;
//! use rcop_proto::enginepb::ChangeSet;
//! use rcop_wire::{Envelope, EnvelopeWriter, MemDataFormat};
//!
//! // Storage node: stream the memtable rows straight into the request body.
//! let request = Request { start_ts: 100, ..Request::default() };
//! let mut body = Vec::new();
//! let mut writer = EnvelopeWriter::new(&mut body, &request)?;
//! let mut mem = writer.mem_data(MemDataFormat::V2);
//! mem.push(b"x\0\0\x01t\x80\0\0\0\0\0\0\x01_r\x80\0\0\0\0\0\0\x01", 90, 95, b"row value");
//! mem.push(b"x\0\0\x01t\x80\0\0\0\0\0\0\x01_r\x80\0\0\0\0\0\0\x02", 91, 96, b""); // delete
//! mem.finish()?;
//! writer.finish(&ChangeSet::default())?;
//!
//! // Worker: split the body, validate the rows, then iterate without allocating.
//! let envelope = Envelope::decode(Bytes::from(body))?;
//! assert_eq!(envelope.decode_request()?.start_ts, 100);
//! let mem = envelope.decode_mem_data()?;
//! let rows = mem.rows();
//! assert_eq!((rows.len(), rows.value_bytes()), (2, 9));
//! let deletes = rows.iter().filter(|row| row.is_delete()).count();
//! assert_eq!(deletes, 1);
//! # Ok::<(), rcop_wire::Error>(())
//! ```

#![warn(missing_docs)]

mod consts;
mod envelope;
mod error;
mod export;
mod mem_data;
mod pb;
mod read;
mod rows;

pub use crate::consts::{
    CONTENT_TYPE_OCTET_STREAM, CONTENT_TYPE_PROTOBUF, COPROCESSOR_PATH, ENVELOPE_FORMAT_V1,
    ENVELOPE_FORMAT_V2, HEADER_DFS_REMOTE_CACHE_ADDR, HEADER_ENVELOPE, MEM_DATA_V1, MEM_DATA_V2,
    MIN_ROW_LEN,
};
pub use crate::envelope::{
    Envelope, EnvelopeFormat, EnvelopeWriter, MAX_CHANGE_SET_FILES, MAX_REQUEST_RANGES,
    encode_envelope, encode_envelope_into, encode_raw_envelope_into,
};
pub use crate::error::{Error, Field, Result};
pub use crate::export::{
    CF_LEVELS, ChangeSetBuilder, ExportRows, FileInfo, MAX_TABLE_LEVEL, ShardInfo,
};
pub use crate::mem_data::{MemData, MemDataFormat, MemDataWriter, encode_mem_data_into};
pub use crate::rows::{Row, RowRef, Rows, RowsBytesIter, RowsIter, RowsWriter, encode_rows_into};
