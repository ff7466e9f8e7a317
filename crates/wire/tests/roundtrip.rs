//! Round trips against the naive model in `common`: the crate's encoders write the model's
//! bytes, and its decoders give back the model's values.

mod common;

use bytes::Bytes;
use common::{ModelRow, arb_rows, model_envelope, model_mem_data, model_rows};
use proptest::prelude::*;
use prost::Message;
use rcop_proto::coprocessor::{KeyRange, Request};
use rcop_proto::enginepb::{ChangeSet, TxnFileRef, TxnFileRefs};
use rcop_wire::{
    Envelope, EnvelopeWriter, MemData, MemDataFormat, MemDataWriter, RowRef, Rows, RowsWriter,
    encode_raw_envelope_into, encode_rows_into,
};

fn as_ref(r: &ModelRow) -> RowRef<'_> {
    RowRef { key: &r.key, start_ts: r.start_ts, commit_ts: r.commit_ts, value: &r.value }
}

fn check_rows(rows: &Rows, model: &[ModelRow]) {
    assert_eq!(rows.len(), model.len());
    assert_eq!(rows.is_empty(), model.is_empty());
    assert_eq!(rows.key_bytes(), model.iter().map(|r| r.key.len()).sum::<usize>());
    assert_eq!(rows.value_bytes(), model.iter().map(|r| r.value.len()).sum::<usize>());
    let it = rows.iter();
    assert_eq!(it.len(), model.len());
    let got: Vec<RowRef<'_>> = it.collect();
    let want: Vec<RowRef<'_>> = model.iter().map(as_ref).collect();
    assert_eq!(got, want);
    let shared: Vec<_> = rows.iter_bytes().collect();
    assert_eq!(shared.len(), model.len());
    for (s, m) in shared.iter().zip(model) {
        assert_eq!(s.as_row_ref(), as_ref(m));
        assert_eq!(s.is_delete(), m.value.is_empty());
    }
}

fn arb_refs() -> impl Strategy<Value = TxnFileRefs> {
    prop::collection::vec(
        (
            any::<u64>(),
            prop::collection::vec(any::<u64>(), 0..4),
            any::<u64>(),
            prop::collection::vec(any::<u8>(), 0..8),
            prop::collection::vec(any::<u8>(), 0..8),
        )
            .prop_map(|(start_ts, chunk_ids, version, user_meta, lower)| TxnFileRef {
                start_ts,
                chunk_ids,
                version,
                user_meta: user_meta.into(),
                inner_lower_bound: lower.into(),
                ..TxnFileRef::default()
            }),
        0..3,
    )
    .prop_map(|txn_file_refs| TxnFileRefs { txn_file_refs })
}

fn arb_request() -> impl Strategy<Value = Request> {
    (
        any::<i64>(),
        any::<u64>(),
        prop::collection::vec(any::<u8>(), 0..64),
        prop::collection::vec(
            (prop::collection::vec(any::<u8>(), 0..12), prop::collection::vec(any::<u8>(), 0..12)),
            0..4,
        ),
        any::<u64>(),
    )
        .prop_map(|(tp, start_ts, data, ranges, paging_size)| Request {
            tp,
            start_ts,
            data: data.into(),
            ranges: ranges
                .into_iter()
                .map(|(s, e)| KeyRange { start: s.into(), end: e.into() })
                .collect(),
            paging_size,
            ..Request::default()
        })
}

fn arb_format() -> impl Strategy<Value = MemDataFormat> {
    prop_oneof![Just(MemDataFormat::V1), Just(MemDataFormat::V2)]
}

proptest! {
    #[test]
    fn rows_round_trip(rows in arb_rows(), prefix in prop::collection::vec(any::<u8>(), 0..4)) {
        let model = model_rows(&rows).bytes;
        let mut buf = prefix.clone();
        let n = encode_rows_into(rows.iter().map(as_ref), &mut buf);
        prop_assert_eq!(n, rows.len() as u64);
        prop_assert_eq!(&buf[..prefix.len()], prefix.as_slice());
        prop_assert_eq!(&buf[prefix.len()..], model.as_slice());

        let mut streamed = Vec::new();
        let mut w = RowsWriter::new(&mut streamed);
        for r in &rows {
            w.push(&r.key, r.start_ts, r.commit_ts, &r.value);
        }
        prop_assert_eq!(w.encoded_len(), model.len());
        w.finish();
        prop_assert_eq!(&streamed, &model);

        let decoded = Rows::decode(Bytes::from(streamed.clone())).unwrap();
        check_rows(&decoded, &rows);
        prop_assert_eq!(decoded.as_bytes().as_ref(), streamed.as_slice());
    }

    #[test]
    fn mem_data_round_trip(rows in arb_rows(), format in arb_format(), refs in arb_refs()) {
        let refs = if format == MemDataFormat::V1 { TxnFileRefs::default() } else { refs };
        let model = model_mem_data(Some(format.number()), &rows, &refs.encode_to_vec());

        let mut buf = Vec::new();
        let mut w = MemDataWriter::new(&mut buf, format);
        prop_assert_eq!(w.format(), format);
        for r in &rows {
            w.push_row(as_ref(r));
        }
        prop_assert_eq!(w.row_count(), rows.len() as u64);
        let len = w.finish_with_txn_file_refs(&refs).unwrap();
        prop_assert_eq!(len, model.bytes.len());
        prop_assert_eq!(&buf, &model.bytes);

        let mem = MemData::decode(Bytes::from(buf)).unwrap();
        prop_assert_eq!(mem.format(), Some(format));
        check_rows(mem.rows(), &rows);
        prop_assert_eq!(mem.decode_txn_file_refs().unwrap(), refs);
    }

    #[test]
    fn raw_envelope_round_trip(
        request in prop::collection::vec(any::<u8>(), 0..64),
        mem_data in prop::collection::vec(any::<u8>(), 0..64),
        change_set in prop::collection::vec(any::<u8>(), 0..64),
        trailing in prop::collection::vec(any::<u8>(), 0..8),
    ) {
        let mut model = Vec::new();
        model.extend_from_slice(&1u32.to_le_bytes());
        for part in [&request, &mem_data, &change_set] {
            model.extend_from_slice(&(part.len() as u32).to_le_bytes());
            model.extend_from_slice(part);
        }
        let mut buf = Vec::new();
        let len = encode_raw_envelope_into(&request, &mem_data, &change_set, &mut buf).unwrap();
        prop_assert_eq!(len, model.len());
        prop_assert_eq!(&buf, &model);

        buf.extend_from_slice(&trailing);
        let env = Envelope::decode(Bytes::from(buf)).unwrap();
        prop_assert_eq!(env.request_bytes().as_ref(), request.as_slice());
        prop_assert_eq!(env.mem_data_bytes().as_ref(), mem_data.as_slice());
        prop_assert_eq!(env.change_set_bytes().as_ref(), change_set.as_slice());
        prop_assert_eq!(env.trailing_len(), trailing.len());
        let mut again = Vec::new();
        env.encode_into(&mut again).unwrap();
        prop_assert_eq!(again, model);
    }

    #[test]
    fn envelope_round_trip(
        request in arb_request(),
        rows in arb_rows(),
        format in prop::option::of(arb_format()),
        refs in arb_refs(),
        shard_id in any::<u64>(),
        sequence in any::<u64>(),
    ) {
        let refs = if format == Some(MemDataFormat::V2) { refs } else { TxnFileRefs::default() };
        let rows = if format.is_some() { rows } else { Vec::new() };
        let change_set = ChangeSet { shard_id, sequence, ..ChangeSet::default() };
        let mem_model = model_mem_data(format.map(MemDataFormat::number), &rows, &refs.encode_to_vec());
        let model = model_envelope(&request.encode_to_vec(), mem_model, &change_set.encode_to_vec());

        let mut buf = Vec::new();
        let mut w = EnvelopeWriter::new(&mut buf, &request).unwrap();
        if let Some(format) = format {
            let mut mem = w.mem_data(format);
            for r in &rows {
                mem.push(&r.key, r.start_ts, r.commit_ts, &r.value);
            }
            mem.finish_with_txn_file_refs(&refs).unwrap();
        }
        let len = w.finish(&change_set).unwrap();
        prop_assert_eq!(len, model.bytes.len());
        prop_assert_eq!(&buf, &model.bytes);

        let env = Envelope::decode(Bytes::from(buf)).unwrap();
        prop_assert_eq!(env.trailing_len(), 0);
        prop_assert_eq!(env.decode_request().unwrap(), request);
        prop_assert_eq!(env.decode_change_set().unwrap(), change_set);
        let mem = env.decode_mem_data().unwrap();
        prop_assert_eq!(mem.format(), format);
        check_rows(mem.rows(), &rows);
        prop_assert_eq!(mem.decode_txn_file_refs().unwrap(), refs);
    }
}
