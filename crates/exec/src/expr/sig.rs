//! Scalar function signatures: which ones are supported and how they are typed.

use std::cmp::Ordering;

use rcop_proto::tipb;

use crate::error::{Error, Result};
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
    Error::unsupported("ScalarFuncSig", name(sig))
}

fn arity(sig: i32, args: &[EvalType], want: &[EvalType]) -> Result<()> {
    if args != want {
        return Err(Error::invalid(format!(
            "{} expects arguments {want:?}, got {args:?}",
            name(sig)
        )));
    }
    Ok(())
}

/// Checks a call's argument types and returns its result type.
pub fn check(sig: i32, args: &[EvalType]) -> Result<EvalType> {
    use EvalType::*;
    if let Some((_, t)) = comparison(sig) {
        arity(sig, args, &[t, t])?;
        return Ok(Int);
    }
    if let Some((from, to)) = cast(sig) {
        arity(sig, args, &[from])?;
        return match (from, to) {
            (Int | Real | Decimal | Bytes | DateTime | Duration, Int | Real | Decimal | Bytes) => {
                Ok(to)
            }
            (Int | Real | Decimal | Bytes | DateTime | Duration, DateTime | Duration) => Ok(to),
        };
    }
    let same = |t: EvalType, n: usize| -> Result<EvalType> {
        arity(sig, args, &vec![t; n])?;
        Ok(t)
    };
    match sig {
        // Plus, Minus, Multiply, Divide, Mod.
        200 | 204 | 208 | 211 | 215 => same(Real, 2),
        201 | 205 | 209 | 212 | 216 => same(Decimal, 2),
        203 | 207 | 210 | 213 | 217..=237 => same(Int, 2),
        214 => {
            arity(sig, args, &[Decimal, Decimal])?;
            Ok(Int)
        }
        // LogicalAnd/Or/Xor.
        3101..=3103 => same(Int, 2).map(|_| Int),
        3104 | 3108 => same(Int, 1),
        3105 => same(Decimal, 1).map(|_| Int),
        3106 => same(Real, 1).map(|_| Int),
        3109 => same(Real, 1),
        3110 => same(Decimal, 1),
        // IsNull.
        3111 => same(Decimal, 1).map(|_| Int),
        3112 => same(Duration, 1).map(|_| Int),
        3113 => same(Real, 1).map(|_| Int),
        3114 => same(Bytes, 1).map(|_| Int),
        3115 => same(DateTime, 1).map(|_| Int),
        3116 => same(Int, 1),
        // IsTrue / IsFalse (and WithNull).
        3122 | 3125 | 3142 | 3145 => same(Int, 1),
        3123 | 3126 | 3143 | 3146 => same(Real, 1).map(|_| Int),
        3124 | 3127 | 3144 | 3147 => same(Decimal, 1).map(|_| Int),
        // In.
        4001..=4006 => {
            let t = type_at(sig - 4001).ok_or_else(|| unsupported(sig))?;
            if args.is_empty() || args.iter().any(|a| *a != t) {
                return Err(Error::invalid(format!("{} expects {t:?} arguments", name(sig))));
            }
            Ok(Int)
        }
        // IfNull.
        4101..=4106 => same(type_at(sig - 4101).ok_or_else(|| unsupported(sig))?, 2),
        // If.
        4107..=4112 => {
            let t = type_at(sig - 4107).ok_or_else(|| unsupported(sig))?;
            arity(sig, args, &[Int, t, t])?;
            Ok(t)
        }
        // Coalesce.
        4201..=4206 => {
            let t = type_at(sig - 4201).ok_or_else(|| unsupported(sig))?;
            if args.is_empty() || args.iter().any(|a| *a != t) {
                return Err(Error::invalid(format!("{} expects {t:?} arguments", name(sig))));
            }
            Ok(t)
        }
        // CaseWhen: [cond, value]* [else].
        4208..=4213 => {
            let t = type_at(sig - 4208).ok_or_else(|| unsupported(sig))?;
            for (i, a) in args.iter().enumerate() {
                let is_cond = i % 2 == 0 && i + 1 < args.len();
                let want = if is_cond { Int } else { t };
                if *a != want {
                    return Err(Error::invalid(format!("{}: argument {i} is {a:?}", name(sig))));
                }
            }
            Ok(t)
        }
        LIKE => {
            arity(sig, args, &[Bytes, Bytes, Int])?;
            Ok(Int)
        }
        _ => Err(unsupported(sig)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
