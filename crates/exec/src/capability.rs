//! What the engine can run: the check a storage node makes before offloading a DAG, and the
//! listing of everything the engine supports.
//!
//! Both read the tables the builder itself uses — [`EXECUTORS`], the scalar function registry
//! ([`crate::expr::registry`]), the aggregate table, [`FieldType::eval_type`] and
//! [`Collation::from_id`] — so what is listed, what the check accepts and what the engine
//! runs cannot drift apart.

use rcop_proto::tipb;

use crate::engine::{ENCODE_TYPES, EXECUTORS, Engine};
use crate::error::Result;
use crate::exec::{AGG_MODES, aggregate_functions};
use crate::expr::sig;
use crate::types::{Collation, EvalType, FieldType, collation_name, type_name};

/// Whether the engine, with its default settings, can run `dag`: `Ok`, or the first thing it
/// cannot run ([`Error::Unsupported`](crate::Error::Unsupported) with its
/// [`Feature`](crate::Feature)), or why the DAG is malformed (any other variant).
///
/// Pure and cheap next to running the request: the engine's builder runs over the DAG
/// without data. See [`Engine::check_dag`] for an engine with other settings.
///
/// ```
/// use rcop_exec::{Error, Feature, check_dag};
/// use rcop_proto::tipb;
///
/// let scan = |tp: tipb::ExecType| tipb::Executor {
///     tp: Some(tp as i32),
///     tbl_scan: Some(tipb::TableScan::default()),
///     idx_scan: Some(tipb::IndexScan::default()),
///     ..Default::default()
/// };
/// let dag = |e| tipb::DagRequest { executors: vec![e], ..Default::default() };
/// assert!(check_dag(&dag(scan(tipb::ExecType::TypeTableScan))).is_ok());
/// assert!(check_dag(&dag(scan(tipb::ExecType::TypeIndexScan))).is_ok());
/// match check_dag(&dag(scan(tipb::ExecType::TypeJoin))) {
///     Err(Error::Unsupported { what: Feature::Executor, detail }) => {
///         assert_eq!(detail, "TypeJoin (7)");
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
///
/// # Errors
///
/// As [`Engine::check_dag`].
pub fn check_dag(dag: &tipb::DagRequest) -> Result<()> {
    Engine::default().check_dag(dag)
}

/// The shape of one scalar function signature the engine runs: what a caller needs to
/// build a well-typed call (the DAG fuzzer's function table, generated tests).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FunctionShape {
    /// The `tipb.ScalarFuncSig` value.
    pub sig: i32,
    /// The argument types of the shortest call the signature accepts.
    pub args: Vec<EvalType>,
    /// When the signature takes more arguments: the type of the one after `args` (a
    /// variadic, optional or repeated argument), per position past `args.len()`.
    pub more: Vec<EvalType>,
    /// The result type, or `None` when the call's field type decides it.
    pub ret: Option<EvalType>,
}

/// Every scalar function signature the engine runs, in signature order, with its argument
/// and result types (read from the registry the builder checks calls against).
///
/// ```
/// use rcop_exec::{EvalType, function_shapes};
///
/// // LTInt (100): two integers, an integer result.
/// let lt = function_shapes().into_iter().find(|f| f.sig == 100).unwrap();
/// assert_eq!((lt.args, lt.ret), (vec![EvalType::Int, EvalType::Int], Some(EvalType::Int)));
/// ```
pub fn function_shapes() -> Vec<FunctionShape> {
    sig::supported()
        .filter_map(crate::expr::registry::lookup)
        .map(|def| {
            let args = def.args.example();
            let n = args.len();
            // The types of up to four more arguments, as long as calls of that length are
            // accepted.
            let mut more = Vec::new();
            let mut call = args.clone();
            for i in n..n + 4 {
                let Some(t) = def.args.expected(i, i + 1) else { break };
                call.push(t);
                if !def.args.accepts(&call) {
                    break;
                }
                more.push(t);
            }
            FunctionShape { sig: def.sig, args, more, ret: (!def.ret_by_ft).then_some(def.ret) }
        })
        .collect()
}

/// Everything the engine runs, by name, in a stable order: what
/// `cargo run -p rcop-exec --example capabilities` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Capabilities {
    /// `tipb.ScalarFuncSig` names, in signature order.
    pub scalar_funcs: Vec<&'static str>,
    /// `tipb.ExecType` names.
    pub executors: Vec<&'static str>,
    /// Aggregate functions (`tipb.ExprType` names).
    pub aggregate_functions: Vec<&'static str>,
    /// Aggregate modes (`tipb.AggFunctionMode` names).
    pub aggregate_modes: Vec<&'static str>,
    /// MySQL field types, as `Name (code)`.
    pub field_types: Vec<String>,
    /// Collations of TiDB's new collation framework, as `name (id)`; every non-negative id
    /// (the old framework, where strings compare as bytes) is accepted too.
    pub collations: Vec<String>,
    /// Response encodings (`tipb.EncodeType` names).
    pub encode_types: Vec<&'static str>,
}

impl Capabilities {
    /// Reads the engine's tables.
    pub fn of_engine() -> Capabilities {
        let scalar_funcs = sig::supported()
            .filter_map(|s| tipb::ScalarFuncSig::try_from(s).ok())
            .map(|s| s.as_str_name())
            .collect();
        let field_types = (0..=u8::MAX)
            .filter(|tp| FieldType::new(*tp).eval_type().is_ok())
            .map(type_name)
            .collect();
        // TiDB's new-framework ids are the negated MySQL ids, all within -1024..0.
        let collations = (-1024..0)
            .rev()
            .filter(|id| Collation::from_id(*id).is_ok())
            .map(|id| format!("{} ({id})", collation_name(id)))
            .collect();
        Capabilities {
            scalar_funcs,
            executors: EXECUTORS.iter().map(|e| e.as_str_name()).collect(),
            aggregate_functions: aggregate_functions().map(|f| f.as_str_name()).collect(),
            aggregate_modes: AGG_MODES.iter().map(|m| m.as_str_name()).collect(),
            field_types,
            collations,
            encode_types: ENCODE_TYPES.iter().map(|e| e.as_str_name()).collect(),
        }
    }
}
