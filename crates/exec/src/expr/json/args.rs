//! Per-row access to a JSON function's mixed arguments, with constant paths parsed once.

use std::borrow::Cow;

use rcop_datum::JsonRef;

use crate::column::{Arg, BytesT, JsonT};
use crate::error::Result;
use crate::expr::json::path::PathExpr;
use crate::expr::registry::Call;

/// A path argument: a constant one parsed once per batch, a column parsed per row.
pub(super) struct PathArg<'c> {
    arg: Arg<'c, BytesT>,
    parsed: Option<Result<PathExpr>>,
}

impl<'c> PathArg<'c> {
    /// Argument `k` of `c`.
    pub(super) fn new(c: &Call<'c, '_>, k: usize) -> Result<PathArg<'c>> {
        let arg = c.typed::<BytesT>(k)?;
        let parsed = match &arg {
            Arg::Const(Some(b)) if c.n > 0 => Some(PathExpr::parse(b)),
            _ => None,
        };
        Ok(PathArg { arg, parsed })
    }

    /// The path at row `i`, `None` for NULL.
    pub(super) fn get(&self, i: usize) -> Result<Option<Cow<'_, PathExpr>>> {
        if let Some(p) = &self.parsed {
            return p.as_ref().map(|p| Some(Cow::Borrowed(p))).map_err(Clone::clone);
        }
        match self.arg.get(i) {
            Some(b) => PathExpr::parse(b).map(|p| Some(Cow::Owned(p))),
            None => Ok(None),
        }
    }
}

/// Every path argument from `from` on.
pub(super) fn paths<'c>(c: &Call<'c, '_>, from: usize) -> Result<Vec<PathArg<'c>>> {
    (from..c.args.len()).map(|k| PathArg::new(c, k)).collect()
}

/// The paths of row `i`, or `None` when one is NULL.
pub(super) fn row_paths<'p>(
    ps: &'p [PathArg<'_>],
    i: usize,
) -> Result<Option<Vec<Cow<'p, PathExpr>>>> {
    let mut out = Vec::with_capacity(ps.len());
    for p in ps {
        match p.get(i)? {
            Some(p) => out.push(p),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// A JSON argument.
pub(super) fn json<'c>(c: &Call<'c, '_>, k: usize) -> Result<Arg<'c, JsonT>> {
    c.typed::<JsonT>(k)
}

/// Every JSON argument from `from` on, each `step`-th.
pub(super) fn jsons<'c>(c: &Call<'c, '_>, from: usize, step: usize) -> Result<Vec<Arg<'c, JsonT>>> {
    (from..c.args.len()).step_by(step).map(|k| c.typed::<JsonT>(k)).collect()
}

/// The JSON values of row `i` (NULL as `None`).
pub(super) fn row_jsons<'c>(js: &[Arg<'c, JsonT>], i: usize) -> Vec<Option<JsonRef<'c>>> {
    js.iter().map(|a| a.get(i)).collect()
}
