use crate::expr::registry::lookup;
use crate::expr::sig;
use crate::types::EvalType;

#[test]
fn registered_signatures() {
    for s in (106..=166).step_by(10) {
        let d = sig::check(s, &[EvalType::Json, EvalType::Json]).unwrap();
        assert_eq!(d.ret, EvalType::Int);
        assert!(sig::check(s, &[EvalType::Json, EvalType::Int]).is_err());
    }
    use EvalType::{Bytes, DateTime, Decimal, Duration, Int, Json, Real};
    for (s, from, to) in [
        (7, Int, Json),
        (16, Real, Json),
        (26, Decimal, Json),
        (36, Bytes, Json),
        (46, DateTime, Json),
        (56, Duration, Json),
        (60, Json, Int),
        (61, Json, Real),
        (62, Json, Bytes),
        (63, Json, Decimal),
        (64, Json, DateTime),
        (65, Json, Duration),
        (66, Json, Json),
        (3117, Json, Int),
        (4557, Json, Json),
        (5018, Json, Bytes),
        (5021, Json, Int),
        (5028, Json, Int),
        (5027, Int, Int),
        (5027, Duration, Int),
    ] {
        assert_eq!(sig::check(s, &[from]).unwrap().ret, to, "{s}");
    }
    assert_eq!(sig::check(4007, &[Json, Json, Json]).unwrap().ret, Int);
    assert_eq!(sig::check(4114, &[Int, Json, Json]).unwrap().ret, Json);
    assert_eq!(sig::check(4113, &[Json, Json]).unwrap().ret, Json);
    assert_eq!(sig::check(4207, &[Json, Json, Json]).unwrap().ret, Json);
    assert_eq!(sig::check(4214, &[Int, Json, Json]).unwrap().ret, Json);
    assert_eq!(sig::check(5020, &[Json, Bytes, Bytes]).unwrap().ret, Json);
    // Every JSON signature tipb has is evaluated.
    for s in 5001..=5029 {
        assert!(lookup(s).is_some(), "{s}");
    }
}

#[test]
fn paths_parse_as_mysql_spells_them() {
    use crate::expr::json::path::{Index, Leg, PathExpr};
    let p = PathExpr::parse(br#"$.a[2]."b c"[last-1].*[*]**.d"#).unwrap();
    assert_eq!(
        p.legs,
        vec![
            Leg::Key(b"a".to_vec()),
            Leg::At(Index::Start(2)),
            Leg::Key(b"b c".to_vec()),
            Leg::At(Index::Last(1)),
            Leg::AnyKey,
            Leg::AnyIndex,
            Leg::AnyDepth,
            Leg::Key(b"d".to_vec()),
        ]
    );
    let r = PathExpr::parse(b"$[ 1 to last-2 ][last - 3 to 4]").unwrap();
    assert_eq!(
        r.legs,
        vec![
            Leg::Range(Index::Start(1), Index::Last(2)),
            Leg::Range(Index::Last(3), Index::Start(4)),
        ]
    );
    assert!(r.has_wildcard());
    for bad in [
        &b"a"[..],
        b"$.",
        b"$**",
        b"$[",
        b"$[x]",
        b"$.1a",
        b"$***.a",
        b"$.\"\xff",
        b"$[2 to 1]",
        b"$[1to2]",
        b"$[1 to]",
        b"$[1 to 2",
    ] {
        assert!(PathExpr::parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn ranges_resolve_as_mysql() {
    use crate::expr::json::path::{Index, range_of};
    assert_eq!(range_of(Index::Start(1), Index::Start(2), 4), 1..3);
    assert_eq!(range_of(Index::Start(0), Index::Start(9), 4), 0..4);
    assert_eq!(range_of(Index::Start(5), Index::Start(7), 4), 4..4);
    assert_eq!(range_of(Index::Last(9), Index::Last(0), 3), 0..3);
    assert_eq!(range_of(Index::Last(1), Index::Last(5), 3), 1..1);
    assert_eq!(range_of(Index::Start(0), Index::Last(0), 0), 0..0);
}

#[test]
fn results_past_max_allowed_packet_are_null_with_1301() {
    use crate::ctx::{EvalConfig, EvalContext};
    let cfg = EvalConfig { max_allowed_packet: 24, ..Default::default() };
    let mut ctx = EvalContext::new(cfg);
    let small = rcop_datum::Json::parse("[1]").unwrap();
    assert!(crate::expr::json::bounded(&mut ctx, "json_array", small).is_some());
    let big = rcop_datum::Json::parse("[1, 2, 3]").unwrap();
    assert!(crate::expr::json::bounded(&mut ctx, "json_array", big).is_none());
    let text = crate::expr::json::bounded_bytes(&mut ctx, "json_pretty", vec![b' '; 25]);
    assert!(text.is_none());
    let (warnings, count) = ctx.take_warnings();
    assert_eq!(count, 2);
    assert!(warnings.iter().all(|w| w.code == Some(1301)), "{warnings:?}");
}

#[test]
fn pretty_and_search_paths() {
    use crate::expr::json::extra::pretty;
    let j = rcop_datum::Json::parse(r#"{"b":[1,{}],"a":"x"}"#).unwrap();
    let mut s = String::new();
    pretty(j.as_ref(), 0, &mut s).unwrap();
    assert_eq!(s, "{\n  \"a\": \"x\",\n  \"b\": [\n    1,\n    {}\n  ]\n}");
}
