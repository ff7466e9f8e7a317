//! Bit functions: `&`, `|`, `^`, `~`, `<<`, `>>`, `BIT_COUNT`. All work on the 64-bit
//! pattern (MySQL's unsigned arithmetic): a shift by 64 or more — or by a negative amount,
//! read as unsigned — is 0.

use crate::column::{Arg, ColData, IntT, VecCol};
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::expr::kernel::{map1_infallible, valid2, zip_all};
use crate::expr::registry::{Args, Call, Kernel, Registry};
use crate::types::EvalType;

pub(super) fn register(r: &mut Registry) {
    use EvalType::Int as I;
    let two: [(i32, Kernel); 5] =
        [(3118, bit_and), (3119, bit_or), (3120, bit_xor), (3129, left_shift), (3130, right_shift)];
    for (s, k) in two {
        r.add(s, Args::same(I, 2), I, k);
    }
    r.add(3121, Args::same(I, 1), I, bit_neg);
    r.add(3128, Args::same(I, 1), I, bit_count);
}

/// A null-propagating binary int kernel over whole slots (tight loops, no branches on NULL).
fn int2(c: &Call<'_, '_>, f: impl Fn(i64, i64) -> i64) -> Result<VecCol> {
    let (a, b): (Arg<'_, IntT>, Arg<'_, IntT>) = (c.typed(0)?, c.typed(1)?);
    let data = zip_all(c.n, a, b, f);
    Ok(VecCol { data: ColData::Int(data), valid: valid2(c.n, &a, &b) })
}

fn bit_and(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    int2(c, |x, y| x & y)
}

fn bit_or(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    int2(c, |x, y| x | y)
}

fn bit_xor(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    int2(c, |x, y| x ^ y)
}

fn left_shift(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    int2(c, |x, y| {
        u32::try_from(y).ok().and_then(|s| (x as u64).checked_shl(s)).unwrap_or(0) as i64
    })
}

fn right_shift(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    int2(c, |x, y| {
        u32::try_from(y).ok().and_then(|s| (x as u64).checked_shr(s)).unwrap_or(0) as i64
    })
}

fn bit_neg(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<IntT, IntT>(c.n, c.typed(0)?, |v| Some(!v))
}

fn bit_count(c: &Call<'_, '_>, _: &mut EvalContext) -> Result<VecCol> {
    map1_infallible::<IntT, IntT>(c.n, c.typed(0)?, |v| Some(i64::from(v.count_ones())))
}
