//! The value an expression evaluates to: a constant, a fresh column or a borrowed one.

use crate::column::{Arg, ColData, Elem, Scalar, VecCol};
use crate::error::{Error, Result};
use crate::types::EvalType;

/// The result of evaluating a node: a constant, a fresh column over the logical rows, or a
/// borrowed column of the batch (when its logical rows are its physical rows).
#[derive(Debug)]
pub enum Value<'b> {
    /// The same value for every row.
    Scalar(Scalar),
    /// A column over the logical rows.
    Owned(VecCol),
    /// A batch column read in place.
    Ref(&'b VecCol),
}

impl Value<'_> {
    /// Typed access; a type mismatch is an invalid request.
    pub fn arg<E: Elem>(&self) -> Result<Arg<'_, E>> {
        let col = match self {
            Value::Scalar(s) => {
                if s.is_null() {
                    return Ok(Arg::Const(None));
                }
                return E::scalar(s).map(|v| Arg::Const(Some(v))).ok_or_else(|| mismatch(E::ET, s));
            }
            Value::Owned(c) => c,
            Value::Ref(c) => *c,
        };
        match E::slice(&col.data) {
            Some(s) => Ok(Arg::Col { s, valid: &col.valid }),
            None => Err(Error::invalid(format!(
                "expected a {:?} value, got a {:?} column",
                E::ET,
                col.eval_type()
            ))),
        }
    }

    /// The value as a column of `n` rows.
    pub fn into_col(self, et: EvalType, n: usize) -> VecCol {
        match self {
            Value::Scalar(s) => VecCol::broadcast(et, &s, n),
            Value::Owned(c) => c,
            Value::Ref(c) => c.clone(),
        }
    }

    /// True when the value is a fixed-point decimal column.
    pub fn is_fixed(&self) -> bool {
        matches!(self.col().map(|c| &c.data), Some(ColData::Fixed(_)))
    }

    /// The value with fixed-point decimal columns turned into [`rcop_datum::Decimal`] columns (other
    /// values are borrowed).
    pub fn materialize(&self) -> Value<'_> {
        match (self, self.col()) {
            (_, Some(c)) if matches!(c.data, ColData::Fixed(_)) => Value::Owned(c.to_decimal()),
            (Value::Scalar(s), _) => Value::Scalar(s.clone()),
            (Value::Owned(c), _) => Value::Ref(c),
            (Value::Ref(c), _) => Value::Ref(c),
        }
    }

    /// The column, unless the value is a constant.
    pub fn col(&self) -> Option<&VecCol> {
        match self {
            Value::Scalar(_) => None,
            Value::Owned(c) => Some(c),
            Value::Ref(c) => Some(c),
        }
    }

    /// The value at row `i` as a scalar.
    pub fn scalar_at(&self, i: usize) -> Scalar {
        match self {
            Value::Scalar(s) => s.clone(),
            Value::Owned(c) => c.scalar_at(i),
            Value::Ref(c) => c.scalar_at(i),
        }
    }
}

fn mismatch(et: EvalType, s: &Scalar) -> Error {
    Error::invalid(format!("expected a {et:?} value, got constant {s:?}"))
}
