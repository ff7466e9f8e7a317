//! The capability check: it accepts what the engine runs and names the first thing it does
//! not, including string orderings under collations the engine cannot apply (which must
//! never fall back to byte order), and the listing reads the same tables.

#![expect(clippy::panic, reason = "a helper outside #[test] fns fails the test")]

mod support;

use rcop_datum::chunk::mysql_type as mt;
use rcop_exec::{Capabilities, Error, Feature, check_dag};
use rcop_proto::tipb;
use support::dag::*;

const TID: i64 = 9;
/// gb18030_chinese_ci, which the engine does not implement (no package carries MySQL 8's
/// pinyin weights).
const UNSUPPORTED_COLL: i32 = -248;
/// utf8mb4_bin.
const UTF8MB4_BIN: i32 = -46;

fn cols(collate: i32) -> Vec<tipb::ColumnInfo> {
    vec![
        column_info(1, &ft(mt::LONG_LONG), false),
        column_info(2, &ft_str(collate), false),
        column_info(3, &ft_dec(15, 2), false),
    ]
}

fn unsupported(d: &tipb::DagRequest) -> (Feature, String) {
    match check_dag(d) {
        Err(Error::Unsupported { what, detail }) => (what, detail),
        other => panic!("expected an unsupported feature, got {other:?}"),
    }
}

#[test]
fn supported_pipelines_pass() {
    let s = ft_str(UTF8MB4_BIN);
    let d = dag(
        vec![
            scan(TID, cols(UTF8MB4_BIN), false),
            selection(vec![func(
                143,
                ft(mt::LONG_LONG),
                vec![col(1, s.clone()), string("a", UTF8MB4_BIN)],
            )]),
            aggregation(
                vec![col(1, s.clone())],
                vec![agg(3001, ft(mt::LONG_LONG), vec![col(0, ft(mt::LONG_LONG))])],
            ),
        ],
        vec![0, 1],
        true,
    );
    check_dag(&d).unwrap();
    let d = dag(
        vec![scan(TID, cols(UTF8MB4_BIN), true), top_n(vec![(col(1, s), false)], 10), limit(5)],
        vec![0, 1, 2],
        false,
    );
    check_dag(&d).unwrap();
}

#[test]
fn the_first_unsupported_thing_is_named() {
    // A scalar function.
    // AES_ENCRYPT: TiKV does not evaluate it either.
    let aes = func(4502, ft_str(63), vec![col(1, ft_str(63)), string("key", 63)]);
    let d = dag(vec![scan(TID, cols(63), false), selection(vec![aes])], vec![0], true);
    let (what, detail) = unsupported(&d);
    assert_eq!((what, detail.as_str()), (Feature::ScalarFunc, "AesEncrypt (4502)"));
    assert_eq!(what.label(), "scalar_func");
    // An executor.
    let mut join = limit(1);
    join.tp = Some(tipb::ExecType::TypeJoin as i32);
    let d = dag(vec![scan(TID, cols(63), false), join], vec![0], true);
    assert_eq!(unsupported(&d), (Feature::Executor, "TypeJoin (7)".into()));
    // A field type, in the scan.
    let set = vec![column_info(1, &ft(mt::SET), false)];
    assert_eq!(
        unsupported(&dag(vec![scan(TID, set, false)], vec![0], true)),
        (Feature::FieldType, "Set (248)".into())
    );
    // An aggregate function, and a mode.
    // TiKV refuses the standard deviations (its parser has no STDDEV*), and so does the engine.
    let std = agg(3013, ft(mt::DOUBLE), vec![col(0, ft(mt::LONG_LONG))]);
    let d = dag(vec![scan(TID, cols(63), false), aggregation(vec![], vec![std])], vec![0], true);
    assert_eq!(unsupported(&d), (Feature::AggregateFunction, "StddevPop (3013)".into()));
    // SUM of an integer is a DECIMAL in TiKV: a DOUBLE result type is refused.
    let sum = agg(3002, ft(mt::DOUBLE), vec![col(0, ft(mt::LONG_LONG))]);
    let d = dag(vec![scan(TID, cols(63), false), aggregation(vec![], vec![sum])], vec![0], true);
    assert_eq!(unsupported(&d).0, Feature::AggregateMode);
    // Every aggregate mode is accepted, as TiKV ignores the mode.
    let mut sum = agg(3002, ft_dec(20, 2), vec![col(2, ft_dec(15, 2))]);
    sum.agg_func_mode = Some(tipb::AggFunctionMode::Partial2Mode as i32);
    let d = dag(vec![scan(TID, cols(63), false), aggregation(vec![], vec![sum])], vec![0], true);
    assert!(check_dag(&d).is_ok(), "{:?}", check_dag(&d));
    // Limit with truncate_key_expr (rank limit): a field the engine does not run.
    let mut l = limit(3);
    l.limit.as_mut().unwrap().truncate_key_expr.push(col(0, ft(mt::LONG_LONG)));
    let d = dag(vec![scan(TID, cols(63), false), l], vec![0], true);
    assert_eq!(
        unsupported(&d),
        (Feature::Executor, "Limit with truncate_key_expr (rank limit)".into())
    );
}

#[test]
fn partitioned_top_n_and_limit_pass() {
    let by = |e| tipb::ByItem { expr: Some(e), ..Default::default() };
    let mut t = top_n(vec![(col(0, ft(mt::LONG_LONG)), false)], 3);
    t.top_n.as_mut().unwrap().partition_by.push(by(col(1, ft_str(UTF8MB4_BIN))));
    check_dag(&dag(vec![scan(TID, cols(UTF8MB4_BIN), false), t], vec![0], true)).unwrap();
    let mut l = limit(3);
    l.limit.as_mut().unwrap().partition_by.push(by(col(0, ft(mt::LONG_LONG))));
    check_dag(&dag(vec![scan(TID, cols(63), false), l], vec![0], true)).unwrap();
    // A partition key under a collation the engine cannot apply is refused.
    let mut l = limit(3);
    l.limit.as_mut().unwrap().partition_by.push(by(col(1, ft_str(UNSUPPORTED_COLL))));
    let d = dag(vec![scan(TID, cols(UNSUPPORTED_COLL), false), l], vec![0], true);
    assert_eq!(unsupported(&d).0, Feature::Collation);
    // TopN needs an order (TiKV: "Missing Top N column").
    let e = check_dag(&dag(vec![scan(TID, cols(63), false), top_n(vec![], 3)], vec![0], true));
    assert!(matches!(e, Err(Error::InvalidRequest(_))), "{e:?}");
}

/// Strings compared, grouped, ordered or reduced under a `_ci` collation are refused
/// everywhere, never compared as bytes.
#[test]
fn unsupported_collations_are_refused_wherever_strings_are_compared() {
    let s = ft_str(UNSUPPORTED_COLL);
    let base = || scan(TID, cols(UNSUPPORTED_COLL), false);
    // Reading the column and sending it back needs no collation.
    check_dag(&dag(vec![base()], vec![0, 1], true)).unwrap();
    let cases = [
        (
            "comparison",
            // As TiKV, a comparison takes its collation from its own (result) field type.
            selection(vec![func(
                143,
                tipb::FieldType { collate: Some(UNSUPPORTED_COLL), ..ft(mt::LONG_LONG) },
                vec![col(1, s.clone()), string("a", UNSUPPORTED_COLL)],
            )]),
        ),
        ("GROUP BY", aggregation(vec![col(1, s.clone())], vec![])),
        ("MAX", aggregation(vec![], vec![agg(3005, s.clone(), vec![col(1, s.clone())])])),
        ("MIN", aggregation(vec![], vec![agg(3004, s.clone(), vec![col(1, s.clone())])])),
        ("TopN", top_n(vec![(col(1, s.clone()), true)], 3)),
    ];
    for (name, e) in cases {
        let (what, detail) = unsupported(&dag(vec![base(), e], vec![0], true));
        assert_eq!(what, Feature::Collation, "{name}");
        assert!(detail.contains("gb18030_chinese_ci"), "{name}: {detail}");
    }
    // A GROUP BY on an integer next to the string column is fine.
    let d = dag(vec![base(), aggregation(vec![col(0, ft(mt::LONG_LONG))], vec![])], vec![0], true);
    check_dag(&d).unwrap();
}

#[test]
fn malformed_dags_are_not_unsupported() {
    let e = check_dag(&tipb::DagRequest::default()).unwrap_err();
    assert!(matches!(e, Error::InvalidRequest(_)), "{e}");
    let e = check_dag(&dag(vec![scan(TID, cols(63), false)], vec![7], true)).unwrap_err();
    assert!(matches!(e, Error::InvalidRequest(_)), "{e}");
    let e = check_dag(&dag(vec![selection(vec![])], vec![0], true)).unwrap_err();
    assert!(matches!(e, Error::InvalidRequest(_)), "{e}");
}

#[test]
fn listing_reads_the_engine_tables() {
    let c = Capabilities::of_engine();
    for name in ["LTInt", "PlusDecimal", "LikeSig", "CastStringAsTime", "CaseWhenDuration"] {
        assert!(c.scalar_funcs.contains(&name), "{name} missing");
    }
    assert!(c.scalar_funcs.contains(&"RegexpSig"));
    assert!(!c.scalar_funcs.contains(&"AesEncrypt"));
    assert!(c.scalar_funcs.len() > 150, "{}", c.scalar_funcs.len());
    // Every listed signature passes the check inside a selection over its own argument types
    // is shown by the sig table unit test; here: every listed executor, aggregate and type is
    // one the builder accepts.
    assert_eq!(
        c.executors,
        [
            "TypeTableScan",
            "TypeIndexScan",
            "TypeSelection",
            "TypeAggregation",
            "TypeStreamAgg",
            "TypeTopN",
            "TypeLimit",
            "TypeProjection"
        ]
    );
    assert_eq!(
        c.aggregate_functions,
        [
            "Count",
            "Sum",
            "Avg",
            "Min",
            "Max",
            "First",
            "Agg_BitAnd",
            "Agg_BitOr",
            "Agg_BitXor",
            "VarPop",
            "Variance",
            "VarSamp",
            "SumInt"
        ]
    );
    assert_eq!(
        c.aggregate_modes,
        ["CompleteMode", "FinalMode", "Partial1Mode", "Partial2Mode", "DedupMode"]
    );
    assert!(c.field_types.iter().any(|t| t == "NewDecimal (246)"), "{:?}", c.field_types);
    assert!(c.field_types.iter().any(|t| t == "Json (245)"), "{:?}", c.field_types);
    assert!(!c.field_types.iter().any(|t| t.starts_with("Set")));
    assert!(c.collations.iter().any(|t| t == "utf8mb4_bin (-46)"), "{:?}", c.collations);
    for name in
        ["utf8mb4_general_ci (-45)", "utf8mb4_unicode_ci (-224)", "utf8mb4_0900_ai_ci (-255)"]
    {
        assert!(c.collations.iter().any(|t| t == name), "{name}: {:?}", c.collations);
    }
    for name in ["gbk_bin (-87)", "gbk_chinese_ci (-28)", "gb18030_bin (-249)"] {
        assert!(c.collations.iter().any(|t| t == name), "{name}: {:?}", c.collations);
    }
    assert!(
        !c.collations.iter().any(|t| t.starts_with("gb18030_chinese_ci")),
        "{:?}",
        c.collations
    );
    assert_eq!(c.encode_types, ["TypeDefault", "TypeChunk"]);
    for name in &c.aggregate_functions {
        let tp = tipb::ExprType::from_str_name(name).unwrap() as i32;
        // The integer aggregates over the BIGINT column, the others over the decimal one.
        let a = if name.starts_with("Agg_Bit") || *name == "SumInt" {
            agg(tp, ft(mt::LONG_LONG), vec![col(0, ft(mt::LONG_LONG))])
        } else {
            agg(tp, ft_dec(20, 2), vec![col(2, ft_dec(15, 2))])
        };
        let d = dag(vec![scan(TID, cols(63), false), aggregation(vec![], vec![a])], vec![0], true);
        check_dag(&d).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// Every entry of TiKV's lists — executors (`tipb.ExecType`), field types (TiKV's
/// `FieldTypeTp`) and the collations TiKV implements — is either run by the engine (and then
/// exercised by the tests named beside it) or refused by the capability check by name: never
/// a malformed-request error, never a silent fallback.
#[test]
fn every_tikv_executor_type_and_collation_is_run_or_named() {
    // Executors: the ones run, each covered by tests/engine.rs, index_scan.rs, paging.rs,
    // aggregates.rs; every other ExecType is Unsupported{Executor}.
    // TableScan, IndexScan, Selection, Aggregation, TopN, Limit, StreamAgg, Projection.
    let run = [0, 1, 2, 3, 4, 5, 6, 11];
    for tp in 0..=64 {
        let Ok(et) = tipb::ExecType::try_from(tp) else { continue };
        if run.contains(&tp) {
            continue;
        }
        let e = tipb::Executor { tp: Some(tp), ..Default::default() };
        let d = dag(vec![scan(TID, cols(UTF8MB4_BIN), false), e], vec![0], true);
        let (f, detail) = unsupported(&d);
        assert_eq!(f, Feature::Executor, "{et:?}");
        assert!(detail.contains(et.as_str_name()), "{detail}");
    }
    // Field types: exactly TiKV's eval-type mapping (plus NewDate, read as a date), SET
    // refused (TiKV `def/eval_type.rs`: `(Set, None)`); every other code refused by name.
    let typed: &[u8] = &[
        mt::TINY,
        mt::SHORT,
        mt::LONG,
        mt::FLOAT,
        mt::DOUBLE,
        mt::NULL,
        mt::TIMESTAMP,
        mt::LONG_LONG,
        mt::INT24,
        mt::DATE,
        mt::DURATION,
        mt::DATETIME,
        mt::YEAR,
        mt::NEW_DATE,
        mt::VARCHAR,
        mt::BIT,
        mt::JSON,
        mt::NEW_DECIMAL,
        mt::ENUM,
        mt::TINY_BLOB,
        mt::MEDIUM_BLOB,
        mt::LONG_BLOB,
        mt::BLOB,
        mt::VAR_STRING,
        mt::STRING,
        // TiKV ≥ v8.4 (`FieldTypeTp::TiDbVectorFloat32 => EvalType::VectorFloat32`); run by
        // tests/vector_types.rs.
        mt::TIDB_VECTOR_FLOAT32,
    ];
    for tp in 0..=u8::MAX {
        let t = tipb::FieldType { tp: Some(i32::from(tp)), ..ft(tp) };
        let d = dag(vec![scan(TID, vec![column_info(1, &t, false)], false)], vec![0], false);
        match check_dag(&d) {
            Ok(()) => assert!(typed.contains(&tp), "type {tp} runs but is not in TiKV's list"),
            Err(Error::Unsupported { what: Feature::FieldType, .. }) => {
                assert!(!typed.contains(&tp), "type {tp} is refused")
            }
            Err(e) => panic!("type {tp}: {e}"),
        }
    }
    // Collations TiKV implements (tidb_query_datatype's Collation): run, or refused by name.
    let run = [-28, -33, -45, -46, -47, -63, -65, -83, -87, -192, -224, -249, -255, -309];
    let named = [-248]; // gb18030_chinese_ci
    for id in run {
        check_dag(&dag(vec![scan(TID, cols(id), false)], vec![0], true))
            .unwrap_or_else(|e| panic!("collation {id}: {e}"));
    }
    for id in named {
        let t = top_n(vec![(col(1, ft_str(id)), false)], 3);
        let d = dag(vec![scan(TID, cols(id), false), t], vec![0], true);
        let (f, detail) = unsupported(&d);
        assert_eq!(f, Feature::Collation, "{id}");
        assert!(detail.contains(&id.to_string()), "{detail}");
    }
}

/// Constants: every ExprType TiKV's RPN builder accepts (`check_expr_tree_supported`)
/// builds, including TiDBVectorFloat32; MysqlBit, MysqlEnum, MysqlHex and MysqlSet, which that
/// check refuses ("Blacklist expression type"), are refused by name.
#[test]
fn constants_are_run_or_named_as_tikv() {
    let konst = |tp: i32, val: Vec<u8>, f: tipb::FieldType| tipb::Expr {
        tp: Some(tp),
        val: Some(val.into()),
        field_type: Some(f),
        ..Default::default()
    };
    let run = |e: tipb::Expr| {
        check_dag(&dag(vec![scan(TID, cols(63), false), projection(vec![e])], vec![0], true))
    };
    // [1.5] as TiDB serializes it.
    let v = vec![1, 0, 0, 0, 0, 0, 0xC0, 0x3F];
    run(konst(121, v, ft(mt::TIDB_VECTOR_FLOAT32))).unwrap();
    for (tp, name) in [(101, "MysqlBit"), (104, "MysqlEnum"), (105, "MysqlHex"), (106, "MysqlSet")]
    {
        match run(konst(tp, vec![1], ft(mt::LONG_LONG))) {
            Err(Error::Unsupported { what: Feature::ExprType, detail }) => {
                assert!(detail.contains(name), "{detail}")
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}
