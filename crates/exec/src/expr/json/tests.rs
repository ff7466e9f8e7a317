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
    for (s, from, to) in [
        (7, EvalType::Int, EvalType::Json),
        (16, EvalType::Real, EvalType::Json),
        (36, EvalType::Bytes, EvalType::Json),
        (62, EvalType::Json, EvalType::Bytes),
        (66, EvalType::Json, EvalType::Json),
        (3117, EvalType::Json, EvalType::Int),
    ] {
        assert_eq!(sig::check(s, &[from]).unwrap().ret, to, "{s}");
    }
    // Not evaluated yet: CastJsonAsInt, InJson.
    for s in [60, 4007] {
        assert!(lookup(s).is_none(), "{s}");
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
    for bad in [&b"a"[..], b"$.", b"$**", b"$[", b"$[x]", b"$.1a", b"$***.a", b"$.\"\xff"] {
        assert!(PathExpr::parse(bad).is_err(), "{bad:?}");
    }
}
