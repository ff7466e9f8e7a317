//! Expressions: built once from tipb `Expr` trees, evaluated over whole batches.

pub mod build;
pub mod cast;
pub mod eval;
pub mod like;
pub mod sig;

pub use build::{DEFAULT_MAX_DEPTH, Node, build};
pub use eval::{Value, eval};
