//! Byte-exact, hand-built vectors: what the upstream encoder would write.

use bytes::Bytes;
use prost::Message;
use rcop_proto::coprocessor::Request;
use rcop_proto::enginepb::{ChangeSet, TxnFileRef, TxnFileRefs};
use rcop_wire::{
    Envelope, EnvelopeFormat, EnvelopeWriter, Error, Field, MemData, MemDataFormat, MemDataWriter,
    RowRef, encode_envelope, encode_envelope_into, encode_mem_data_into, encode_raw_envelope_into,
};

#[expect(clippy::unwrap_used, reason = "test helper: a bad literal is a bug in the test")]
fn unhex(s: &str) -> Vec<u8> {
    let clean: String = s.split_whitespace().collect();
    hex::decode(clean).unwrap()
}

/// Rows: one row, key "k", start_ts 1, commit_ts 2, value "v".
const ONE_ROW: &str = "
    0100000000000000
    0100000000000000 6b
    0100000000000000
    0200000000000000
    0100000000000000 76";

const ROW: RowRef<'static> = RowRef { key: b"k", start_ts: 1, commit_ts: 2, value: b"v" };

/// `Request { start_ts: 5 }`: field 7, varint.
const REQUEST: &str = "3805";
/// `ChangeSet { shard_id: 7 }`: field 1, varint.
const CHANGE_SET: &str = "0807";

fn request() -> Request {
    Request { start_ts: 5, ..Request::default() }
}

fn change_set() -> ChangeSet {
    ChangeSet { shard_id: 7, ..ChangeSet::default() }
}

fn refs() -> TxnFileRefs {
    TxnFileRefs {
        txn_file_refs: vec![TxnFileRef {
            start_ts: 3,
            chunk_ids: vec![9],
            version: 4,
            ..TxnFileRef::default()
        }],
    }
}

/// `refs()`: field 1 (len 7) holding start_ts=3, packed chunk_ids=[9], version=4.
const REFS: &str = "0a07 0803 120109 1804";

#[test]
fn protobuf_parts_are_what_the_vectors_assume() {
    assert_eq!(request().encode_to_vec(), unhex(REQUEST));
    assert_eq!(change_set().encode_to_vec(), unhex(CHANGE_SET));
    assert_eq!(refs().encode_to_vec(), unhex(REFS));
}

#[test]
fn mem_data_v1_one_row() {
    let expected = unhex(&format!("01000000 {ONE_ROW}"));
    let mut buf = Vec::new();
    let len =
        encode_mem_data_into(MemDataFormat::V1, [ROW], &TxnFileRefs::default(), &mut buf).unwrap();
    assert_eq!(buf, expected);
    assert_eq!(len, expected.len());

    let mem = MemData::decode(Bytes::from(expected)).unwrap();
    assert_eq!(mem.format(), Some(MemDataFormat::V1));
    assert_eq!(mem.rows().iter().collect::<Vec<_>>(), [ROW]);
    assert!(mem.txn_file_refs_bytes().is_empty());
    assert_eq!(mem.decode_txn_file_refs().unwrap(), TxnFileRefs::default());
}

#[test]
fn mem_data_v2_one_row_with_refs() {
    // rows_len = 8 + (8 + 1 + 8 + 8 + 8 + 1) = 42 = 0x2a; refs are 9 bytes.
    let expected = unhex(&format!("02000000 2a00000000000000 {ONE_ROW} 09000000 {REFS}"));
    let mut w_buf = Vec::new();
    let mut w = MemDataWriter::new(&mut w_buf, MemDataFormat::V2);
    w.push_row(ROW);
    assert_eq!(w.row_count(), 1);
    assert_eq!(w.finish_with_txn_file_refs(&refs()).unwrap(), expected.len());
    assert_eq!(w_buf, expected);

    let mem = MemData::decode(Bytes::from(expected)).unwrap();
    assert_eq!(mem.format(), Some(MemDataFormat::V2));
    assert!(mem.has_memtable());
    assert_eq!(mem.rows().iter().collect::<Vec<_>>(), [ROW]);
    assert_eq!(mem.txn_file_refs_bytes().as_ref(), unhex(REFS).as_slice());
    assert_eq!(mem.decode_txn_file_refs().unwrap(), refs());
}

#[test]
fn mem_data_v2_without_rows_or_refs() {
    let expected = unhex("02000000 0800000000000000 0000000000000000 00000000");
    let mut buf = Vec::new();
    MemDataWriter::new(&mut buf, MemDataFormat::V2).finish().unwrap();
    assert_eq!(buf, expected);
    let mem = MemData::decode(Bytes::from(expected)).unwrap();
    assert!(mem.has_memtable());
    assert!(mem.rows().is_empty());
}

#[test]
fn empty_mem_data_means_no_memtable() {
    let mem = MemData::decode(Bytes::new()).unwrap();
    assert_eq!(mem.format(), None);
    assert!(!mem.has_memtable());
    assert!(mem.rows().is_empty());
    assert_eq!(mem.decode_txn_file_refs().unwrap(), TxnFileRefs::default());
}

#[test]
fn envelope_with_one_row() {
    // mem-data = 4 + 8 + 42 + 4 + 0 = 58 = 0x3a bytes (v2, no refs).
    let expected = unhex(&format!(
        "01000000
         02000000 {REQUEST}
         3a000000 02000000 2a00000000000000 {ONE_ROW} 00000000
         02000000 {CHANGE_SET}"
    ));

    let mut streamed = vec![0xFF]; // pre-existing bytes are kept
    let mut w = EnvelopeWriter::new(&mut streamed, &request()).unwrap();
    let mut mem = w.mem_data(MemDataFormat::V2);
    mem.push(ROW.key, ROW.start_ts, ROW.commit_ts, ROW.value);
    mem.finish().unwrap();
    assert_eq!(w.finish(&change_set()).unwrap(), expected.len());
    assert_eq!(streamed[0], 0xFF);
    assert_eq!(&streamed[1..], expected.as_slice());

    let mem_data = &expected[14..14 + 58];
    assert_eq!(encode_envelope(&request(), mem_data, &change_set()).unwrap(), expected);
    let mut raw = Vec::new();
    encode_raw_envelope_into(&unhex(REQUEST), mem_data, &unhex(CHANGE_SET), &mut raw).unwrap();
    assert_eq!(raw, expected);

    let env = Envelope::decode(Bytes::from(expected.clone())).unwrap();
    assert_eq!(env.trailing_len(), 0);
    assert_eq!(env.request_bytes().as_ref(), unhex(REQUEST).as_slice());
    assert_eq!(env.mem_data_bytes().as_ref(), mem_data);
    assert_eq!(env.change_set_bytes().as_ref(), unhex(CHANGE_SET).as_slice());
    assert_eq!(env.decode_request().unwrap(), request());
    assert_eq!(env.decode_change_set().unwrap(), change_set());
    let mem = env.decode_mem_data().unwrap();
    assert_eq!(mem.rows().iter().collect::<Vec<_>>(), [ROW]);
    let shared: Vec<_> = mem.rows().iter_bytes().collect();
    assert_eq!(&shared[0].key[..], b"k");
    assert_eq!(&shared[0].value[..], b"v");

    let mut again = Vec::new();
    env.encode_into(&mut again).unwrap();
    assert_eq!(again, expected);
}

/// Format 2 is format 1 with the number 2 and the crc32c of the three parts after it.
#[test]
fn envelope_v2_ends_with_the_crc32c_of_each_part() {
    // The crc32c (Castagnoli) check value, so the sums below are the standard function.
    assert_eq!(crc32c::crc32c(b"123456789"), 0xE306_9283);
    let mem_data = unhex(&format!("02000000 2a00000000000000 {ONE_ROW} 00000000"));
    let sums: Vec<u8> = [unhex(REQUEST), mem_data.clone(), unhex(CHANGE_SET)]
        .iter()
        .flat_map(|part| crc32c::crc32c(part).to_le_bytes())
        .collect();
    let mut expected = unhex(&format!(
        "02000000
         02000000 {REQUEST}
         3a000000 02000000 2a00000000000000 {ONE_ROW} 00000000
         02000000 {CHANGE_SET}"
    ));
    expected.extend_from_slice(&sums);

    let mut body = Vec::new();
    let mut w = EnvelopeWriter::with_format(&mut body, &request(), EnvelopeFormat::V2).unwrap();
    w.raw_mem_data(&mem_data);
    assert_eq!(w.finish(&change_set()).unwrap(), expected.len());
    assert_eq!(body, expected);

    let env = Envelope::decode(Bytes::from(expected.clone())).unwrap();
    assert_eq!((env.format(), env.trailing_len()), (EnvelopeFormat::V2, 0));
    assert_eq!(env.decode_request().unwrap(), request());
    assert_eq!(env.decode_change_set().unwrap(), change_set());
    assert_eq!(env.decode_mem_data().unwrap().rows().iter().collect::<Vec<_>>(), [ROW]);
    let mut again = Vec::new();
    env.encode_into(&mut again).unwrap();
    assert_eq!(again, expected);

    // A wrong sum names its part; a missing one is a truncation.
    for (i, what, offset) in
        [(0, Field::Request, 8), (1, Field::MemData, 14), (2, Field::ChangeSet, 76)]
    {
        let mut bad = expected.clone();
        let at = expected.len() - 12 + 4 * i;
        bad[at] ^= 1;
        match Envelope::decode(Bytes::from(bad)) {
            Err(Error::ChecksumMismatch { what: w, offset: o, .. }) => {
                assert_eq!((w, o), (what, offset));
            }
            other => panic!("{what}: {other:?}"),
        }
    }
    let cut = Bytes::from(expected[..expected.len() - 1].to_vec());
    assert!(matches!(Envelope::decode(cut), Err(Error::Truncated { what: Field::Checksums, .. })));
}

/// Every single-bit flip anywhere in a real envelope v2 is refused; in v1 some decode.
#[test]
fn every_bit_flip_of_an_envelope_v2_is_refused() {
    let change_set = ChangeSet {
        shard_id: 7,
        shard_ver: 3,
        snapshot: Some(rcop_proto::enginepb::Snapshot {
            outer_start: Bytes::from_static(b"x\0\0\x01"),
            outer_end: Bytes::from_static(b"x\0\0\x02"),
            inner_key_off: 4,
            table_creates: vec![rcop_proto::enginepb::TableCreate {
                id: 11,
                level: 1,
                cf: 0,
                smallest: Bytes::from_static(b"t1"),
                biggest: Bytes::from_static(b"t9"),
                meta_offset: 4000,
            }],
            ..Default::default()
        }),
        sequence: 9,
    };
    let mut body = Vec::new();
    let mut w = EnvelopeWriter::with_format(&mut body, &request(), EnvelopeFormat::V2).unwrap();
    let mut mem = w.mem_data(MemDataFormat::V2);
    mem.push(ROW.key, ROW.start_ts, ROW.commit_ts, ROW.value);
    mem.finish().unwrap();
    w.finish(&change_set).unwrap();
    let mut v1_accepted = 0;
    for bit in 0..body.len() * 8 {
        let mut flipped = body.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        assert!(Envelope::decode(Bytes::from(flipped.clone())).is_err(), "bit {bit} accepted");
        // The same flip without checksums: format 1 and the sums cut off.
        flipped[0] = 1;
        flipped.truncate(body.len() - 12);
        if bit >= 32 && bit < (body.len() - 12) * 8 {
            let v1 = Envelope::decode(Bytes::from(flipped));
            if v1.is_ok_and(|e| e.decode_change_set().is_ok() && e.decode_request().is_ok()) {
                v1_accepted += 1;
            }
        }
    }
    assert!(v1_accepted > 0, "format 1 has no checksum to refuse a flip with");
}

#[test]
fn envelope_with_empty_mem_data_and_trailing_bytes() {
    let body = unhex(&format!("01000000 02000000 {REQUEST} 00000000 02000000 {CHANGE_SET} dead"));
    let mut buf = Vec::new();
    encode_envelope_into(&request(), &[], &change_set(), &mut buf).unwrap();
    assert_eq!(buf, body[..body.len() - 2]);

    let env = Envelope::decode(Bytes::from(body)).unwrap();
    assert_eq!(env.trailing_len(), 2);
    assert!(env.mem_data_bytes().is_empty());
    assert!(!env.decode_mem_data().unwrap().has_memtable());
    assert_eq!(env.decode_request().unwrap(), request());
}

#[test]
fn writer_without_mem_data_writes_empty_mem_data() {
    let mut buf = Vec::new();
    let w = EnvelopeWriter::new(&mut buf, &request()).unwrap();
    w.finish(&change_set()).unwrap();
    assert_eq!(buf, unhex(&format!("01000000 02000000 {REQUEST} 00000000 02000000 {CHANGE_SET}")));
}

#[test]
fn a_second_mem_data_replaces_the_first() {
    let mut a = Vec::new();
    let mut w = EnvelopeWriter::new(&mut a, &request()).unwrap();
    let mut mem = w.mem_data(MemDataFormat::V2);
    mem.push(b"dropped", 1, 1, b"");
    mem.finish().unwrap();
    let mut mem = w.mem_data(MemDataFormat::V1);
    mem.push_row(ROW);
    mem.finish().unwrap();
    w.finish(&change_set()).unwrap();

    let mut v1 = Vec::new();
    encode_mem_data_into(MemDataFormat::V1, [ROW], &TxnFileRefs::default(), &mut v1).unwrap();
    assert_eq!(a, encode_envelope(&request(), &v1, &change_set()).unwrap());
}

#[test]
fn dropped_or_failed_writers_restore_the_buffer() {
    let mut buf = b"keep".to_vec();
    {
        let mut w = EnvelopeWriter::new(&mut buf, &request()).unwrap();
        let mut mem = w.mem_data(MemDataFormat::V2);
        mem.push_row(ROW);
    }
    assert_eq!(buf, b"keep");

    let mut w = EnvelopeWriter::new(&mut buf, &request()).unwrap();
    let mut mem = w.mem_data(MemDataFormat::V1);
    mem.push_row(ROW);
    // An unfinished mem-data writer is rolled back, so the envelope has no memtable.
    drop(mem);
    w.finish(&change_set()).unwrap();
    assert_eq!(&buf[4..], encode_envelope(&request(), &[], &change_set()).unwrap().as_slice());

    let mut buf = b"keep".to_vec();
    let mut mem = MemDataWriter::new(&mut buf, MemDataFormat::V1);
    mem.push_row(ROW);
    assert!(matches!(mem.finish_with_txn_file_refs(&refs()), Err(Error::TxnFileRefsNeedV2)));
    assert_eq!(buf, b"keep");
}

#[test]
fn unknown_formats_are_named() {
    let err =
        Envelope::decode(Bytes::from(unhex("03000000 00000000 00000000 00000000"))).unwrap_err();
    assert!(matches!(err, Error::BadFormat { what: Field::EnvelopeFormat, offset: 0, value: 3 }));
    assert_eq!(err.to_string(), "unsupported envelope format 3 at offset 0");

    let err = MemData::decode(Bytes::from(unhex("03000000 0000000000000000"))).unwrap_err();
    assert!(matches!(err, Error::BadFormat { what: Field::MemDataFormat, offset: 0, value: 3 }));
    assert_eq!(err.to_string(), "unsupported mem-data format 3 at offset 0");
}

#[test]
fn mem_data_errors_inside_an_envelope_carry_body_offsets() {
    // mem-data at offset 14: v1 whose row count (at 18) claims 1 row with 0 bytes left.
    let body = unhex(&format!(
        "01000000 02000000 {REQUEST} 0c000000 01000000 0100000000000000 02000000 {CHANGE_SET}"
    ));
    let env = Envelope::decode(Bytes::from(body)).unwrap();
    let err = env.decode_mem_data().unwrap_err();
    assert!(matches!(err, Error::BadRowCount { offset: 18, count: 1, have: 0 }), "{err}");
    assert_eq!(err.offset(), Some(18));
    assert!(err.is_corrupt_input());
    // The same mem-data decoded alone reports offsets from its own start.
    let err = MemData::decode(env.mem_data_bytes().clone()).unwrap_err();
    assert_eq!(err.offset(), Some(4));
}

#[test]
fn length_errors_name_the_part_and_its_prefix() {
    // Request length 3 with 2 bytes left.
    let err = Envelope::decode(Bytes::from(unhex("01000000 03000000 3805"))).unwrap_err();
    assert!(matches!(err, Error::BadLength { what: Field::Request, offset: 4, len: 3, have: 2 }));
    // Mem-data length field cut off after the request.
    let err = Envelope::decode(Bytes::from(unhex("01000000 02000000 3805 0a00"))).unwrap_err();
    assert!(matches!(
        err,
        Error::Truncated { what: Field::MemDataLen, offset: 10, need: 4, have: 2 }
    ));
    // Key length u64::MAX.
    let err = MemData::decode(Bytes::from(unhex(&format!(
        "01000000 0100000000000000 ffffffffffffffff {}",
        "00".repeat(24)
    ))))
    .unwrap_err();
    assert!(matches!(
        err,
        Error::BadLength { what: Field::Key, offset: 12, len: u64::MAX, have: 24 }
    ));
}

#[test]
fn malformed_protobuf_reports_the_part_and_offset() {
    // Request bytes 0x38 (field 7 varint) with the varint missing.
    let body = unhex(&format!("01000000 01000000 38 00000000 02000000 {CHANGE_SET}"));
    let env = Envelope::decode(Bytes::from(body)).unwrap();
    let err = env.decode_request().unwrap_err();
    assert!(matches!(err, Error::Protobuf { what: Field::Request, offset: 8, .. }));
    assert!(std::error::Error::source(&err).is_some());
    assert_eq!(env.decode_change_set().unwrap(), change_set());
}

#[test]
fn decoded_protobuf_bytes_share_the_body() {
    let req = Request { data: Bytes::from_static(b"dag request bytes"), ..Request::default() };
    let body = Bytes::from(encode_envelope(&req, &[], &ChangeSet::default()).unwrap());
    let env = Envelope::decode(body.clone()).unwrap();
    let decoded = env.decode_request().unwrap();
    assert_eq!(decoded.data, req.data);
    let body_range = body.as_ptr_range();
    assert!(body_range.contains(&decoded.data.as_ptr()), "request data was copied");
}

#[test]
fn constants() {
    assert_eq!(rcop_wire::CONTENT_TYPE_OCTET_STREAM, "application/octet-stream");
    assert_eq!(rcop_wire::CONTENT_TYPE_PROTOBUF, "application/protobuf");
    assert_eq!(rcop_wire::HEADER_DFS_REMOTE_CACHE_ADDR, "x-dfs-remote-cache-addr");
    assert_eq!(rcop_wire::COPROCESSOR_PATH, "/coprocessor");
    assert_eq!(
        (rcop_wire::ENVELOPE_FORMAT_V1, rcop_wire::MEM_DATA_V1, rcop_wire::MEM_DATA_V2),
        (1, 1, 2)
    );
    assert_eq!(MemDataFormat::from_number(2), Some(MemDataFormat::V2));
    assert_eq!(MemDataFormat::from_number(0), None);
    assert_eq!(MemDataFormat::V1.number(), 1);
}
