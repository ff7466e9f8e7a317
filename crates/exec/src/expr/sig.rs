//! Scalar function signatures: names, per-type orders, and how calls are checked against
//! the [registry](crate::expr::registry).

use rcop_proto::tipb;

use crate::error::{Error, Feature, Result};
use crate::types::EvalType;

use crate::expr::registry::{self, FnDef};

/// The eval type of index `k` in tipb's per-type signature order
/// (Int, Real, Decimal, String, Time, Duration).
pub fn type_at(k: i32) -> Option<EvalType> {
    Some(match k {
        0 => EvalType::Int,
        1 => EvalType::Real,
        2 => EvalType::Decimal,
        3 => EvalType::Bytes,
        4 => EvalType::DateTime,
        5 => EvalType::Duration,
        _ => return None,
    })
}

/// A readable name of a signature for error messages.
pub fn name(sig: i32) -> String {
    match tipb::ScalarFuncSig::try_from(sig) {
        Ok(s) => format!("{} ({sig})", s.as_str_name()),
        Err(_) => format!("{sig}"),
    }
}

fn unsupported(sig: i32) -> Error {
    Error::unsupported(Feature::ScalarFunc, name(sig))
}

/// Every signature the engine evaluates, in ascending order.
pub fn supported() -> impl Iterator<Item = i32> {
    registry::registry().iter().map(|d| d.sig)
}

/// Checks a call's argument types against the registry and returns the entry.
pub fn check(sig: i32, args: &[EvalType]) -> Result<&'static FnDef> {
    let def = registry::lookup(sig).ok_or_else(|| unsupported(sig))?;
    if !def.args.accepts(args) {
        return Err(Error::invalid(format!(
            "{} expects arguments {:?}, got {args:?}",
            name(sig),
            def.args
        )));
    }
    Ok(def)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::cast::cast_types as cast;
    use crate::expr::compare::{CmpOp, comparison};

    /// Every entry of the signature table has a kernel: a call with NULL arguments of the
    /// listed types builds and evaluates without an "unsupported" error.
    #[test]
    fn every_listed_signature_evaluates() {
        use crate::batch::Batch;
        use crate::column::VecCol;
        use crate::ctx::{EvalConfig, EvalContext};
        use crate::expr::build::default_ft;
        use crate::expr::{build, eval};
        let cfg = EvalConfig::default();
        let batch = Batch::from_cols(vec![VecCol::new(EvalType::Int, 0)]);
        let to_ft = |et: EvalType| {
            let f = default_ft(et);
            tipb::FieldType { tp: Some(i32::from(f.tp)), collate: Some(-63), ..Default::default() }
        };
        let mut n = 0;
        for s in supported() {
            let sg = registry::lookup(s).unwrap();
            let children: Vec<tipb::Expr> = sg
                .args
                .example()
                .into_iter()
                .map(|et| tipb::Expr {
                    tp: Some(0),
                    field_type: Some(to_ft(et)),
                    ..Default::default()
                })
                .collect();
            let e = tipb::Expr {
                tp: Some(10000),
                sig: Some(s),
                children,
                field_type: Some(to_ft(sg.ret)),
                ..Default::default()
            };
            let node = build(&e, &[], &cfg, 10).unwrap_or_else(|e| panic!("{}: {e}", name(s)));
            let mut ctx = EvalContext::new(cfg.clone());
            if let Err(e) = eval(&node, &batch, &mut ctx) {
                assert!(!matches!(e, Error::Unsupported { .. }), "{}: {e}", name(s));
            }
            n += 1;
        }
        assert!(n > 150, "{n} signatures");
    }

    #[test]
    fn tables() {
        assert_eq!(comparison(102), Some((CmpOp::Lt, EvalType::Decimal)));
        assert_eq!(comparison(163), Some((CmpOp::NullEq, EvalType::Bytes)));
        assert_eq!(comparison(106), None);
        assert_eq!(cast(1), Some((EvalType::Int, EvalType::Int)));
        assert_eq!(cast(4), Some((EvalType::Int, EvalType::Decimal)));
        assert_eq!(cast(23), Some((EvalType::Decimal, EvalType::Decimal)));
        assert_eq!(cast(35), Some((EvalType::Bytes, EvalType::Duration)));
        assert_eq!(cast(42), Some((EvalType::DateTime, EvalType::Bytes)));
        let e = check(4502, &[]).unwrap_err().to_string();
        assert!(e.contains("unsupported") && e.contains("AesEncrypt (4502)"), "{e}");
        assert!(check(203, &[EvalType::Int]).is_err());
        assert_eq!(
            check(4210, &[EvalType::Int, EvalType::Decimal, EvalType::Decimal]).unwrap().ret,
            EvalType::Decimal
        );
    }
}
