//! The scalar function registry: one table from a tipb `ScalarFuncSig` to what the engine
//! knows of it — the arguments it accepts, its result type, the kernel that evaluates it and
//! the per-call metadata it needs.
//!
//! The builder checks calls against it and stores the entry in the built node, the evaluator
//! calls the entry's kernel, the capability check and `--example capabilities` list it. Each
//! function category registers its own entries (`compare`, `math`, `logic`, `control`,
//! `string`, `cast`, …), so a function is found by its SQL name in the module of its category.

use std::fmt;
use std::sync::OnceLock;

use crate::column::{Arg, Elem, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::build::{Func, Meta, Node};
use crate::expr::value::Value;
use crate::types::{EvalType, FieldType};

/// tipb's signatures are all below this.
pub const MAX_SIG: i32 = 10_000;

/// One evaluation of a call: the node, its evaluated arguments and the row count.
#[derive(Debug)]
pub struct Call<'c, 'b> {
    /// The call node.
    pub func: &'c Func,
    /// The call's own field type (TiDB's result type).
    pub ft: &'c FieldType,
    /// The call's eval type.
    pub et: EvalType,
    /// The evaluated arguments, in order.
    pub args: &'c [Value<'b>],
    /// The number of logical rows.
    pub n: usize,
}

impl<'c, 'b> Call<'c, 'b> {
    /// Argument `i`.
    pub fn arg(&self, i: usize) -> Result<&'c Value<'b>> {
        self.args.get(i).ok_or_else(|| {
            Error::invalid(format!("{}: missing argument {i}", super::sig::name(self.func.sig)))
        })
    }

    /// Argument `i`, typed.
    pub fn typed<E: Elem>(&self, i: usize) -> Result<Arg<'c, E>> {
        self.arg(i)?.arg()
    }

    /// The field type of argument `i` (a plain BIGINT when absent).
    pub fn arg_ft(&self, i: usize) -> FieldType {
        self.func.children.get(i).map(|c| c.ft).unwrap_or(FieldType::long_long())
    }

    /// The call's metadata.
    pub fn meta(&self) -> &'c Meta {
        &self.func.meta
    }
}

/// A kernel: evaluates a call over `call.n` rows.
pub type Kernel = fn(&Call<'_, '_>, &mut EvalContext) -> Result<VecCol>;

/// Builds a call's metadata from its field type and built children.
pub type MetaBuilder = fn(&FieldType, &[Node]) -> Result<Meta>;

/// The argument list a signature accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Args {
    /// Exactly these types, in order (at most four).
    Fixed {
        /// The types; only the first `len` count.
        types: [EvalType; 4],
        /// How many arguments.
        len: u8,
    },
    /// One or more arguments, all of this type.
    Variadic(EvalType),
    /// `CASE WHEN`: `[Int condition, value]*` pairs, then an optional else value.
    CaseWhen(EvalType),
    /// The first `min` to `len` of these types, in order (the rest are optional).
    Prefix {
        /// The types; only the first `len` count.
        types: [EvalType; 6],
        /// The fewest arguments.
        min: u8,
        /// The most arguments.
        len: u8,
    },
    /// One argument of the first type, then one or more of the second (`ELT`, `MAKE_SET`).
    Headed(EvalType, EvalType),
    /// An optional head argument, then `(key, value)` pairs: at least one after a head, any
    /// number without (`JSON_SET(doc, path, value, …)`, `JSON_OBJECT(key, value, …)`).
    Pairs(Option<EvalType>, EvalType, EvalType),
    /// This many arguments of any types (`JSON_VALID` of a number or time).
    Any(u8),
}

impl Args {
    /// Exactly `types`, in order.
    pub fn fixed(types: &[EvalType]) -> Args {
        let mut t = [EvalType::Int; 4];
        for (slot, ty) in t.iter_mut().zip(types) {
            *slot = *ty;
        }
        Args::Fixed { types: t, len: types.len().min(4) as u8 }
    }

    /// `n` arguments of type `t`.
    pub fn same(t: EvalType, n: u8) -> Args {
        Args::Fixed { types: [t; 4], len: n.min(4) }
    }

    /// At least `min` and at most all of `types`, in order.
    pub fn prefix(types: &[EvalType], min: u8) -> Args {
        let mut t = [EvalType::Int; 6];
        for (slot, ty) in t.iter_mut().zip(types) {
            *slot = *ty;
        }
        let len = types.len().min(6) as u8;
        Args::Prefix { types: t, min: min.min(len), len }
    }

    /// One argument list this signature accepts (the shortest), to build a test call.
    pub fn example(&self) -> Vec<EvalType> {
        match *self {
            Args::Fixed { types, len } => types.get(..usize::from(len)).unwrap_or(&[]).to_vec(),
            Args::Variadic(t) => vec![t],
            Args::CaseWhen(t) => vec![EvalType::Int, t],
            Args::Prefix { types, min, .. } => {
                types.get(..usize::from(min)).unwrap_or(&[]).to_vec()
            }
            Args::Headed(h, t) => vec![h, t],
            Args::Pairs(h, k, v) => h.into_iter().chain([k, v]).collect(),
            Args::Any(n) => vec![EvalType::Int; usize::from(n)],
        }
    }

    /// The type argument `i` of a call with `n` arguments must have, if the list fixes one.
    pub fn expected(&self, i: usize, n: usize) -> Option<EvalType> {
        match *self {
            Args::Fixed { types, .. } => types.get(i).copied(),
            Args::Prefix { types, .. } => types.get(i).copied(),
            Args::Variadic(t) => Some(t),
            Args::CaseWhen(t) => {
                Some(if i.is_multiple_of(2) && i + 1 < n { EvalType::Int } else { t })
            }
            Args::Headed(h, t) => Some(if i == 0 { h } else { t }),
            Args::Pairs(Some(h), _, _) if i == 0 => Some(h),
            Args::Pairs(h, k, v) => {
                let j = if h.is_some() { i.checked_sub(1)? } else { i };
                Some(if j.is_multiple_of(2) { k } else { v })
            }
            Args::Any(_) => None,
        }
    }

    /// True when a call with arguments of `args` types matches.
    pub fn accepts(&self, args: &[EvalType]) -> bool {
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
            Args::Prefix { types, min, len } => {
                (usize::from(min)..=usize::from(len)).contains(&args.len())
                    && types.get(..args.len()) == Some(args)
            }
            Args::Headed(h, t) => match args.split_first() {
                Some((first, rest)) => {
                    *first == h && !rest.is_empty() && rest.iter().all(|a| *a == t)
                }
                None => false,
            },
            Args::Pairs(h, k, v) => {
                let rest = match (h, args.split_first()) {
                    (None, _) => args,
                    (Some(h), Some((first, rest))) if *first == h && !rest.is_empty() => rest,
                    _ => return false,
                };
                rest.len().is_multiple_of(2)
                    && rest.chunks(2).all(|p| p.first() == Some(&k) && p.get(1) == Some(&v))
            }
            Args::Any(n) => args.len() == usize::from(n),
        }
    }
}

/// Everything the engine knows of one signature.
#[derive(Clone, Copy)]
pub struct FnDef {
    /// The tipb `ScalarFuncSig` value.
    pub sig: i32,
    /// The arguments it accepts.
    pub args: Args,
    /// The result's eval type.
    pub ret: EvalType,
    /// Evaluates it.
    pub kernel: Kernel,
    /// Builds its per-call metadata, if it has any.
    pub meta: Option<MetaBuilder>,
    /// The kernel takes fixed-point decimal columns as they are (it has an exact fast path);
    /// other kernels see them turned into [`rcop_datum::Decimal`] columns first.
    pub takes_fixed: bool,
    /// The result's eval type is the call's field type's, not `ret` (TiKV picks the function
    /// by the result type, as for `DATE_ADD` of a `TIME`).
    pub ret_by_ft: bool,
}

impl fmt::Debug for FnDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnDef")
            .field("sig", &super::sig::name(self.sig))
            .field("args", &self.args)
            .field("ret", &self.ret)
            .field("meta", &self.meta.is_some())
            .field("takes_fixed", &self.takes_fixed)
            .finish()
    }
}

impl FnDef {
    /// Sets the metadata builder.
    pub fn with_meta(&mut self, m: MetaBuilder) -> &mut FnDef {
        self.meta = Some(m);
        self
    }

    /// Takes the result's eval type from the call's field type.
    pub fn ret_by_field_type(&mut self) -> &mut FnDef {
        self.ret_by_ft = true;
        self
    }

    /// Marks the kernel as taking fixed-point decimal columns.
    pub fn taking_fixed(&mut self) -> &mut FnDef {
        self.takes_fixed = true;
        self
    }
}

/// The table, indexed by signature.
pub struct Registry {
    defs: Vec<Option<FnDef>>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry").field("functions", &self.iter().count()).finish()
    }
}

impl Registry {
    fn new() -> Registry {
        // One slot past the last signature takes out-of-range registrations (a programming
        // error, caught by the registry's test); `get` and `iter` never see it.
        Registry { defs: vec![None; MAX_SIG as usize + 1] }
    }

    /// Registers `sig`. Registering a signature twice or out of range is a programming
    /// error, caught by the registry's unit test.
    pub fn add(&mut self, sig: i32, args: Args, ret: EvalType, kernel: Kernel) -> &mut FnDef {
        let def =
            FnDef { sig, args, ret, kernel, meta: None, takes_fixed: false, ret_by_ft: false };
        let i = usize::try_from(sig).ok().filter(|i| *i < MAX_SIG as usize);
        debug_assert!(i.is_some(), "signature {sig} out of range");
        let i = i.unwrap_or(MAX_SIG as usize);
        // In bounds: `defs` has MAX_SIG + 1 slots.
        let slot = &mut self.defs[i];
        debug_assert!(slot.is_none(), "signature {sig} registered twice");
        slot.insert(def)
    }

    /// The entry of `sig`.
    pub fn get(&self, sig: i32) -> Option<&FnDef> {
        let i = usize::try_from(sig).ok().filter(|i| *i < MAX_SIG as usize)?;
        self.defs.get(i)?.as_ref()
    }

    /// Every entry, in ascending signature order.
    pub fn iter(&self) -> impl Iterator<Item = &FnDef> {
        self.defs.iter().take(MAX_SIG as usize).flatten()
    }
}

/// The registry, built on first use from every category's `register`.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut r = Registry::new();
        super::compare::register(&mut r);
        super::math::register(&mut r);
        super::logic::register(&mut r);
        super::control::register(&mut r);
        super::string::register(&mut r);
        super::cast::register(&mut r);
        super::json::register(&mut r);
        super::time::register(&mut r);
        super::bit::register(&mut r);
        super::regexp::register(&mut r);
        super::crypto::register(&mut r);
        super::misc::register(&mut r);
        r
    })
}

/// The entry of `sig`, or `None` when the engine does not evaluate it.
pub fn lookup(sig: i32) -> Option<&'static FnDef> {
    registry().get(sig)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every category registered inside the signature range, each signature once (a second
    /// registration trips the `debug_assert` while the table is built), and each entry sits
    /// in its own slot.
    #[test]
    fn the_table_is_well_formed() {
        let r = registry();
        assert!(r.defs.get(MAX_SIG as usize).is_some_and(Option::is_none), "out-of-range entry");
        let mut n = 0;
        for (i, d) in r.defs.iter().enumerate().take(MAX_SIG as usize) {
            if let Some(d) = d {
                assert_eq!(usize::try_from(d.sig).ok(), Some(i));
                n += 1;
            }
        }
        assert_eq!(r.iter().count(), n);
        assert!(lookup(-1).is_none() && lookup(MAX_SIG).is_none() && lookup(i32::MAX).is_none());
    }
}

#[cfg(test)]
mod null_tests {
    use rcop_proto::tipb;

    use crate::ctx::EvalConfig;
    use crate::expr::build::{NodeKind, build};
    use crate::types::{EvalType, FieldType};

    /// TiKV evaluates the Null field type as a string; a bare NULL in a call takes the type
    /// its position expects instead of failing the call.
    #[test]
    fn bare_null_takes_the_expected_type() {
        assert_eq!(FieldType::new(6).eval_type().unwrap(), EvalType::Bytes);
        let null = tipb::Expr {
            tp: Some(0),
            field_type: Some(tipb::FieldType { tp: Some(6), ..Default::default() }),
            ..Default::default()
        };
        let mut one = Vec::new();
        rcop_datum::codec::encode_i64(&mut one, 1);
        let one = tipb::Expr { tp: Some(1), val: Some(one.into()), ..Default::default() };
        let plus = tipb::Expr {
            tp: Some(10000),
            sig: Some(203), // PlusInt
            children: vec![null, one],
            field_type: Some(tipb::FieldType { tp: Some(8), ..Default::default() }),
            ..Default::default()
        };
        let node = build(&plus, &[], &EvalConfig::default(), 10).unwrap();
        let NodeKind::Func(f) = node.kind else { panic!("{node:?}") };
        assert_eq!(f.children.first().map(|c| c.et), Some(EvalType::Int));
    }
}
