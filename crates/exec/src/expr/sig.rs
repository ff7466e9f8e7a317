//! Scalar function signatures: which ones are supported and how they are typed.

use std::cmp::Ordering;

use rcop_proto::tipb;

use crate::error::{Error, Feature, Result};
use crate::types::EvalType;

/// `LikeSig`.
pub const LIKE: i32 = 4310;
/// `InString`.
pub const IN_STRING: i32 = 4004;

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

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<=>`
    NullEq,
}

impl CmpOp {
    /// The test of an [`Ordering`] this operator applies to two non-NULL values (`<=>` is
    /// `=` there; its NULL handling is the caller's).
    pub fn ordering_test(self) -> fn(Ordering) -> bool {
        match self {
            CmpOp::Lt => Ordering::is_lt,
            CmpOp::Le => Ordering::is_le,
            CmpOp::Gt => Ordering::is_gt,
            CmpOp::Ge => Ordering::is_ge,
            CmpOp::Eq | CmpOp::NullEq => Ordering::is_eq,
            CmpOp::Ne => Ordering::is_ne,
        }
    }
}

/// The operator and operand type of a comparison signature (100–165).
pub fn comparison(sig: i32) -> Option<(CmpOp, EvalType)> {
    if !(100..=166).contains(&sig) {
        return None;
    }
    let op = match sig / 10 {
        10 => CmpOp::Lt,
        11 => CmpOp::Le,
        12 => CmpOp::Gt,
        13 => CmpOp::Ge,
        14 => CmpOp::Eq,
        15 => CmpOp::Ne,
        16 => CmpOp::NullEq,
        _ => return None,
    };
    Some((op, type_at(sig % 10)?))
}

/// True for the string comparisons (which need a collation).
pub fn is_string_compare(sig: i32) -> bool {
    comparison(sig).is_some_and(|(_, t)| t == EvalType::Bytes)
}

/// The source and target types of a CAST signature (1–55).
pub fn cast(sig: i32) -> Option<(EvalType, EvalType)> {
    if !(1..=56).contains(&sig) {
        return None;
    }
    let (from, to) = if sig < 10 { (0, sig - 1) } else { (sig / 10, sig % 10) };
    // Target order inside a decade: Int, Real, String, Decimal, Time, Duration, Json.
    let to = match to {
        0 => EvalType::Int,
        1 => EvalType::Real,
        2 => EvalType::Bytes,
        3 => EvalType::Decimal,
        4 => EvalType::DateTime,
        5 => EvalType::Duration,
        _ => return None,
    };
    Some((type_at(from)?, to))
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

/// The argument list a signature accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Args {
    /// Exactly these types, in order (at most three).
    Fixed {
        /// The types; only the first `len` count.
        types: [EvalType; 3],
        /// How many arguments.
        len: u8,
    },
    /// One or more arguments, all of this type.
    Variadic(EvalType),
    /// `CASE WHEN`: `[Int condition, value]*` pairs, then an optional else value.
    CaseWhen(EvalType),
}

impl Args {
    fn fixed(types: &[EvalType]) -> Args {
        let mut t = [EvalType::Int; 3];
        for (slot, ty) in t.iter_mut().zip(types) {
            *slot = *ty;
        }
        Args::Fixed { types: t, len: types.len().min(3) as u8 }
    }

    fn same(t: EvalType, n: u8) -> Args {
        Args::Fixed { types: [t; 3], len: n.min(3) }
    }

    /// One argument list this signature accepts (the shortest), to build a test call.
    #[cfg(test)]
    fn example(&self) -> Vec<EvalType> {
        match *self {
            Args::Fixed { types, len } => types.get(..usize::from(len)).unwrap_or(&[]).to_vec(),
            Args::Variadic(t) => vec![t],
            Args::CaseWhen(t) => vec![EvalType::Int, t],
        }
    }

    fn accepts(&self, args: &[EvalType]) -> bool {
        match *self {
            Args::Fixed { types, len } => types.get(..usize::from(len)) == Some(args),
            Args::Variadic(t) => !args.is_empty() && args.iter().all(|a| *a == t),
            Args::CaseWhen(t) => {
                !args.is_empty()
                    && args.iter().enumerate().all(|(i, a)| {
                        let is_cond = i % 2 == 0 && i + 1 < args.len();
                        *a == if is_cond { EvalType::Int } else { t }
                    })
            }
        }
    }
}

/// How a supported signature is typed: what it accepts and what it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    /// The arguments.
    pub args: Args,
    /// The result's eval type.
    pub ret: EvalType,
}

/// The typing of `sig`, or `None` when the engine does not evaluate it. This table is the one
/// the expression builder checks calls against, the capability check reports from and the
/// capability listing prints; the evaluator has a kernel for every entry (a test evaluates
/// each one).
pub fn signature(sig: i32) -> Option<Signature> {
    use EvalType::*;
    let sg = |args: Args, ret: EvalType| Some(Signature { args, ret });
    if let Some((_, t)) = comparison(sig) {
        return sg(Args::same(t, 2), Int);
    }
    if let Some((from, to)) = cast(sig) {
        return sg(Args::same(from, 1), to);
    }
    let typed = |base: i32| type_at(sig - base);
    match sig {
        // Plus, Minus, Multiply, Divide, Mod.
        200 | 204 | 208 | 211 | 215 => sg(Args::same(Real, 2), Real),
        201 | 205 | 209 | 212 | 216 => sg(Args::same(Decimal, 2), Decimal),
        203 | 207 | 210 | 213 | 217..=237 => sg(Args::same(Int, 2), Int),
        214 => sg(Args::same(Decimal, 2), Int),
        // LogicalAnd/Or/Xor.
        3101..=3103 => sg(Args::same(Int, 2), Int),
        // UnaryNot (int, decimal, real), UnaryMinus (int, real, decimal).
        3104 | 3108 => sg(Args::same(Int, 1), Int),
        3105 => sg(Args::same(Decimal, 1), Int),
        3106 => sg(Args::same(Real, 1), Int),
        3109 => sg(Args::same(Real, 1), Real),
        3110 => sg(Args::same(Decimal, 1), Decimal),
        // IsNull.
        3111 => sg(Args::same(Decimal, 1), Int),
        3112 => sg(Args::same(Duration, 1), Int),
        3113 => sg(Args::same(Real, 1), Int),
        3114 => sg(Args::same(Bytes, 1), Int),
        3115 => sg(Args::same(DateTime, 1), Int),
        3116 => sg(Args::same(Int, 1), Int),
        // IsTrue / IsFalse (and WithNull).
        3122 | 3125 | 3142 | 3145 => sg(Args::same(Int, 1), Int),
        3123 | 3126 | 3143 | 3146 => sg(Args::same(Real, 1), Int),
        3124 | 3127 | 3144 | 3147 => sg(Args::same(Decimal, 1), Int),
        // In.
        4001..=4006 => sg(Args::Variadic(typed(4001)?), Int),
        // IfNull.
        4101..=4106 => {
            let t = typed(4101)?;
            sg(Args::same(t, 2), t)
        }
        // If.
        4107..=4112 => {
            let t = typed(4107)?;
            sg(Args::fixed(&[Int, t, t]), t)
        }
        // Coalesce.
        4201..=4206 => {
            let t = typed(4201)?;
            sg(Args::Variadic(t), t)
        }
        // CaseWhen: [cond, value]* [else].
        4208..=4213 => {
            let t = typed(4208)?;
            sg(Args::CaseWhen(t), t)
        }
        LIKE => sg(Args::fixed(&[Bytes, Bytes, Int]), Int),
        _ => None,
    }
}

/// Every signature the engine evaluates, in ascending order, from [`signature`].
pub fn supported() -> impl Iterator<Item = i32> {
    // tipb's signatures are all below 10,000.
    (0..10_000).filter(|s| signature(*s).is_some())
}

/// Checks a call's argument types and returns its result type.
pub fn check(sig: i32, args: &[EvalType]) -> Result<EvalType> {
    let s = signature(sig).ok_or_else(|| unsupported(sig))?;
    if !s.args.accepts(args) {
        return Err(Error::invalid(format!(
            "{} expects arguments {:?}, got {args:?}",
            name(sig),
            s.args
        )));
    }
    Ok(s.ret)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let sg = signature(s).unwrap();
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
        let e = check(4311, &[]).unwrap_err().to_string();
        assert!(e.contains("RegexpSig (4311)"), "{e}");
        assert!(check(203, &[EvalType::Int]).is_err());
        assert_eq!(
            check(4210, &[EvalType::Int, EvalType::Decimal, EvalType::Decimal]).unwrap(),
            EvalType::Decimal
        );
    }
}
