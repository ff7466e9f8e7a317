//! Expressions: built once from tipb `Expr` trees, evaluated over whole batches.
//!
//! A scalar function lives in the module of its category — [`compare`] (comparisons, `IN`),
//! [`math`] (arithmetic), [`logic`] (`AND`, `NOT`, `IS NULL`, …), [`control`] (`IF`, `CASE`,
//! `COALESCE`), [`string`] (`LIKE`), [`cast`], [`json`] (JSON comparisons and casts) — and is registered there in the
//! [`registry`], the one table from signature to arguments, result type and kernel that the
//! builder, the evaluator, the capability check and the capability listing all read.

pub mod bit;
pub mod build;
pub mod cast;
pub mod compare;
pub mod control;
pub mod crypto;
pub mod decimal_fast;
pub mod eval;
pub mod json;
pub mod kernel;
pub mod like;
pub mod logic;
pub mod math;
pub mod misc;
pub mod regexp;
pub mod registry;
pub mod sig;
pub mod string;
pub mod time;
pub mod value;

#[cfg(test)]
mod fn_props;

pub use build::{DEFAULT_MAX_DEPTH, Node, build};
pub use eval::eval;
pub use value::Value;
