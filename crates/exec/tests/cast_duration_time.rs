//! CAST(TIME AS DATETIME / DATE) adds the duration to the session's current date, as MySQL.

mod support;

use prost::Message;
use rcop_datum::{Datum, Duration, Reader, Time, TimeType, Tz, codec, key};
use rcop_exec::{Engine, EngineConfig, MemStore};
use rcop_proto::{coprocessor, tipb};
use support::dag::{column_info, ft, func, scan};

const MT_DURATION: u8 = 11;
const MT_DATE: u8 = 10;
const MT_DATETIME: u8 = 12;
const CAST_DURATION_AS_TIME: i32 = 54;

fn duration_const(nanos: i64) -> tipb::Expr {
    let mut val = Vec::new();
    codec::encode_i64(&mut val, nanos);
    tipb::Expr {
        tp: Some(103),
        val: Some(val.into()),
        field_type: Some(tipb::FieldType { decimal: Some(0), ..ft(MT_DURATION) }),
        ..Default::default()
    }
}

#[expect(clippy::unwrap_used, reason = "fixtures are known-valid; a failure should be loud")]
fn cast_to(tp: u8, nanos: i64) -> Time {
    let target = tipb::FieldType { decimal: Some(0), ..ft(tp) };
    let projection = tipb::Executor {
        tp: Some(tipb::ExecType::TypeProjection as i32),
        projection: Some(Box::new(tipb::Projection {
            exprs: vec![func(CAST_DURATION_AS_TIME, target, vec![duration_const(nanos)])],
            ..Default::default()
        })),
        ..Default::default()
    };
    let handle = column_info(1, &ft(8), true);
    let dag = tipb::DagRequest {
        executors: vec![scan(1, vec![handle], false), projection],
        output_offsets: vec![0],
        time_zone_offset: Some(0),
        ..Default::default()
    };
    let mut k = Vec::new();
    key::encode_record_key(&mut k, 1, 1);
    let mut row = Vec::new();
    rcop_datum::row::RowEncoder::new().finish(&mut row).unwrap();
    let store = MemStore::from_pairs(vec![(k, row)]);
    let mut start = Vec::new();
    key::encode_record_prefix(&mut start, 1);
    let req = coprocessor::Request {
        tp: 103,
        start_ts: 10,
        data: dag.encode_to_vec().into(),
        ranges: vec![coprocessor::KeyRange {
            end: key::prefix_next(&start).into(),
            start: start.into(),
        }],
        ..Default::default()
    };
    let resp = Engine::new(EngineConfig::default()).handle(&req, &mut store.scanner());
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    assert!(sel.error.is_none(), "{:?}", sel.error);
    let rows = sel.chunks[0].rows_data.clone().unwrap_or_default();
    let tt = if tp == MT_DATE { TimeType::Date } else { TimeType::DateTime };
    Datum::decode(&mut Reader::new(&rows)).unwrap().to_time(tt, 0).unwrap().unwrap()
}

#[test]
fn cast_time_to_datetime_and_date_uses_the_current_date() {
    let day = 86_400 * 1_000_000_000i64;
    let d = 25 * 3_600 * 1_000_000_000i64 + 30 * 60 * 1_000_000_000;
    let today = Time::today(&Tz::utc()).unwrap();
    let want = today.add_duration(&Duration::from_nanos(d, 0).unwrap(), TimeType::DateTime, 0);
    let got = cast_to(MT_DATETIME, d);
    // A run straddling midnight UTC may see the next day; accept either.
    let next = Time::today(&Tz::utc()).unwrap();
    let want_next = next.add_duration(&Duration::from_nanos(d, 0).unwrap(), TimeType::DateTime, 0);
    assert!(got == want.unwrap() || got == want_next.unwrap(), "{got}");
    assert_eq!((got.hour(), got.minute()), (1, 30));
    let date = cast_to(MT_DATE, -day / 2);
    assert_eq!(date.time_type(), TimeType::Date);
    assert!(date < today || date < next, "a negative duration goes back a day: {date}");
}
