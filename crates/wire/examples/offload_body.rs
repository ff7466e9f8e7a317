//! What a storage node sends a worker, built and taken apart again.
//!
//! Builds two TiDB rows of a small `orders` table the way TiDB stores them (record keys with
//! the API v2 keyspace prefix, row format v2), wraps them with a DAG request and a change set
//! in an offload body (envelope v1, mem-data v2), then decodes the body as a worker would and
//! prints every part.
//!
//! Run with `cargo run -p rcop-wire --example offload_body`.

use std::error::Error;

use bytes::Bytes;
use prost::Message;
use rcop_datum::row::{Column, Row, RowEncoder, v2};
use rcop_datum::{Decimal, KeyspaceId, Time, TimeType, key};
use rcop_proto::coprocessor::{KeyRange, Request};
use rcop_proto::enginepb::{ChangeSet, Snapshot, TableCreate};
use rcop_proto::kvrpcpb::Context;
use rcop_proto::tipb::{ColumnInfo, DagRequest, EncodeType, ExecType, Executor, TableScan};
use rcop_wire::{Envelope, EnvelopeWriter, MemDataFormat};

const KEYSPACE: KeyspaceId = KeyspaceId(1);
const TABLE_ID: i64 = 107;
// orders(o_orderkey BIGINT, o_orderstatus CHAR(1), o_totalprice DECIMAL(15,2), o_orderdate DATE)
const COLUMNS: [(i64, &str, u8); 4] = [
    (1, "o_orderkey", rcop_datum::chunk::mysql_type::LONG_LONG),
    (2, "o_orderstatus", rcop_datum::chunk::mysql_type::STRING),
    (3, "o_totalprice", rcop_datum::chunk::mysql_type::NEW_DECIMAL),
    (4, "o_orderdate", rcop_datum::chunk::mysql_type::DATE),
];

fn record_key(handle: i64) -> Result<Vec<u8>, Box<dyn Error>> {
    let mut k = KEYSPACE.txn_prefix()?.to_vec();
    key::encode_record_key(&mut k, TABLE_ID, handle);
    Ok(k)
}

fn main() -> Result<(), Box<dyn Error>> {
    // 1. Two rows as TiDB writes them.
    let mut enc = RowEncoder::new();
    let mut rows = Vec::new();
    for (handle, status, price, date) in
        [(1i64, "O", "173665.47", "1996-01-02"), (2, "F", "46929.18", "1996-12-01")]
    {
        let mut value = Vec::new();
        enc.int(1, handle).bytes(2, status.as_bytes());
        enc.decimal(3, &price.parse::<Decimal>()?, 15, 2)?.into_result()?;
        enc.time(4, Time::parse(date, TimeType::Date, 0)?);
        enc.finish(&mut value)?;
        rows.push((record_key(handle)?, value));
    }

    // 2. The request: a full scan of the table at start_ts 450.
    let columns = COLUMNS
        .iter()
        .map(|&(id, _, tp)| ColumnInfo {
            column_id: Some(id),
            tp: Some(i32::from(tp)),
            ..Default::default()
        })
        .collect();
    let dag = DagRequest {
        executors: vec![Executor {
            tp: Some(ExecType::TypeTableScan as i32),
            tbl_scan: Some(TableScan { table_id: Some(TABLE_ID), columns, ..Default::default() }),
            ..Default::default()
        }],
        time_zone_offset: Some(0),
        flags: Some(0),
        output_offsets: vec![0, 1, 2, 3],
        encode_type: Some(EncodeType::TypeChunk as i32),
        ..Default::default()
    };
    let mut start = KEYSPACE.txn_prefix()?.to_vec();
    key::encode_record_prefix(&mut start, TABLE_ID);
    let end = key::prefix_next(&start);
    let request = Request {
        context: Some(Context {
            region_id: 2,
            api_version: 2,
            keyspace_id: Some(KEYSPACE.0),
            ..Default::default()
        }),
        tp: rcop_proto::REQ_TYPE_DAG,
        data: dag.encode_to_vec().into(),
        ranges: vec![KeyRange { start: start.clone().into(), end: end.clone().into() }],
        start_ts: 450,
        paging_size: u64::from(u32::MAX),
        ..Default::default()
    };

    // 3. The change set: the shard range and one L1 file of the write CF.
    let change_set = ChangeSet {
        shard_id: 2,
        shard_ver: 5,
        sequence: 42,
        snapshot: Some(Snapshot {
            outer_start: start.clone().into(),
            outer_end: end.clone().into(),
            table_creates: vec![TableCreate {
                id: 0x0001_8f00_0000_0001,
                level: 1,
                cf: 0,
                smallest: start[4..].to_vec().into(),
                biggest: end[4..].to_vec().into(),
                meta_offset: 65_536,
            }],
            inner_key_off: 4,
            ..Default::default()
        }),
    };

    // 4. The body, rows streamed straight into it (commit_ts 300 for both).
    let mut body = Vec::new();
    let mut writer = EnvelopeWriter::new(&mut body, &request)?;
    let mut mem = writer.mem_data(MemDataFormat::V2);
    for (k, v) in &rows {
        mem.push(k, 290, 300, v);
    }
    mem.finish()?;
    let len = writer.finish(&change_set)?;
    println!("offload body: {len} bytes (envelope v1, mem-data v2)\n");

    // 5. The worker's side: decode everything back.
    let env = Envelope::decode(Bytes::from(body))?;
    let req = env.decode_request()?;
    let dag = DagRequest::decode(req.data.clone())?;
    println!(
        "request: tp {} start_ts {} paging_size {} ranges {}",
        req.tp,
        req.start_ts,
        req.paging_size,
        req.ranges.len()
    );
    for r in &req.ranges {
        println!("  range [{}, {})", hex(&r.start), hex(&r.end));
    }
    println!(
        "  DAG: {} executor(s), output offsets {:?}, encode type {:?}",
        dag.executors.len(),
        dag.output_offsets,
        dag.encode_type()
    );
    let cs = env.decode_change_set()?;
    let snap = cs.snapshot.unwrap_or_default();
    println!(
        "change set: shard {} ver {} seq {}, {} L0 file(s), {} table(s)",
        cs.shard_id,
        cs.shard_ver,
        cs.sequence,
        snap.l0_creates.len(),
        snap.table_creates.len()
    );
    for t in &snap.table_creates {
        println!(
            "  file {:016x} level {} cf {} meta_offset {}",
            t.id, t.level, t.cf, t.meta_offset
        );
    }

    let mem = env.decode_mem_data()?;
    println!(
        "\nmemtable rows: {} ({} key bytes, {} value bytes)",
        mem.rows().len(),
        mem.rows().key_bytes(),
        mem.rows().value_bytes()
    );
    for row in mem.rows().iter() {
        let (ks, inner) = key::split_keyspace(row.key)?;
        let (table, handle) = key::decode_record_key(inner)?;
        println!(
            "  key {} = keyspace {ks} table {table} handle {handle}, start_ts {} commit_ts {}",
            hex(row.key),
            row.start_ts,
            row.commit_ts
        );
        println!("  value {}", hex(row.value));
        let parsed = Row::parse(row.value)?;
        for &(id, name, tp) in &COLUMNS {
            let text = match parsed.get(id)? {
                Column::V2(v) => show(v, tp)?,
                Column::Datum(d) => format!("datum {}", hex(d)),
                Column::Null => "NULL".to_owned(),
                Column::Missing => "(missing)".to_owned(),
            };
            println!("    {name:<14} = {text}");
        }
    }
    Ok(())
}

fn show(v: &[u8], tp: u8) -> Result<String, Box<dyn Error>> {
    use rcop_datum::chunk::mysql_type::*;
    Ok(match tp {
        LONG_LONG => v2::decode_v2_i64(v)?.to_string(),
        NEW_DECIMAL => {
            let (d, prec, frac) = Decimal::decode_bin(&mut rcop_datum::Reader::new(v))?;
            format!("{d} (DECIMAL({prec},{frac}))")
        }
        DATE => Time::from_packed_u64(v2::decode_v2_u64(v)?, TimeType::Date, 0)?.to_string(),
        _ => format!("{:?}", String::from_utf8_lossy(v)),
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
