//! Fixtures shared by the worker's integration tests: keyspace-1 record keys and rows of
//! table 10, the tipb pieces of their DAGs, and the envelope a storage node sends.
#![allow(dead_code, reason = "each test binary uses its own subset")]
#![expect(clippy::unwrap_used, reason = "fixtures of known-valid data")]

pub mod fixture;

use rcop_datum::row::RowEncoder;
use rcop_datum::{KeyspaceId, key};
use rcop_proto::{coprocessor, enginepb, tipb};
use rcop_snap::{LockCheck, NoLocks, Shard};
use rcop_wire::{EnvelopeWriter, MemDataFormat};

/// The table every fixture row belongs to.
pub const TABLE: i64 = 10;

/// The API v2 transaction prefix of keyspace `ks`.
pub fn prefix(ks: u32) -> Vec<u8> {
    KeyspaceId(ks).txn_prefix().unwrap().to_vec()
}

/// The record key of `handle` in keyspace 1, table [`TABLE`].
pub fn record_key(handle: i64) -> Vec<u8> {
    let mut k = prefix(1);
    key::encode_record_key(&mut k, TABLE, handle);
    k
}

/// A row v2 with BIGINT columns 1 and 2.
pub fn row(c1: i64, c2: i64) -> Vec<u8> {
    let mut v = Vec::new();
    RowEncoder::new().int(1, c1).int(2, c2).finish(&mut v).unwrap();
    v
}

/// BIGINT, binary collation.
pub fn int_ft() -> tipb::FieldType {
    tipb::FieldType {
        tp: Some(8),
        flag: Some(0),
        flen: Some(20),
        decimal: Some(0),
        collate: Some(63),
        ..Default::default()
    }
}

/// A reference to output column `offset`.
pub fn col_expr(offset: i64) -> tipb::Expr {
    let mut v = Vec::new();
    rcop_datum::codec::encode_i64(&mut v, offset);
    tipb::Expr {
        tp: Some(201),
        val: Some(v.into()),
        field_type: Some(int_ft()),
        ..Default::default()
    }
}

/// A BIGINT column of the scan (`pk`: the handle).
pub fn column(id: i64, pk: bool) -> tipb::ColumnInfo {
    tipb::ColumnInfo { column_id: Some(id), tp: Some(8), pk_handle: Some(pk), ..Default::default() }
}

/// The envelope a storage node sends for `req` over `shard`.
pub fn export(shard: &Shard, req: &coprocessor::Request) -> Vec<u8> {
    export_with(shard, req, |_| {})
}

/// As [`export`], with mem-data v2 carrying `refs` (transaction files).
pub fn export_with_txn_files(
    shard: &Shard,
    req: &coprocessor::Request,
    refs: &enginepb::TxnFileRefs,
) -> Vec<u8> {
    let mut body = Vec::new();
    let mut writer = EnvelopeWriter::new(&mut body, req).unwrap();
    let mut mem = writer.mem_data(MemDataFormat::V2);
    let cs = shard.export(&req.ranges, &LockCheck::si(req.start_ts), &NoLocks, &mut mem).unwrap();
    mem.finish_with_txn_file_refs(refs).unwrap();
    writer.finish(&cs).unwrap();
    body
}

/// As [`export`], with the change set edited by `edit` before it is written.
pub fn export_with(
    shard: &Shard,
    req: &coprocessor::Request,
    edit: impl FnOnce(&mut enginepb::ChangeSet),
) -> Vec<u8> {
    let mut body = Vec::new();
    let mut writer = EnvelopeWriter::new(&mut body, req).unwrap();
    let mut mem = writer.mem_data(MemDataFormat::V2);
    let mut cs =
        shard.export(&req.ranges, &LockCheck::si(req.start_ts), &NoLocks, &mut mem).unwrap();
    mem.finish().unwrap();
    edit(&mut cs);
    writer.finish(&cs).unwrap();
    body
}
