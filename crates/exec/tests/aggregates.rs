//! Aggregate functions, one case list per family, against MySQL's documented semantics and
//! TiKV's (`tidb_query_aggr`) published expectations: NULLs skipped, empty input, overflow,
//! unsigned arguments, decimal precision, and the output layout and types TiKV gives.

#![expect(clippy::unwrap_used, clippy::panic, reason = "fixture builders outside #[test] fns")]

mod support;

use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::row::encode_row_v1;
use rcop_datum::{Datum, Decimal, key};
use rcop_exec::{Engine, Error, Feature, MemStore, check_dag};
use rcop_proto::tipb;
use support::dag::*;

const TID: i64 = 77;

/// A table of `rows`, column ids 1.. in order, handles 1.. in order.
fn table(rows: &[Vec<Datum>]) -> MemStore {
    MemStore::from_pairs(rows.iter().enumerate().map(|(i, r)| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TID, i as i64 + 1);
        let cols: Vec<(i64, Datum)> =
            r.iter().enumerate().map(|(c, d)| (c as i64 + 1, d.clone())).collect();
        let mut v = Vec::new();
        encode_row_v1(&cols, &mut v).unwrap();
        (k, v)
    }))
}

fn unsigned(tp: u8) -> tipb::FieldType {
    tipb::FieldType { flag: Some(32), ..ft(tp) }
}

/// Runs `aggs` (no GROUP BY) over the columns `fts` of `rows`; the one result row.
fn run(fts: &[tipb::FieldType], rows: &[Vec<Datum>], aggs: Vec<tipb::Expr>) -> Vec<Datum> {
    try_run(fts, rows, aggs).unwrap_or_else(|e| panic!("{e}"))
}

fn try_run(
    fts: &[tipb::FieldType],
    rows: &[Vec<Datum>],
    aggs: Vec<tipb::Expr>,
) -> Result<Vec<Datum>, String> {
    let infos = fts.iter().enumerate().map(|(i, f)| column_info(i as i64 + 1, f, false)).collect();
    let d = dag(vec![scan(TID, infos, false), aggregation(vec![], aggs)], vec![], false);
    let width = check_width(&d);
    let d = tipb::DagRequest { output_offsets: (0..width as u32).collect(), ..d };
    let resp = Engine::default()
        .handle(&request(&d, vec![table_range(TID, None)]), &mut table(rows).scanner());
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    if let Some(e) = sel.error {
        return Err(e.msg.unwrap_or_default());
    }
    let mut out = default_rows(&sel, width);
    assert_eq!(out.len(), 1, "simple aggregation gives one row");
    Ok(out.remove(0))
}

/// The output width of a DAG's last executor, from the capability check's builder.
fn check_width(d: &tipb::DagRequest) -> usize {
    let cfg = rcop_exec::EvalConfig::from_dag(d).unwrap();
    rcop_exec::build_executors(d, &[], &cfg, 100).unwrap().schema().len()
}

fn dec(s: &str) -> Datum {
    Datum::Decimal(s.parse().unwrap())
}

fn as_f64(d: &Datum) -> f64 {
    match d {
        Datum::Decimal(x) => x.as_f64(),
        Datum::Float(x) => *x,
        other => panic!("{other:?}"),
    }
}

#[test]
fn count_is_unsigned_and_skips_nulls() {
    let rows = [vec![Datum::Int(1)], vec![Datum::Null], vec![Datum::Int(3)]];
    let got = run(
        &[ft(mt::LONG_LONG)],
        &rows,
        vec![
            agg(3001, ft(mt::LONG_LONG), vec![col(0, ft(mt::LONG_LONG))]),
            agg(3001, ft(mt::LONG_LONG), vec![int(1)]),
            agg(3001, ft(mt::LONG_LONG), vec![null(ft(mt::LONG_LONG))]),
        ],
    );
    // COUNT's column is an unsigned BIGINT (TiKV), whatever type TiDB gave the call.
    assert_eq!(got, [Datum::Uint(2), Datum::Uint(3), Datum::Uint(0)]);
    let got = run(&[ft(mt::LONG_LONG)], &[], vec![agg(3001, ft(mt::LONG_LONG), vec![int(1)])]);
    assert_eq!(got, [Datum::Uint(0)]);
}

#[test]
fn sum_and_avg_of_integers_are_exact_decimals() {
    let max = i64::MAX;
    let rows =
        [vec![Datum::Int(max)], vec![Datum::Int(max)], vec![Datum::Null], vec![Datum::Int(3)]];
    let sum = agg(3002, ft_dec(65, 0), vec![col(0, ft(mt::LONG_LONG))]);
    let avg = agg(3003, ft_dec(65, 4), vec![col(0, ft(mt::LONG_LONG))]);
    // 2 * 9223372036854775807 + 3: past BIGINT, exact in DECIMAL (MySQL's SUM of integers).
    let got = run(&[ft(mt::LONG_LONG)], &rows, vec![sum, avg]);
    assert_eq!(got, [dec("18446744073709551617"), Datum::Uint(3), dec("18446744073709551617")]);
    // Unsigned: u64::MAX twice.
    let rows = [vec![Datum::Uint(u64::MAX)], vec![Datum::Uint(u64::MAX)]];
    let sum = agg(3002, ft_dec(65, 0), vec![col(0, unsigned(mt::LONG_LONG))]);
    assert_eq!(run(&[unsigned(mt::LONG_LONG)], &rows, vec![sum]), [dec("36893488147419103230")]);
    // No values: SUM is NULL, AVG's count 0 and sum NULL.
    let sum = agg(3002, ft_dec(65, 0), vec![col(0, ft(mt::LONG_LONG))]);
    let avg = agg(3003, ft_dec(65, 4), vec![col(0, ft(mt::LONG_LONG))]);
    let got = run(&[ft(mt::LONG_LONG)], &[vec![Datum::Null]], vec![sum, avg]);
    assert_eq!(got, [Datum::Null, Datum::Uint(0), Datum::Null]);
}

#[test]
fn sum_types_follow_tikv_rewrite() {
    // Decimals keep their digits: ten 0.1 are exactly 1.0.
    let rows: Vec<Vec<Datum>> = (0..10).map(|_| vec![dec("0.1")]).collect();
    let sum = agg(3002, ft_dec(13, 1), vec![col(0, ft_dec(3, 1))]);
    let got = run(&[ft_dec(3, 1)], &rows, vec![sum]);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0], dec("1.0"));
    // Strings are summed as DOUBLE ('12.5' + '42.0', TiKV's impl_sum test).
    let rows = [
        vec![Datum::Bytes(b"12.5".to_vec())],
        vec![Datum::Null],
        vec![Datum::Bytes(b"42.0".to_vec())],
    ];
    let sum = agg(3002, ft(mt::DOUBLE), vec![col(0, ft_str(63))]);
    let avg = agg(3003, ft(mt::DOUBLE), vec![col(0, ft_str(63))]);
    let got = run(&[ft_str(63)], &rows, vec![sum, avg]);
    assert_eq!(got, [Datum::Float(54.5), Datum::Uint(2), Datum::Float(54.5)]);
    // A result type other than the rewritten one is refused, as TiKV's parser does.
    for (arg, own) in [
        (ft(mt::LONG_LONG), ft(mt::DOUBLE)),
        (ft_str(63), ft_dec(20, 2)),
        (ft(mt::DOUBLE), ft_dec(20, 2)),
        (ft_dec(10, 2), ft(mt::DOUBLE)),
    ] {
        for tp in [3002, 3003, 3015, 3016] {
            let e = agg(tp, own.clone(), vec![col(0, arg.clone())]);
            let infos = vec![column_info(1, &arg, false)];
            let d = dag(vec![scan(TID, infos, false), aggregation(vec![], vec![e])], vec![0], true);
            match check_dag(&d) {
                Err(Error::Unsupported { what: Feature::AggregateMode, .. }) => {}
                other => panic!("{tp} of {arg:?} as {own:?}: {other:?}"),
            }
        }
    }
}

#[test]
fn min_max_first_keep_the_argument_type() {
    let u = unsigned(mt::LONG_LONG);
    // -1 is u64::MAX under the UNSIGNED flag: the largest value, not the smallest.
    let rows = [
        vec![Datum::Uint(1)],
        vec![Datum::Null],
        vec![Datum::Uint(u64::MAX)],
        vec![Datum::Uint(7)],
    ];
    let got = run(
        std::slice::from_ref(&u),
        &rows,
        vec![
            agg(3004, u.clone(), vec![col(0, u.clone())]),
            agg(3005, u.clone(), vec![col(0, u.clone())]),
            agg(3006, u.clone(), vec![col(0, u.clone())]),
        ],
    );
    assert_eq!(got, [Datum::Uint(1), Datum::Uint(u64::MAX), Datum::Uint(1)]);
    // FIRST_ROW keeps a leading NULL; MIN/MAX of no values are NULL.
    let rows = [vec![Datum::Null], vec![Datum::Int(4)]];
    let i = ft(mt::LONG_LONG);
    let got = run(
        std::slice::from_ref(&i),
        &rows,
        vec![
            agg(3006, i.clone(), vec![col(0, i.clone())]),
            agg(3004, i.clone(), vec![null(i.clone())]),
        ],
    );
    assert_eq!(got, [Datum::Null, Datum::Null]);
    // MAX of a BIGINT returning a DOUBLE is refused (TiKV: "Unexpected return field type").
    let e = agg(3005, ft(mt::DOUBLE), vec![col(0, i.clone())]);
    let d = dag(
        vec![scan(TID, vec![column_info(1, &i, false)], false), aggregation(vec![], vec![e])],
        vec![0],
        true,
    );
    assert!(matches!(check_dag(&d), Err(Error::Unsupported { .. })));
}

#[test]
fn bit_aggregates_fold_64_bits_and_are_never_null() {
    let u = unsigned(mt::LONG_LONG);
    let i = ft(mt::LONG_LONG);
    let bits = |rows: &[Vec<Datum>]| {
        run(
            std::slice::from_ref(&i),
            rows,
            vec![
                agg(3008, u.clone(), vec![col(0, i.clone())]),
                agg(3009, u.clone(), vec![col(0, i.clone())]),
                agg(3010, u.clone(), vec![col(0, i.clone())]),
            ],
        )
    };
    // MySQL: over no rows BIT_AND is 18446744073709551615, BIT_OR and BIT_XOR 0.
    assert_eq!(bits(&[]), [Datum::Uint(u64::MAX), Datum::Uint(0), Datum::Uint(0)]);
    assert_eq!(bits(&[vec![Datum::Null]]), [Datum::Uint(u64::MAX), Datum::Uint(0), Datum::Uint(0)]);
    // TiKV's impl_bit_op cases: 1 | 5 | 8 = 13, 1 ^ 5 ^ 8 = 12, 7 & 4 = 4.
    let rows = [vec![Datum::Int(1)], vec![Datum::Null], vec![Datum::Int(5)], vec![Datum::Int(8)]];
    assert_eq!(bits(&rows), [Datum::Uint(0), Datum::Uint(13), Datum::Uint(12)]);
    let rows = [vec![Datum::Int(7)], vec![Datum::Int(4)], vec![Datum::Int(-1)]];
    assert_eq!(bits(&rows), [Datum::Uint(4), Datum::Uint(u64::MAX), Datum::Uint(4 ^ 7 ^ u64::MAX)]);
    // A DOUBLE argument is cast to BIGINT first (rounded: 2.6 is 3).
    let d = ft(mt::DOUBLE);
    let rows = [vec![Datum::Float(2.6)], vec![Datum::Float(4.0)]];
    let got =
        run(std::slice::from_ref(&d), &rows, vec![agg(3009, u.clone(), vec![col(0, d.clone())])]);
    assert_eq!(got, [Datum::Uint(7)]);
}

#[test]
fn variances_give_count_sum_and_variance() {
    let d = ft(mt::DOUBLE);
    let rows: Vec<Vec<Datum>> =
        [1.0, 2.0, 3.0, 4.0].iter().map(|x| vec![Datum::Float(*x)]).collect();
    let got = run(
        std::slice::from_ref(&d),
        &rows,
        vec![
            agg(3015, d.clone(), vec![col(0, d.clone())]),
            agg(3017, d.clone(), vec![col(0, d.clone())]),
            agg(3016, d.clone(), vec![col(0, d.clone())]),
        ],
    );
    // MySQL: VAR_POP(1,2,3,4) = 1.25, VAR_SAMP = 5/3.
    let f = Datum::Float;
    assert_eq!(
        got,
        [
            Datum::Uint(4),
            f(10.0),
            f(1.25),
            Datum::Uint(4),
            f(10.0),
            f(1.25),
            Datum::Uint(4),
            f(10.0),
            f(5.0 / 3.0)
        ]
    );
    // TiKV's impl_variance test: strings '12.5' and '42.0' as DOUBLE.
    let rows = [
        vec![Datum::Bytes(b"12.5".to_vec())],
        vec![Datum::Null],
        vec![Datum::Bytes(b"42.0".to_vec())],
    ];
    let got = run(
        &[ft_str(63)],
        &rows,
        vec![
            agg(3015, d.clone(), vec![col(0, ft_str(63))]),
            agg(3016, d.clone(), vec![col(0, ft_str(63))]),
        ],
    );
    assert_eq!(got, [Datum::Uint(2), f(54.5), f(217.5625), Datum::Uint(2), f(54.5), f(435.125)]);
    // No values: count 0, NULL sum and variance; one value: a sample variance is NULL.
    let got =
        run(std::slice::from_ref(&d), &[], vec![agg(3015, d.clone(), vec![col(0, d.clone())])]);
    assert_eq!(got, [Datum::Uint(0), Datum::Null, Datum::Null]);
    let got = run(
        std::slice::from_ref(&d),
        &[vec![f(3.0)]],
        vec![agg(3016, d.clone(), vec![col(0, d.clone())])],
    );
    assert_eq!(got, [Datum::Uint(1), f(3.0), Datum::Null]);
}

#[test]
fn decimal_variance_keeps_four_more_digits_per_division() {
    let arg = ft_dec(5, 1);
    let rows = [vec![dec("1.5")], vec![dec("2.5")], vec![Datum::Null]];
    let got = run(
        std::slice::from_ref(&arg),
        &rows,
        vec![agg(3015, ft_dec(65, 10), vec![col(0, arg.clone())])],
    );
    assert_eq!(got[0], Datum::Uint(2));
    assert_eq!(got[1], dec("4.0"));
    // t = 2 * 2.5 - 4.0 = 1.0; 1.00 / 2 = 0.500000; / 2 = 0.2500000000.
    match &got[2] {
        Datum::Decimal(v) => {
            assert_eq!(v.to_string(), "0.2500000000");
            assert_eq!(*v, "0.25".parse::<Decimal>().unwrap());
        }
        other => panic!("{other:?}"),
    }
    // Integers are variances of DECIMALs.
    let i = ft(mt::LONG_LONG);
    let rows: Vec<Vec<Datum>> =
        [2, 4, 4, 4, 5, 5, 7, 9].iter().map(|x| vec![Datum::Int(*x)]).collect();
    let got = run(
        std::slice::from_ref(&i),
        &rows,
        vec![agg(3015, ft_dec(65, 4), vec![col(0, i.clone())])],
    );
    assert_eq!((got[0].clone(), as_f64(&got[1]), as_f64(&got[2])), (Datum::Uint(8), 40.0, 4.0));
}

#[test]
fn sum_int_is_a_bigint_that_overflows_with_an_error() {
    let i = ft(mt::LONG_LONG);
    let rows = [vec![Datum::Int(1)], vec![Datum::Null], vec![Datum::Int(5)], vec![Datum::Int(-2)]];
    assert_eq!(
        run(std::slice::from_ref(&i), &rows, vec![agg(3021, i.clone(), vec![col(0, i.clone())])]),
        [Datum::Int(4)]
    );
    assert_eq!(
        run(std::slice::from_ref(&i), &[], vec![agg(3021, i.clone(), vec![col(0, i.clone())])]),
        [Datum::Null]
    );
    let rows = [vec![Datum::Int(i64::MAX)], vec![Datum::Int(1)]];
    let e = try_run(
        std::slice::from_ref(&i),
        &rows,
        vec![agg(3021, i.clone(), vec![col(0, i.clone())])],
    )
    .unwrap_err();
    assert!(e.contains("BIGINT"), "{e}");
    let u = unsigned(mt::LONG_LONG);
    let rows = [vec![Datum::Uint(u64::MAX - 1)], vec![Datum::Uint(1)]];
    assert_eq!(
        run(std::slice::from_ref(&u), &rows, vec![agg(3021, u.clone(), vec![col(0, u.clone())])]),
        [Datum::Uint(u64::MAX)]
    );
    let rows = [vec![Datum::Uint(u64::MAX)], vec![Datum::Uint(1)]];
    let e = try_run(
        std::slice::from_ref(&u),
        &rows,
        vec![agg(3021, u.clone(), vec![col(0, u.clone())])],
    )
    .unwrap_err();
    assert!(e.contains("BIGINT UNSIGNED"), "{e}");
    // Signedness must match, and the argument must be an integer column type.
    for (arg, own) in [(u.clone(), i.clone()), (ft_str(63), i.clone()), (ft(mt::YEAR), i.clone())] {
        let e = agg(3021, own, vec![col(0, arg.clone())]);
        let d = dag(
            vec![scan(TID, vec![column_info(1, &arg, false)], false), aggregation(vec![], vec![e])],
            vec![0],
            true,
        );
        assert!(matches!(check_dag(&d), Err(Error::Unsupported { .. })), "{arg:?}");
    }
}

/// TiKV's aggregate parsers never read `aggFuncMode`: every mode, and a number outside the
/// enum, gives the partial layout Complete and Partial1 give (AVG as count and sum).
#[test]
fn every_aggregate_mode_runs_as_tikv_ignores_it() {
    let rows = vec![vec![Datum::Int(3)], vec![Datum::Int(4)], vec![Datum::Null]];
    let fts = [ft(mt::LONG_LONG)];
    let aggs = |mode: i32| {
        let mut v = vec![
            agg(3001, ft(mt::LONG_LONG), vec![col(0, ft(mt::LONG_LONG))]),
            agg(3003, ft_dec(20, 4), vec![col(0, ft(mt::LONG_LONG))]),
            agg(3005, ft(mt::LONG_LONG), vec![col(0, ft(mt::LONG_LONG))]),
        ];
        for a in &mut v {
            a.agg_func_mode = Some(mode);
        }
        v
    };
    let complete = run(&fts, &rows, aggs(tipb::AggFunctionMode::CompleteMode as i32));
    assert_eq!(complete.len(), 4, "{complete:?}");
    assert_eq!(complete[0], Datum::Uint(2));
    for mode in [1, 2, 3, 4, 99] {
        assert_eq!(run(&fts, &rows, aggs(mode)), complete, "mode {mode}");
    }
}

#[test]
fn ten_thousand_aggregates_share_one_product() {
    // SUM(c1 * c1), then SUM(c1 * c1 + k) for k in 1..N: every later argument has the first
    // one's argument as a child, found among the earlier ones by its encoding (a map, not a
    // scan of every earlier aggregate per aggregate).
    const N: i64 = 10_000;
    let c1 = col(0, ft(mt::LONG_LONG));
    let square = func(210, ft(mt::LONG_LONG), vec![c1.clone(), c1]); // MultiplyInt
    let sum_ft = ft_dec(65, 0);
    let mut aggs = vec![agg(3002, sum_ft.clone(), vec![square.clone()])];
    aggs.extend((1..N).map(|k| {
        let plus = func(203, ft(mt::LONG_LONG), vec![square.clone(), int(k)]); // PlusInt
        agg(3002, sum_ft.clone(), vec![plus])
    }));
    let rows: Vec<Vec<Datum>> = (1..=3).map(|v| vec![Datum::Int(v)]).collect();
    let infos = vec![column_info(1, &ft(mt::LONG_LONG), false)];
    // More columns than a response may return: a few of them.
    let picked = [0u32, 1, 2, 5_000, N as u32 - 1];
    let d = dag(vec![scan(TID, infos, false), aggregation(vec![], aggs)], picked.to_vec(), false);
    let resp = Engine::default()
        .handle(&request(&d, vec![table_range(TID, None)]), &mut table(&rows).scanner());
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    assert!(sel.error.is_none(), "{:?}", sel.error);
    let out = default_rows(&sel, picked.len()).remove(0);
    // 1 + 4 + 9 = 14, plus 3k for the k-th.
    for (k, d) in picked.iter().zip(&out) {
        assert_eq!(as_f64(d), f64::from(14 + 3 * k), "aggregate {k}");
    }
}
