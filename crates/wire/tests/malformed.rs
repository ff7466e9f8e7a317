//! Malformed input: every truncation, every corrupted length, random bytes. Decoders must
//! return an error (or, for a corrupted length, possibly a different valid decode) and never
//! panic.

mod common;

use bytes::Bytes;
use common::{Encoded, LenField, ModelRow, arb_rows, model_envelope, model_mem_data, sample_rows};
use proptest::prelude::*;
use prost::Message;
use rcop_proto::coprocessor::Request;
use rcop_proto::enginepb::{ChangeSet, TxnFileRef, TxnFileRefs};
use rcop_wire::{Envelope, Error, MemData, Rows};

/// Decodes everything an envelope holds, iterating every row; returns the first error.
fn decode_all(body: &[u8]) -> Result<(), Error> {
    let env = Envelope::decode(Bytes::copy_from_slice(body))?;
    let mem = env.decode_mem_data()?;
    check_consistent(mem.rows());
    // Protobuf errors are fine; they must just not panic.
    let _ = env.decode_request();
    let _ = env.decode_change_set();
    let _ = mem.decode_txn_file_refs();
    Ok(())
}

/// Checks that a successful decode is internally consistent.
fn check_consistent(rows: &Rows) {
    let mut n = 0;
    let (mut k, mut v) = (0, 0);
    for r in rows.iter() {
        n += 1;
        k += r.key.len();
        v += r.value.len();
    }
    assert_eq!((n, k, v), (rows.len(), rows.key_bytes(), rows.value_bytes()));
    assert_eq!(rows.iter_bytes().count(), rows.len());
}

fn refs() -> Vec<u8> {
    TxnFileRefs {
        txn_file_refs: vec![TxnFileRef {
            start_ts: 1,
            chunk_ids: vec![2, 3],
            ..TxnFileRef::default()
        }],
    }
    .encode_to_vec()
}

fn request() -> Vec<u8> {
    Request { start_ts: 99, data: Bytes::from_static(b"dag"), ..Request::default() }.encode_to_vec()
}

fn change_set() -> Vec<u8> {
    ChangeSet { shard_id: 3, shard_ver: 4, ..ChangeSet::default() }.encode_to_vec()
}

fn valid_mem_data() -> Vec<Encoded> {
    let rows = sample_rows();
    vec![
        model_mem_data(Some(1), &rows, &[]),
        model_mem_data(Some(1), &[], &[]),
        model_mem_data(Some(2), &rows, &refs()),
        model_mem_data(Some(2), &rows, &[]),
        model_mem_data(Some(2), &[], &[]),
    ]
}

fn valid_envelopes() -> Vec<Encoded> {
    let mut all: Vec<Encoded> = valid_mem_data()
        .into_iter()
        .map(|mem| model_envelope(&request(), mem, &change_set()))
        .collect();
    all.push(model_envelope(&request(), model_mem_data(None, &[], &[]), &change_set()));
    all.push(model_envelope(&[], model_mem_data(None, &[], &[]), &[]));
    all
}

#[test]
fn valid_inputs_decode() {
    for mem in valid_mem_data() {
        let decoded = MemData::decode(Bytes::from(mem.bytes)).unwrap();
        check_consistent(decoded.rows());
    }
    for env in valid_envelopes() {
        decode_all(&env.bytes).unwrap();
    }
}

#[test]
fn every_truncation_of_mem_data_is_an_error() {
    for mem in valid_mem_data() {
        // Length 0 is itself valid (no memtable).
        for cut in 1..mem.bytes.len() {
            let res = MemData::decode(Bytes::copy_from_slice(&mem.bytes[..cut]));
            let err = res.expect_err(&format!("prefix {cut} of {} decoded", mem.bytes.len()));
            let offset = err.offset().unwrap();
            assert!(offset <= cut, "offset {offset} beyond prefix {cut}: {err}");
        }
    }
}

#[test]
fn every_truncation_of_rows_is_an_error() {
    let rows = common::model_rows(&sample_rows());
    for cut in 0..rows.bytes.len() {
        assert!(Rows::decode(Bytes::copy_from_slice(&rows.bytes[..cut])).is_err(), "prefix {cut}");
    }
}

#[test]
fn every_truncation_of_an_envelope_is_an_error() {
    for env in valid_envelopes() {
        for cut in 0..env.bytes.len() {
            let res = Envelope::decode(Bytes::copy_from_slice(&env.bytes[..cut]));
            assert!(res.is_err(), "prefix {cut} of {} decoded", env.bytes.len());
        }
    }
}

fn candidates(field: &LenField, truth: u64) -> Vec<u64> {
    let mut c = vec![0, 1, 31, 32, 33, u64::from(u32::MAX), 1 << 31, field.max(), field.max() - 1];
    if field.width == 8 {
        c.extend([1 << 32, 1 << 63, u64::MAX / 32, u64::MAX / 32 + 1, usize::MAX as u64]);
    }
    for d in 1..=9 {
        c.push(truth.wrapping_add(d));
        c.push(truth.wrapping_sub(d));
    }
    c.push(truth.wrapping_mul(2));
    c.into_iter().filter(|&v| v != truth && v <= field.max()).collect()
}

#[test]
fn every_corrupted_length_is_an_error_or_a_valid_decode() {
    let mut errors = 0;
    let mut valid = 0;
    for env in valid_envelopes() {
        assert!(!env.fields.is_empty());
        for field in &env.fields {
            let truth = field.read(&env.bytes);
            for value in candidates(field, truth) {
                let mut body = env.bytes.clone();
                field.write(&mut body, value);
                match decode_all(&body) {
                    Ok(()) => valid += 1,
                    Err(_) => errors += 1,
                }
            }
        }
    }
    // Almost every corruption must be caught; a few stay valid (a shorter change set leaves
    // trailing bytes, which the envelope ignores).
    eprintln!("corrupted lengths: {errors} errors, {valid} valid decodes");
    assert!(errors > 10 * valid, "errors {errors}, valid decodes {valid}");
}

#[test]
fn every_corrupted_length_inside_mem_data_is_an_error() {
    // Mem-data is strict (rows fill their section exactly, nothing follows the refs), so no
    // corrupted length or count inside it survives.
    for mem in valid_mem_data() {
        for field in &mem.fields {
            let truth = field.read(&mem.bytes);
            for value in candidates(field, truth) {
                let mut bytes = mem.bytes.clone();
                field.write(&mut bytes, value);
                let res = MemData::decode(Bytes::from(bytes));
                assert!(res.is_err(), "field at {} set {truth} -> {value} decoded", field.pos);
            }
        }
    }
}

#[test]
fn row_count_one_too_many_or_too_few_is_an_error() {
    for mem in valid_mem_data() {
        // The model records v1 as [count, ...] and v2 as [rows_len, count, ...].
        let count_field = if mem.bytes[0] == 2 { mem.fields[1] } else { mem.fields[0] };
        let truth = count_field.read(&mem.bytes);
        for value in [truth + 1, truth.wrapping_sub(1)] {
            let mut bytes = mem.bytes.clone();
            count_field.write(&mut bytes, value);
            assert!(MemData::decode(Bytes::from(bytes)).is_err(), "count {truth} -> {value}");
        }
    }
}

#[test]
fn huge_count_is_rejected_before_walking() {
    let rows = sample_rows();
    let mut mem = model_mem_data(Some(1), &rows, &[]);
    let count = mem.fields[0];
    count.write(&mut mem.bytes, u64::MAX);
    match MemData::decode(Bytes::from(mem.bytes)) {
        Err(Error::BadRowCount { offset: 4, count: u64::MAX, .. }) => {}
        other => panic!("{other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = decode_all(&bytes);
        if let Ok(mem) = MemData::decode(Bytes::copy_from_slice(&bytes)) {
            check_consistent(mem.rows());
        }
        if let Ok(rows) = Rows::decode(Bytes::copy_from_slice(&bytes)) {
            check_consistent(&rows);
        }
    }

    #[test]
    fn random_bodies_behind_valid_headers_never_panic(
        format in 0u32..4,
        tail in prop::collection::vec(any::<u8>(), 0..256),
    ) {
        let mut mem = format.to_le_bytes().to_vec();
        mem.extend_from_slice(&tail);
        if let Ok(decoded) = MemData::decode(Bytes::from(mem.clone())) {
            check_consistent(decoded.rows());
        }
        let env = model_envelope(&tail, Encoded { bytes: mem, fields: Vec::new() }, &tail);
        let _ = decode_all(&env.bytes);
    }

    #[test]
    fn mutated_valid_envelopes_never_panic(
        rows in arb_rows(),
        v2 in any::<bool>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mem = model_mem_data(Some(if v2 { 2 } else { 1 }), &rows, &refs());
        let mut body = model_envelope(&request(), mem, &change_set()).bytes;
        for (at, byte) in edits {
            let i = at.index(body.len());
            body[i] = byte;
        }
        let _ = decode_all(&body);
    }

    #[test]
    fn truncated_random_mem_data_is_an_error(rows in arb_rows(), v2 in any::<bool>(), cut in any::<prop::sample::Index>()) {
        let rows: Vec<ModelRow> = rows;
        let mem = model_mem_data(Some(if v2 { 2 } else { 1 }), &rows, &refs()).bytes;
        let cut = 1 + cut.index(mem.len() - 1);
        prop_assert!(MemData::decode(Bytes::copy_from_slice(&mem[..cut])).is_err());
    }
}

/// Repeated entries that decode to structs many times their encoded size are counted before
/// decoding: one past the limit is refused, at the limit decodes.
#[test]
fn amplifying_repeated_entries_are_counted_before_decoding() {
    use rcop_proto::coprocessor::{KeyRange, Request};
    use rcop_proto::enginepb::{ChangeSet, Snapshot, TableCreate};
    let envelope = |req: &Request, cs: &ChangeSet| {
        Envelope::decode(Bytes::from(rcop_wire::encode_envelope(req, &[], cs).unwrap())).unwrap()
    };
    let many = |n: usize| Request { ranges: vec![KeyRange::default(); n], ..Default::default() };
    let env = envelope(&many(rcop_wire::MAX_REQUEST_RANGES + 1), &ChangeSet::default());
    assert!(
        matches!(env.decode_request(), Err(Error::TooMany { what: "key ranges", count, .. }) if count == rcop_wire::MAX_REQUEST_RANGES + 1)
    );
    let env = envelope(&many(rcop_wire::MAX_REQUEST_RANGES), &ChangeSet::default());
    assert_eq!(env.decode_request().unwrap().ranges.len(), rcop_wire::MAX_REQUEST_RANGES);

    let files = |n: usize| ChangeSet {
        snapshot: Some(Snapshot {
            table_creates: vec![TableCreate::default(); n],
            ..Default::default()
        }),
        ..Default::default()
    };
    let env = envelope(&Request::default(), &files(rcop_wire::MAX_CHANGE_SET_FILES + 1));
    assert!(matches!(
        env.decode_change_set(),
        Err(Error::TooMany { what: "change-set files", .. })
    ));
    let env = envelope(&Request::default(), &files(rcop_wire::MAX_CHANGE_SET_FILES));
    assert!(env.decode_change_set().is_ok());
}
