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
    // Not evaluated yet: CastJsonAsInt, JSON_EXTRACT, InJson.
    for s in [60, 5001, 4007] {
        assert!(lookup(s).is_none(), "{s}");
    }
}
