//! Building expression trees from tipb `Expr`s: constants decoded, signatures checked,
//! children typed, depth bounded.

use rcop_datum::codec::{self, Reader};
use rcop_datum::{Decimal, Duration, Json, Time, TimeType, VectorRef};
use rcop_proto::tipb;

use crate::column::Scalar;
use crate::ctx::EvalConfig;
use crate::error::{Error, Feature, Result};
use crate::expr::like::LikePattern;
use crate::expr::registry::{self, FnDef};
use crate::expr::sig;
use crate::types::{Collation, EvalType, FieldType};

/// MySQL's type code of a bare NULL.
const NULL_TYPE: u8 = rcop_datum::chunk::mysql_type::NULL;

/// The default bound on expression nesting (TiKV's stack-guard test nests 101 levels).
pub const DEFAULT_MAX_DEPTH: usize = 100;

/// A built expression.
#[derive(Debug, Clone)]
pub struct Node {
    /// What the node is.
    pub kind: NodeKind,
    /// The node's field type as TiDB sent it (or the column's, for a column reference).
    pub ft: FieldType,
    /// The eval type of the node's value.
    pub et: EvalType,
}

/// The three kinds of nodes.
#[derive(Debug, Clone)]
pub enum NodeKind {
    /// A column of the child executor's output, by offset.
    Column(usize),
    /// A constant.
    Const(Scalar),
    /// A scalar function call.
    Func(Box<Func>),
}

/// A scalar function call.
#[derive(Debug, Clone)]
pub struct Func {
    /// The tipb `ScalarFuncSig` value.
    pub sig: i32,
    /// The signature's registry entry (its kernel among it).
    pub def: &'static FnDef,
    /// The arguments.
    pub children: Vec<Node>,
    /// Per-call metadata built once.
    pub meta: Meta,
}

/// Per-call metadata.
#[derive(Debug, Clone)]
pub enum Meta {
    /// Nothing.
    None,
    /// The collation string comparisons use.
    Collation(Collation),
    /// A LIKE whose pattern and escape are constants, compiled once.
    Like(Box<LikePattern>),
    /// A LIKE with a non-constant pattern: the collation only.
    LikeDynamic(Collation, i32),
    /// A regular expression function: its flags, and its pattern when constant.
    Regexp(Box<crate::expr::regexp::RegexpMeta>),
    /// An `IN` whose list is all constants: the list hashed once (see
    /// [`InSet`](crate::expr::compare::InSet)).
    InSet(Box<crate::expr::compare::InSet>),
    /// A cast TiDB marked `in_union` (`InUnionMetadata` in `Expr.val`): the implicit cast of
    /// a UNION branch, where a negative value cast to an unsigned type becomes 0.
    InUnion,
}

/// The schema a node is built against: the child executor's output types.
pub type Schema = [FieldType];

/// Builds a node from a tipb expression.
pub fn build(e: &tipb::Expr, schema: &Schema, cfg: &EvalConfig, max_depth: usize) -> Result<Node> {
    build_at(e, schema, cfg, max_depth, 1)
}

fn build_at(
    e: &tipb::Expr,
    schema: &Schema,
    cfg: &EvalConfig,
    max_depth: usize,
    depth: usize,
) -> Result<Node> {
    if depth > max_depth {
        return Err(Error::TooDeep { limit: max_depth });
    }
    let ft = FieldType::from_proto(e.field_type.as_ref());
    let tp = e.tp.unwrap_or(0);
    let val = e.val.as_deref().unwrap_or(&[]);
    let constant = |s: Scalar, et: EvalType| Ok(Node { kind: NodeKind::Const(s), ft, et });
    match tp {
        0 => {
            let et = ft.eval_type().unwrap_or(EvalType::Int);
            constant(Scalar::Null, et)
        }
        1 => constant(Scalar::Int(codec::decode_i64(&mut exact(val, 8)?)?), EvalType::Int),
        2 => constant(Scalar::Int(codec::decode_u64(&mut exact(val, 8)?)? as i64), EvalType::Int),
        3 | 4 => constant(Scalar::Real(codec::decode_f64(&mut exact(val, 8)?)?), EvalType::Real),
        5 | 6 => constant(Scalar::Bytes(val.to_vec()), EvalType::Bytes),
        102 => {
            let mut r = Reader::new(val);
            let (d, _, _) = Decimal::decode_bin(&mut r)?;
            constant(Scalar::Decimal(d), EvalType::Decimal)
        }
        103 => {
            let nanos = codec::decode_i64(&mut exact(val, 8)?)?;
            constant(Scalar::Duration(Duration::from_nanos(nanos, ft.fsp())?), EvalType::Duration)
        }
        107 => {
            let packed = codec::decode_u64(&mut exact(val, 8)?)?;
            let tt = if ft.eval_type().ok() == Some(EvalType::DateTime) {
                ft.time_type()
            } else {
                TimeType::DateTime
            };
            let mut t = Time::from_packed_u64(packed, tt, ft.fsp())?;
            if tt == TimeType::Timestamp {
                t = t.from_utc(&cfg.tz)?;
            }
            constant(Scalar::DateTime(t), EvalType::DateTime)
        }
        // MysqlJson: the binary form (type byte and body), validated.
        108 => constant(Scalar::Json(Json::from_binary(val.to_vec())?), EvalType::Json),
        // TiDBVectorFloat32: the binary form (TiKV `extract_scalar_value_vector_float32`).
        121 => {
            let v = VectorRef::decode(val)?;
            constant(Scalar::Vector(v.as_bytes().to_vec()), EvalType::VectorFloat32)
        }
        // MysqlBit, MysqlEnum, MysqlHex, MysqlSet: TiKV refuses them before building
        // (`check_expr_tree_supported` in tidb_query_expr `types/expr_builder.rs` lists every
        // accepted ExprType; these four fall to "Blacklist expression type"), and so does
        // the engine, by name, below.
        201 => {
            let off = codec::decode_i64(&mut exact(val, 8)?)?;
            let col = usize::try_from(off)
                .ok()
                .and_then(|o| schema.get(o).map(|c| (o, *c)))
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "column offset {off} out of range (child has {} columns)",
                        schema.len()
                    ))
                })?;
            let et = col.1.eval_type()?;
            // The reference's own type carries TiDB's view; the child's type is authoritative
            // for the storage representation.
            let ft =
                if e.field_type.is_some() && ft.eval_type().ok() == Some(et) { ft } else { col.1 };
            Ok(Node { kind: NodeKind::Column(col.0), ft, et })
        }
        10000 => {
            let s = e.sig.unwrap_or(-1);
            let mut children = Vec::with_capacity(e.children.len());
            for c in &e.children {
                children.push(build_at(c, schema, cfg, max_depth, depth + 1)?);
            }
            // A bare NULL (field type Null, a string to TiKV) takes the type its position
            // expects: TiKV refuses such calls, but the answer is NULL whatever the type.
            if let Some(def) = registry::lookup(s) {
                let n = children.len();
                for (i, c) in children.iter_mut().enumerate() {
                    if c.ft.tp == NULL_TYPE
                        && matches!(c.kind, NodeKind::Const(Scalar::Null))
                        && let Some(t) = def.args.expected(i, n)
                    {
                        c.et = t;
                    }
                }
            }
            let ets: Vec<EvalType> = children.iter().map(|c| c.et).collect();
            let def = sig::check(s, &ets)?;
            let meta = match def.meta {
                Some(m) => m(&ft, &children)?,
                None => crate::expr::cast::union_meta(s, val)?,
            };
            let func = Func { sig: s, def, children, meta };
            let et = if def.ret_by_ft { ft.eval_type()? } else { def.ret };
            Ok(Node { kind: NodeKind::Func(Box::new(func)), ft, et })
        }
        _ => Err(Error::unsupported(Feature::ExprType, expr_type_name(tp))),
    }
}

fn exact<'a>(val: &'a [u8], n: usize) -> Result<Reader<'a>> {
    if val.len() != n {
        return Err(Error::invalid(format!("constant of {} bytes, expected {n}", val.len())));
    }
    Ok(Reader::new(val))
}

/// A readable name of an `ExprType` value.
pub fn expr_type_name(tp: i32) -> String {
    match tipb::ExprType::try_from(tp) {
        Ok(t) => format!("{} ({tp})", t.as_str_name()),
        Err(_) => format!("{tp}"),
    }
}

impl Node {
    /// The column offsets this node reads, appended to `out`.
    pub fn column_refs(&self, out: &mut Vec<usize>) {
        match &self.kind {
            NodeKind::Column(o) => out.push(*o),
            NodeKind::Const(_) => {}
            NodeKind::Func(f) => f.children.iter().for_each(|c| c.column_refs(out)),
        }
    }

    /// A column reference node (used by executors that re-read their own output).
    pub fn column(offset: usize, ft: FieldType) -> Result<Node> {
        Ok(Node { kind: NodeKind::Column(offset), ft, et: ft.eval_type()? })
    }
}

/// A plain field type for values of `et` (used when TiDB's own type does not match).
pub fn default_ft(et: EvalType) -> FieldType {
    use rcop_datum::chunk::mysql_type as mt;
    let tp = match et {
        EvalType::Int => mt::LONG_LONG,
        EvalType::Real => mt::DOUBLE,
        EvalType::Decimal => mt::NEW_DECIMAL,
        EvalType::Bytes => mt::VAR_STRING,
        EvalType::DateTime => mt::DATETIME,
        EvalType::Duration => mt::DURATION,
        EvalType::Json => mt::JSON,
        EvalType::Enum => mt::ENUM,
        EvalType::VectorFloat32 => mt::TIDB_VECTOR_FLOAT32,
    };
    FieldType::new(tp)
}

impl Node {
    /// The field type describing this node's values in an output schema.
    pub fn ft_for_output(&self) -> FieldType {
        if self.ft.eval_type().ok() == Some(self.et) { self.ft } else { default_ft(self.et) }
    }
}
