//! `CONCAT`, `CONCAT_WS`, `ELT` and `MAKE_SET`.

use super::{Sig, build_bytes, bytes_args, fits_packet, int_arg};
use crate::column::{Arg, BytesT, IntT, VecCol};
use crate::ctx::EvalContext;
use crate::error::{Error, Result};
use crate::expr::registry::{Args, Call, Registry};
use crate::types::EvalType::{Bytes, Int};

pub(super) fn register(r: &mut Registry) {
    r.add(Sig::Concat as i32, Args::Variadic(Bytes), Bytes, concat);
    r.add(Sig::ConcatWs as i32, Args::Variadic(Bytes), Bytes, concat_ws);
    r.add(Sig::Elt as i32, Args::Headed(Int, Bytes), Bytes, elt);
    r.add(Sig::MakeSet as i32, Args::Headed(Int, Bytes), Bytes, make_set);
}

/// `CONCAT(a, …)`: NULL if any argument is; NULL with a warning past `max_allowed_packet`.
fn concat(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let args = bytes_args(c)?;
    build_bytes(c.n, |i, buf| {
        let mut len = 0u64;
        for a in &args {
            match a.get(i) {
                Some(v) => len += v.len() as u64,
                None => return Ok(false),
            }
        }
        if !fits_packet(ctx, "concat", len) {
            return Ok(false);
        }
        for a in &args {
            buf.extend_from_slice(a.get(i).unwrap_or_default());
        }
        Ok(true)
    })
}

/// `CONCAT_WS(sep, a, …)`: the non-NULL arguments joined by `sep`; NULL when `sep` is.
fn concat_ws(c: &Call<'_, '_>, ctx: &mut EvalContext) -> Result<VecCol> {
    let args = bytes_args(c)?;
    let Some((sep, rest)) = args.split_first() else {
        return Err(Error::invalid("CONCAT_WS without arguments"));
    };
    build_bytes(c.n, |i, buf| {
        let Some(sep) = sep.get(i) else { return Ok(false) };
        let mut len = 0u64;
        let mut k = 0u64;
        for v in rest.iter().filter_map(|a| a.get(i)) {
            len += v.len() as u64;
            k += 1;
        }
        len += k.saturating_sub(1) * sep.len() as u64;
        if !fits_packet(ctx, "concat_ws", len) {
            return Ok(false);
        }
        for (j, v) in rest.iter().filter_map(|a| a.get(i)).enumerate() {
            if j > 0 {
                buf.extend_from_slice(sep);
            }
            buf.extend_from_slice(v);
        }
        Ok(true)
    })
}

/// The integer head and the string tail of a `Headed` call.
fn headed<'c>(c: &Call<'c, '_>) -> Result<(Arg<'c, IntT>, Vec<Arg<'c, BytesT>>)> {
    let head = c.typed::<IntT>(0)?;
    let rest = (1..c.args.len()).map(|i| c.typed::<BytesT>(i)).collect::<Result<_>>()?;
    Ok((head, rest))
}

/// `ELT(n, a, b, …)`: the `n`-th string (1-based); NULL when `n` is out of range.
fn elt(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let (k, rest) = headed(c)?;
    let unsigned = c.arg_ft(0).is_unsigned();
    build_bytes(c.n, |i, buf| {
        let Some(k) = k.get(i) else { return Ok(false) };
        let k = int_arg(k, unsigned);
        let pick = usize::try_from(k).ok().and_then(|k| k.checked_sub(1)).and_then(|k| rest.get(k));
        match pick.and_then(|a| a.get(i)) {
            Some(v) => {
                buf.extend_from_slice(v);
                Ok(true)
            }
            None => Ok(false),
        }
    })
}

/// `MAKE_SET(bits, a, b, …)`: the strings whose bit is set in `bits` (bit 0 for `a`), NULLs
/// skipped, joined by commas.
fn make_set(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    let (bits, rest) = headed(c)?;
    build_bytes(c.n, |i, buf| {
        let Some(bits) = bits.get(i) else { return Ok(false) };
        let mut first = true;
        for (k, a) in rest.iter().enumerate().take(64) {
            if bits as u64 & (1 << k) == 0 {
                continue;
            }
            if let Some(v) = a.get(i) {
                if !first {
                    buf.push(b',');
                }
                buf.extend_from_slice(v);
                first = false;
            }
        }
        Ok(true)
    })
}
