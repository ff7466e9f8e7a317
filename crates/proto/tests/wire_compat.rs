//! Wire compatibility of the generated types with upstream kvproto / tipb /
//! enginepb encodings: exact bytes, packing rules, presence and unknown
//! fields.

use bytes::Bytes;
use prost::Message;
use rcop_proto::{
    REQ_TYPE_ANALYZE, REQ_TYPE_CHECKSUM, REQ_TYPE_DAG, coprocessor, enginepb, errorpb, kvrpcpb,
    tipb,
};

/// Decodes a hex literal of this file, ignoring whitespace.
#[expect(clippy::unwrap_used, reason = "test helper: the literals are fixed in this file")]
fn unhex(s: &str) -> Vec<u8> {
    let compact: String = s.split_whitespace().collect();
    hex::decode(compact).unwrap()
}

/// `DAGRequest{time_zone_offset: 0, output_offsets: [0, 1], encode_type: TypeChunk}`.
fn sample_dag() -> tipb::DagRequest {
    tipb::DagRequest {
        time_zone_offset: Some(0),
        output_offsets: vec![0, 1],
        encode_type: Some(tipb::EncodeType::TypeChunk as i32),
        ..Default::default()
    }
}

const SAMPLE_DAG_HEX: &str = "18 00 28 00 28 01 40 01";

#[test]
fn request_type_constants() {
    assert_eq!(REQ_TYPE_DAG, 103);
    assert_eq!(REQ_TYPE_ANALYZE, 104);
    assert_eq!(REQ_TYPE_CHECKSUM, 105);
}

#[test]
fn dag_request_encodes_to_reference_bytes() {
    let bytes = sample_dag().encode_to_vec();
    assert_eq!(hex::encode(&bytes), hex::encode(unhex(SAMPLE_DAG_HEX)));

    let back = tipb::DagRequest::decode(bytes.as_slice()).unwrap();
    assert_eq!(back, sample_dag());
    assert_eq!(back.encode_type(), tipb::EncodeType::TypeChunk);
}

#[test]
fn coprocessor_request_encodes_to_reference_bytes() {
    let dag_bytes = sample_dag().encode_to_vec();
    let request = coprocessor::Request {
        tp: REQ_TYPE_DAG,
        start_ts: 42,
        data: Bytes::from(dag_bytes),
        ..Default::default()
    };
    let expected = unhex(&format!("10 67 1a 08 {SAMPLE_DAG_HEX} 38 2a"));
    let bytes = request.encode_to_vec();
    assert_eq!(hex::encode(&bytes), hex::encode(&expected));

    let back = coprocessor::Request::decode(bytes.as_slice()).unwrap();
    assert_eq!(back, request);
    assert_eq!(tipb::DagRequest::decode(back.data).unwrap(), sample_dag());
}

#[test]
fn kvproto_repeated_scalars_are_packed() {
    let ctx = kvrpcpb::Context { resolved_locks: vec![1, 2, 300], ..Default::default() };
    // Tag 13, wire type 2, length 4, varints 1, 2, 300.
    assert_eq!(hex::encode(ctx.encode_to_vec()), "6a040102ac02");

    let ctx = kvrpcpb::Context { committed_locks: vec![7], ..Default::default() };
    // Tag 22, wire type 2: key varint 0xb2 0x01.
    assert_eq!(hex::encode(ctx.encode_to_vec()), "b2010107");
}

#[test]
fn tipb_repeated_scalars_are_not_packed() {
    let resp = tipb::SelectResponse { output_counts: vec![1, 300], ..Default::default() };
    // Tag 5, wire type 0, once per element.
    assert_eq!(hex::encode(resp.encode_to_vec()), "280128ac02");

    let resp = tipb::SelectResponse { ndvs: vec![0, 5], ..Default::default() };
    assert_eq!(hex::encode(resp.encode_to_vec()), "50005005");

    let scan = tipb::TableScan { primary_column_ids: vec![1, 2], ..Default::default() };
    assert_eq!(hex::encode(scan.encode_to_vec()), "20012002");
}

#[test]
fn repeated_scalars_decode_from_either_form() {
    // A conforming decoder accepts packed and unpacked encodings alike.
    let packed_tipb = tipb::SelectResponse::decode(unhex("2a 03 01 ac 02").as_slice()).unwrap();
    assert_eq!(packed_tipb.output_counts, vec![1, 300]);

    let unpacked_kv = kvrpcpb::Context::decode(unhex("68 01 68 ac 02").as_slice()).unwrap();
    assert_eq!(unpacked_kv.resolved_locks, vec![1, 300]);
}

#[test]
fn proto2_optional_scalars_keep_presence() {
    // output_offsets = [0] only: field 3 absent.
    let without = tipb::DagRequest::decode(unhex("28 00").as_slice()).unwrap();
    assert_eq!(without.time_zone_offset, None);
    assert_eq!(without.output_offsets, vec![0]);

    // Field 3 present with value 0.
    let with = tipb::DagRequest::decode(unhex("18 00").as_slice()).unwrap();
    assert_eq!(with.time_zone_offset, Some(0));
    assert_eq!(with.output_offsets, Vec::<u32>::new());

    // And the reverse: Some(0) is written, None is not.
    let zero = tipb::DagRequest { time_zone_offset: Some(0), ..Default::default() };
    assert_eq!(zero.encode_to_vec(), vec![0x18, 0x00]);
    assert!(tipb::DagRequest::default().encode_to_vec().is_empty());
}

#[test]
fn proto3_scalars_omit_defaults() {
    let request = coprocessor::Request { tp: 0, start_ts: 0, ..Default::default() };
    assert!(request.encode_to_vec().is_empty());

    // A proto3 `optional` keeps presence: keyspace_id = 0 is written.
    let ctx = kvrpcpb::Context { keyspace_id: Some(0), ..Default::default() };
    assert_eq!(hex::encode(ctx.encode_to_vec()), "800200");
    let back = kvrpcpb::Context::decode(unhex("80 02 00").as_slice()).unwrap();
    assert_eq!(back.keyspace_id, Some(0));
    assert_eq!(kvrpcpb::Context::decode(&[][..]).unwrap().keyspace_id, None);
}

#[test]
fn unknown_fields_of_every_wire_type_are_skipped() {
    let bytes = unhex(
        "18 08 \
         a0 06 96 01 \
         28 07 \
         a9 06 01 02 03 04 05 06 07 08 \
         5a 03 55 54 43 \
         b2 06 03 aa bb cc \
         bd 06 01 02 03 04 \
         c3 06 08 05 c4 06 \
         40 01 \
         a2 01 02 08 03 \
         28 09",
    );
    // 18 08              time_zone_offset = 8
    // a0 06 96 01        field 100, varint 150            (unknown)
    // 28 07              output_offsets += 7
    // a9 06 <8 bytes>    field 101, 64-bit                (unknown)
    // 5a 03 "UTC"        time_zone_name
    // b2 06 03 <3 bytes> field 102, length-delimited      (unknown)
    // bd 06 <4 bytes>    field 103, 32-bit                (unknown)
    // c3 06 08 05 c4 06  field 104, group holding a varint (unknown)
    // 40 01              encode_type = TypeChunk
    // a2 01 02 08 03     field 20, intermediate_output_channels (not declared)
    // 28 09              output_offsets += 9
    let dag = tipb::DagRequest::decode(bytes.as_slice()).unwrap();
    let expected = tipb::DagRequest {
        time_zone_offset: Some(8),
        output_offsets: vec![7, 9],
        time_zone_name: Some("UTC".to_owned()),
        encode_type: Some(tipb::EncodeType::TypeChunk as i32),
        ..Default::default()
    };
    assert_eq!(dag, expected);
    // Unknown fields are dropped, not carried through.
    assert_eq!(hex::encode(dag.encode_to_vec()), "18082807280940015a03555443");
}

#[test]
fn unknown_fields_in_proto3_request_are_skipped() {
    let bytes = unhex(
        "10 67 \
         80 01 e8 07 \
         1a 02 aa bb \
         72 02 68 69 \
         38 2a \
         99 01 00 00 00 00 00 00 00 01 \
         50 80 01",
    );
    // 10 67              tp = 103
    // 80 01 e8 07        field 16 (max_keys_read), varint 1000 (not declared)
    // 1a 02 aa bb        data
    // 72 02 "hi"         field 14 (table_shard_infos), bytes (not declared)
    // 38 2a              start_ts = 42
    // 99 01 <8 bytes>    field 19, 64-bit (unknown)
    // 50 80 01           paging_size = 128
    let request = coprocessor::Request::decode(bytes.as_slice()).unwrap();
    assert_eq!(request.tp, REQ_TYPE_DAG);
    assert_eq!(request.data.as_ref(), [0xaa, 0xbb]);
    assert_eq!(request.start_ts, 42);
    assert_eq!(request.paging_size, 128);
    assert_eq!(request.context, None);
    assert!(request.ranges.is_empty());
}

#[test]
fn truncated_input_is_an_error() {
    let full = unhex(&format!("10 67 1a 08 {SAMPLE_DAG_HEX} 38 2a"));
    for cut in [3, 5, full.len() - 1] {
        let short = full.get(..cut).unwrap();
        assert!(coprocessor::Request::decode(short).is_err(), "prefix of {cut} bytes decoded");
    }
}

#[test]
fn response_with_region_error_and_exec_details() {
    let response = coprocessor::Response {
        region_error: Some(errorpb::Error {
            message: "x".to_owned(),
            server_is_busy: Some(errorpb::ServerIsBusy {
                reason: "busy".to_owned(),
                backoff_ms: 5,
                ..Default::default()
            }),
            ..Default::default()
        }),
        exec_details_v2: Some(kvrpcpb::ExecDetailsV2 {
            time_detail: Some(kvrpcpb::TimeDetail {
                process_wall_time_ms: 3,
                ..Default::default()
            }),
            scan_detail_v2: Some(kvrpcpb::ScanDetailV2 {
                processed_versions: 2,
                processed_versions_size: 50,
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let expected = unhex(
        "12 0d 0a 01 78 32 08 0a 04 62 75 73 79 10 05 \
         5a 0a 0a 02 10 03 12 04 08 02 40 32",
    );
    assert_eq!(hex::encode(response.encode_to_vec()), hex::encode(&expected));
    assert_eq!(coprocessor::Response::decode(expected.as_slice()).unwrap(), response);
}

#[test]
fn lock_info_round_trips_with_op_enum() {
    let lock = kvrpcpb::LockInfo {
        primary_lock: Bytes::from_static(b"p"),
        lock_version: 9,
        key: Bytes::from_static(b"k"),
        lock_type: kvrpcpb::Op::PessimisticLock as i32,
        is_txn_file: true,
        ..Default::default()
    };
    // is_txn_file: tag 100, varint -> key 0xa0 0x06.
    assert_eq!(hex::encode(lock.encode_to_vec()), "0a017010091a016b3005a00601");
    let back = kvrpcpb::LockInfo::decode(lock.encode_to_vec().as_slice()).unwrap();
    assert_eq!(back.lock_type(), kvrpcpb::Op::PessimisticLock);
    assert_eq!(back, lock);
}

fn sample_change_set() -> enginepb::ChangeSet {
    enginepb::ChangeSet {
        shard_id: 1,
        shard_ver: 2,
        sequence: 3,
        snapshot: Some(enginepb::Snapshot {
            outer_start: Bytes::from_static(b"a"),
            outer_end: Bytes::from_static(b"b"),
            l0_creates: vec![enginepb::L0Create {
                id: 5,
                smallest: Bytes::from_static(b"a"),
                biggest: Bytes::from_static(b"b"),
                size: 100,
            }],
            table_creates: vec![enginepb::TableCreate {
                id: 6,
                level: 1,
                cf: 2,
                smallest: Bytes::from_static(b"a"),
                biggest: Bytes::from_static(b"b"),
                meta_offset: 7,
            }],
            inner_key_off: 4,
            ..Default::default()
        }),
    }
}

#[test]
fn change_set_encodes_to_hand_computed_bytes() {
    let expected = unhex(
        "08 01 \
         10 02 \
         32 24 \
            0a 01 61 \
            12 01 62 \
            2a 0a 08 05 12 01 61 1a 01 62 20 64 \
            32 0e 08 06 10 01 18 02 22 01 61 2a 01 62 38 07 \
            58 04 \
         60 03",
    );
    // ChangeSet: shardID=1, shardVer=2, snapshot (field 6, 36 bytes), sequence (field 12) = 3.
    // Snapshot: outer_start, outer_end, l0Creates (field 5), tableCreates (field 6),
    // inner_key_off (field 11).
    let change_set = sample_change_set();
    assert_eq!(hex::encode(change_set.encode_to_vec()), hex::encode(&expected));
    assert_eq!(enginepb::ChangeSet::decode(expected.as_slice()).unwrap(), change_set);
}

#[test]
fn change_set_with_all_snapshot_parts_round_trips() {
    let mut change_set = sample_change_set();
    let snapshot = change_set.snapshot.as_mut().unwrap();
    snapshot.properties = Some(enginepb::Properties {
        shard_id: 1,
        keys: vec!["ENCRYPTION_KEY".to_owned(), "other".to_owned()],
        values: vec![Bytes::from_static(b"\x00\x01"), Bytes::new()],
    });
    snapshot.base_version = 77;
    snapshot.data_sequence = 78;
    snapshot.max_ts = u64::MAX;
    snapshot.blob_creates = vec![enginepb::BlobCreate {
        id: 9,
        smallest: Bytes::from_static(b"a"),
        biggest: Bytes::from_static(b"z"),
        meta_offset: 1234,
    }];
    snapshot.l0_creates.push(enginepb::L0Create {
        id: u64::MAX,
        smallest: Bytes::new(),
        biggest: Bytes::from_static(&[0xff; 20]),
        size: u32::MAX,
    });
    let bytes = change_set.encode_to_vec();
    assert_eq!(bytes.len(), change_set.encoded_len());
    assert_eq!(enginepb::ChangeSet::decode(bytes.as_slice()).unwrap(), change_set);
}

#[test]
fn reserved_snapshot_field_is_skipped() {
    // Field 14 (reserved) and field 40 (a columnar field) as unknown bytes.
    let bytes = unhex("58 04 72 01 00 c2 02 01 01");
    let snapshot = enginepb::Snapshot::decode(bytes.as_slice()).unwrap();
    assert_eq!(snapshot, enginepb::Snapshot { inner_key_off: 4, ..Default::default() });
}

#[test]
fn txn_file_refs_encode_with_packed_chunk_ids() {
    let refs = enginepb::TxnFileRefs {
        txn_file_refs: vec![enginepb::TxnFileRef {
            start_ts: 10,
            chunk_ids: vec![1, 2],
            version: 11,
            ..Default::default()
        }],
    };
    assert_eq!(hex::encode(refs.encode_to_vec()), "0a08080a12020102180b");
    assert_eq!(enginepb::TxnFileRefs::decode(refs.encode_to_vec().as_slice()).unwrap(), refs);
}

#[test]
fn enum_numbers_match_upstream() {
    use tipb::{ExecType, ExprType, ScalarFuncSig as Sig};

    let sigs = [
        (Sig::CastIntAsInt, 1),
        (Sig::CastIntAsJson, 7),
        (Sig::CastRealAsDecimal, 13),
        (Sig::CastStringAsTime, 34),
        (Sig::CastTimeAsString, 42),
        (Sig::CastDurationAsDuration, 55),
        (Sig::CastJsonAsJson, 66),
        (Sig::LtInt, 100),
        (Sig::LeJson, 116),
        (Sig::GtDecimal, 122),
        (Sig::GeString, 133),
        (Sig::EqTime, 144),
        (Sig::NeDuration, 155),
        (Sig::NullEqInt, 160),
        (Sig::PlusReal, 200),
        (Sig::PlusInt, 203),
        (Sig::MultiplyIntUnsigned, 218),
        (Sig::PlusIntUnsignedUnsigned, 219),
        (Sig::IntDivideIntSignedUnsigned, 237),
        (Sig::AbsInt, 2101),
        (Sig::RoundDec, 2123),
        (Sig::RoundWithFracDec, 2126),
        (Sig::LogicalAnd, 3101),
        (Sig::UnaryNotInt, 3104),
        (Sig::UnaryMinusDecimal, 3110),
        (Sig::IntIsNull, 3116),
        (Sig::IntIsTrue, 3122),
        (Sig::IntIsFalse, 3125),
        (Sig::DecimalIsFalseWithNull, 3147),
        (Sig::InInt, 4001),
        (Sig::InJson, 4007),
        (Sig::IfNullInt, 4101),
        (Sig::IfDuration, 4112),
        (Sig::CoalesceInt, 4201),
        (Sig::CaseWhenInt, 4208),
        (Sig::CaseWhenDuration, 4213),
        (Sig::IlikeSig, 4309),
        (Sig::LikeSig, 4310),
        (Sig::DateFormatSig, 6001),
        (Sig::DateDiff, 6003),
        (Sig::Date, 6012),
        (Sig::Month, 6017),
        (Sig::DayOfMonth, 6022),
        (Sig::Year, 6029),
        (Sig::Quarter, 6073),
        (Sig::ExtractDatetime, 6090),
        (Sig::AddDateStringInt, 6093),
        (Sig::SubDateDatetimeInt, 6105),
        (Sig::CharLengthUtf8, 7005),
        (Sig::Concat, 7006),
        (Sig::Left, 7028),
        (Sig::Length, 7029),
        (Sig::Lower, 7034),
        (Sig::Right, 7048),
        (Sig::Strcmp, 7052),
        (Sig::Substring2ArgsUtf8, 7053),
        (Sig::Substring3ArgsUtf8, 7054),
        (Sig::Substring2Args, 7055),
        (Sig::Substring3Args, 7056),
        (Sig::UpperUtf8, 7063),
        (Sig::Upper, 7064),
        (Sig::LowerUtf8, 7066),
    ];
    for (sig, number) in sigs {
        assert_eq!(sig as i32, number, "{sig:?}");
        assert_eq!(Sig::try_from(number).unwrap(), sig);
    }

    let expr_types = [
        (ExprType::Null, 0),
        (ExprType::Int64, 1),
        (ExprType::Bytes, 6),
        (ExprType::MysqlBit, 101),
        (ExprType::MysqlJson, 108),
        (ExprType::TiDbVectorFloat32, 121),
        (ExprType::ValueList, 151),
        (ExprType::ColumnRef, 201),
        (ExprType::Count, 3001),
        (ExprType::AggBitXor, 3010),
        (ExprType::Variance, 3017),
        (ExprType::MaxCount, 3023),
        (ExprType::RowNumber, 4001),
        (ExprType::NthValue, 4011),
        (ExprType::ScalarFunc, 10000),
    ];
    for (tp, number) in expr_types {
        assert_eq!(tp as i32, number, "{tp:?}");
    }

    assert_eq!(ExecType::TypeTableScan as i32, 0);
    assert_eq!(ExecType::TypeProjection as i32, 11);
    assert_eq!(ExecType::TypeIndexLookUp as i32, 20);
    assert_eq!(ExecType::TypeExplainForConnection as i32, 21);
    assert_eq!(tipb::EncodeType::TypeChBlock as i32, 2);
    assert_eq!(tipb::AggFunctionMode::DedupMode as i32, 4);
    assert_eq!(kvrpcpb::IsolationLevel::RcCheckTs as i32, 2);
    assert_eq!(kvrpcpb::ApiVersion::V2 as i32, 2);
}

#[test]
fn unknown_enum_numbers_decode_and_are_visible() {
    // Expr{tp: ScalarFunc, sig: 99999}: tp = 10000 -> 08 90 4e, sig -> 20 9f 8d 06.
    let expr = tipb::Expr::decode(unhex("08 90 4e 20 9f 8d 06").as_slice()).unwrap();
    assert_eq!(expr.tp(), tipb::ExprType::ScalarFunc);
    assert_eq!(expr.sig, Some(99_999));
    assert!(tipb::ScalarFuncSig::try_from(99_999).is_err());
}

#[test]
fn executor_tree_fields_round_trip() {
    let column = tipb::ColumnInfo {
        column_id: Some(1),
        tp: Some(8),
        pk_handle: Some(true),
        default_val: Some(Bytes::from_static(&[0x08, 0x02])),
        ..Default::default()
    };
    let scan = tipb::Executor {
        tp: Some(tipb::ExecType::TypeTableScan as i32),
        tbl_scan: Some(tipb::TableScan {
            table_id: Some(53),
            columns: vec![column],
            desc: Some(false),
            ..Default::default()
        }),
        executor_id: Some("TableFullScan_5".to_owned()),
        ..Default::default()
    };
    let column_ref = tipb::Expr {
        tp: Some(tipb::ExprType::ColumnRef as i32),
        val: Some(Bytes::from_static(&[0x80, 0, 0, 0, 0, 0, 0, 0])),
        ..Default::default()
    };
    let selection = tipb::Executor {
        tp: Some(tipb::ExecType::TypeSelection as i32),
        selection: Some(Box::new(tipb::Selection {
            conditions: vec![tipb::Expr {
                tp: Some(tipb::ExprType::ScalarFunc as i32),
                sig: Some(tipb::ScalarFuncSig::IntIsTrue as i32),
                children: vec![column_ref],
                field_type: Some(tipb::FieldType { tp: Some(8), ..Default::default() }),
                ..Default::default()
            }],
            ..Default::default()
        })),
        ..Default::default()
    };
    let dag = tipb::DagRequest {
        executors: vec![scan, selection],
        output_offsets: vec![0],
        time_zone_name: Some("Asia/Shanghai".to_owned()),
        flags: Some(1),
        ..Default::default()
    };
    let bytes = dag.encode_to_vec();
    let back = tipb::DagRequest::decode(bytes.as_slice()).unwrap();
    assert_eq!(back, dag);
    let first = back.executors.first().unwrap();
    assert_eq!(first.tp(), tipb::ExecType::TypeTableScan);
    assert_eq!(first.tbl_scan.as_ref().unwrap().columns.first().unwrap().pk_handle, Some(true));
}

/// Fields a current TiDB sends that a storage node must forward intact after decoding and
/// re-encoding (`Context.trace_context` 23 and `ResourceControlContext.penalty` 2, kept as
/// their bytes) or must see to refuse (`Request.versioned_ranges` 15).
#[test]
fn newer_request_fields_survive_a_round_trip() {
    // Context { region_id: 1, trace_context (23): {1: 0x2a}, resource_control_context (28):
    // { resource_group_name: "g", penalty (2): {1: 1.0 as double} } }
    let ctx = unhex(
        "08 01
         ba 01 02 08 2a
         e2 01 0e 0a 01 67 12 09 09 00 00 00 00 00 00 f0 3f",
    );
    let decoded = kvrpcpb::Context::decode(ctx.as_slice()).unwrap();
    assert_eq!(decoded.trace_context.as_ref(), [0x08, 0x2a]);
    assert_eq!(decoded.encode_to_vec(), ctx);
    // Request { versioned_ranges (15): [{...}] } decodes with the range present.
    let req = unhex("7a 04 0a 02 61 62");
    let decoded = coprocessor::Request::decode(req.as_slice()).unwrap();
    assert_eq!(decoded.versioned_ranges.len(), 1);
    assert_eq!(decoded.encode_to_vec(), req);
}
