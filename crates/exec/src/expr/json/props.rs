//! Property tests of every JSON kernel (the JSON functions, comparisons, casts, control
//! forms, `IN`, `ANY_VALUE`): on arbitrary documents (built, and decoded from mutated binary
//! bytes), paths, strings and numbers with NULLs mixed in, no kernel panics, and a batch
//! evaluates row for row as the same arguments given as constants (errors included: a batch
//! fails exactly when one of its rows does).

use proptest::prelude::*;
use rcop_datum::{Decimal, Duration, Json, JsonRef, Time, TimeType};
use rcop_proto::tipb;

use crate::column::Scalar;
use crate::expr::build::default_ft;
use crate::expr::registry::{Args, registry};
use crate::types::EvalType;

/// The JSON signatures.
fn sigs() -> Vec<i32> {
    let r = registry();
    let casts = [7, 16, 26, 36, 46, 56, 60, 61, 62, 63, 64, 65, 66];
    let control = [3117, 4007, 4113, 4114, 4207, 4214, 4557];
    let cmp = (106..=166).step_by(10);
    casts
        .into_iter()
        .chain(control)
        .chain(cmp)
        .chain(5001..=5029)
        .filter(|s| r.get(*s).is_some())
        .collect()
}

/// Argument lists of `args`: the shortest and some longer ones.
fn arg_lists(args: &Args) -> Vec<Vec<EvalType>> {
    use EvalType::{Bytes, Int, Json as J};
    match *args {
        Args::Variadic(t) => vec![vec![t; 1], vec![t; 2], vec![t; 3]],
        Args::Headed(h, t) => vec![vec![h, t], vec![h, t, t], vec![h, t, t, t, t]],
        Args::Prefix { types, min, len } => {
            (min..=len).map(|n| types.get(..usize::from(n)).unwrap_or(&[]).to_vec()).collect()
        }
        Args::Pairs(Some(h), k, v) => vec![vec![h, k, v], vec![h, k, v, k, v]],
        Args::Pairs(None, k, v) => vec![vec![k, v], vec![k, v, k, v]],
        Args::CaseWhen(t) => vec![vec![Int, t], vec![Int, t, t], vec![Int, t, Int, t, t]],
        Args::Any(n) => vec![vec![Int; usize::from(n)], vec![J; usize::from(n)], vec![Bytes]],
        Args::Fixed { .. } => vec![args.example()],
    }
}

fn tipb_ft(et: EvalType) -> tipb::FieldType {
    let f = default_ft(et);
    let collate = if et == EvalType::Bytes { 46 } else { 63 };
    tipb::FieldType { tp: Some(i32::from(f.tp)), collate: Some(collate), ..Default::default() }
}

/// Small documents of every JSON type.
fn doc() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::null()),
        any::<bool>().prop_map(Json::from_bool),
        prop_oneof![-5i64..5, any::<i64>()].prop_map(Json::from_i64),
        any::<u64>().prop_map(Json::from_u64),
        prop_oneof![-3.0f64..3.0, Just(1e300), Just(-0.0)].prop_map(Json::from_f64),
        "[a-c%_ ]{0,4}".prop_map(|s| Json::from_string(&s)),
        proptest::collection::vec(any::<u8>(), 0..4).prop_map(|b| Json::from_opaque(15, &b)),
        (0u64..3_000_000).prop_map(|n| {
            let t = Time::parse(&format!("2020-01-01 00:00:{:02}", n % 60), TimeType::DateTime, 6);
            t.map_or_else(|_| Json::null(), Json::from_time)
        }),
        (-5_000_000_000i64..5_000_000_000).prop_map(
            |n| Duration::from_nanos(n, 3).map_or_else(|_| Json::null(), Json::from_duration)
        ),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(|v| {
                let refs: Vec<JsonRef<'_>> = v.iter().map(Json::as_ref).collect();
                Json::array(&refs).unwrap_or_else(|_| Json::null())
            }),
            proptest::collection::vec(("[a-c]{0,2}", inner), 0..4).prop_map(|v| {
                let members = v.iter().map(|(k, j)| (k.as_bytes(), j.as_ref())).collect();
                Json::object(members).unwrap_or_else(|_| Json::null())
            }),
        ]
    })
}

/// A document, or whatever a mutation of its binary form decodes to (the decoder refuses
/// what is not well formed, so every value a column holds passed it).
fn json_value() -> impl Strategy<Value = Json> {
    prop_oneof![
        3 => doc(),
        1 => (doc(), proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4))
            .prop_map(|(j, muts)| {
                let mut b = j.into_bytes();
                for (at, v) in muts {
                    let i = at.index(b.len());
                    if let Some(x) = b.get_mut(i) {
                        *x = v;
                    }
                }
                Json::from_binary(b).unwrap_or_else(|_| Json::null())
            }),
        1 => proptest::collection::vec(any::<u8>(), 0..24)
            .prop_map(|b| Json::from_binary(b).unwrap_or_else(|_| Json::from_i64(3))),
    ]
}

/// Strings: paths (good and bad), modes, patterns, JSON text and arbitrary bytes.
fn text() -> impl Strategy<Value = Vec<u8>> {
    let path_parts = prop::sample::select(vec![
        "$",
        ".a",
        ".b",
        "[0]",
        "[1]",
        "[last]",
        "[last-1]",
        "[*]",
        ".*",
        "**",
        "[0 to 1]",
        "[last-2 to last]",
        "[1 to 0]",
        " ",
        ".\"a b\"",
        "[",
    ]);
    prop_oneof![
        proptest::collection::vec(path_parts, 1..5).prop_map(|v| v.concat().into_bytes()),
        prop::sample::select(vec!["one", "all", "ONE", "x", "%", "a%", "_", "", "|", "\\"])
            .prop_map(|s| s.as_bytes().to_vec()),
        doc().prop_map(|j| j.as_ref().to_text().unwrap_or_default().into_bytes()),
        proptest::collection::vec(any::<u8>(), 0..12),
    ]
}

fn scalar(et: EvalType) -> BoxedStrategy<Scalar> {
    let v = match et {
        EvalType::Int => prop_oneof![-3i64..3, any::<i64>()].prop_map(Scalar::Int).boxed(),
        EvalType::Real => prop_oneof![-3.0f64..3.0, Just(1e300)].prop_map(Scalar::Real).boxed(),
        EvalType::Decimal => {
            (-10_000i64..10_000).prop_map(|v| Scalar::Decimal(Decimal::from_i64(v))).boxed()
        }
        EvalType::DateTime => (0u32..86_400)
            .prop_map(|s| {
                let text = format!("2021-03-04 {:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
                Time::parse(&text, TimeType::DateTime, 0).map_or(Scalar::Null, Scalar::DateTime)
            })
            .boxed(),
        EvalType::Duration => (-3_000_000_000_000i64..3_000_000_000_000)
            .prop_map(|n| Duration::from_nanos(n, 0).map_or(Scalar::Null, Scalar::Duration))
            .boxed(),
        EvalType::Json => json_value().prop_map(Scalar::Json).boxed(),
        _ => text().prop_map(Scalar::Bytes).boxed(),
    };
    prop_oneof![1 => Just(Scalar::Null), 4 => v].boxed()
}

fn rows(types: Vec<EvalType>) -> impl Strategy<Value = Vec<Vec<Scalar>>> {
    let row: Vec<_> = types.into_iter().map(scalar).collect();
    proptest::collection::vec(row, 1..8)
}

fn check(sig: i32, types: &[EvalType], rows: &[Vec<Scalar>]) {
    crate::expr::fn_props::check_with(tipb_ft, sig, types, rows);
}

/// A signature, one of its argument lists, and rows of such arguments.
fn case() -> impl Strategy<Value = (i32, Vec<EvalType>, Vec<Vec<Scalar>>)> {
    let all: Vec<(i32, Vec<EvalType>)> = sigs()
        .into_iter()
        .flat_map(|s| {
            let def = registry().get(s).unwrap();
            arg_lists(&def.args)
                .into_iter()
                .filter(move |l| def.args.accepts(l))
                .map(move |l| (s, l))
        })
        .collect();
    prop::sample::select(all).prop_flat_map(|(s, t)| (Just(s), Just(t.clone()), rows(t)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 768, ..ProptestConfig::default() })]

    #[test]
    fn json_kernels_are_total_and_vectorised_equals_constant((sig, types, rs) in case()) {
        check(sig, &types, &rs);
    }

    /// Arbitrary bytes never panic the decoder, and whatever it accepts prints, compares,
    /// measures and re-encodes without a panic.
    #[test]
    fn arbitrary_binary_json_never_panics(b in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(j) = JsonRef::decode(&b) {
            let _ = j.to_text();
            let _ = j.compare(&j);
            let _ = crate::expr::json::query::depth(j);
            let mut s = String::new();
            let _ = crate::expr::json::extra::pretty(j, 0, &mut s);
            let owned = j.to_owned();
            prop_assert_eq!(owned.as_bytes(), &b[..]);
        }
    }
}

/// Every JSON signature with each argument list on a fixed set of edge rows.
#[test]
fn every_json_signature_runs_on_edge_rows() {
    assert!(sigs().len() >= 55, "{} signatures", sigs().len());
    let docs = [r#"{"a":[1,{"b":"x"}],"c":null}"#, "[1,2,3]", r#""a%b""#];
    for s in sigs() {
        let def = registry().get(s).unwrap();
        for types in arg_lists(&def.args).into_iter().filter(|l| def.args.accepts(l)) {
            let pick = |t: EvalType, k: usize| match (t, k) {
                (_, 0) => Scalar::Null,
                (EvalType::Int, _) => Scalar::Int(k as i64 - 2),
                (EvalType::Real, _) => Scalar::Real(0.5 * k as f64),
                (EvalType::Decimal, _) => Scalar::Decimal(Decimal::from_i64(k as i64)),
                (EvalType::DateTime, _) => Scalar::DateTime(
                    Time::parse("2020-02-29 12:34:56", TimeType::DateTime, 0).unwrap(),
                ),
                (EvalType::Duration, _) => {
                    Scalar::Duration(Duration::from_nanos(-3_600_000_000_000, 0).unwrap())
                }
                (EvalType::Json, _) => Scalar::Json(Json::parse(docs[k - 1]).unwrap()),
                (_, 1) => Scalar::Bytes(b"$.a[last]".to_vec()),
                (_, 2) => Scalar::Bytes(b"all".to_vec()),
                (_, _) => Scalar::Bytes(b"$**.b".to_vec()),
            };
            let rows: Vec<Vec<Scalar>> =
                (0..4).map(|k| types.iter().map(|t| pick(*t, k)).collect()).collect();
            check(s, &types, &rows);
        }
    }
}
