//! Numeric functions, by family: [`arith`] (`+ - * / DIV %`, unary minus), [`round`]
//! (`CEIL`, `FLOOR`, `ROUND`, `TRUNCATE`), [`func`] (`ABS`, `SIGN`, `SQRT`, `EXP`, `LOG*`,
//! `POW`, trigonometry, `DEGREES`, `RADIANS`, `PI`), [`conv`] (`CONV`, `CRC32`, `RAND`).

pub mod arith;
pub mod conv;
pub mod func;
pub mod round;

use crate::expr::registry::Registry;

pub(super) fn register(r: &mut Registry) {
    arith::register(r);
    round::register(r);
    func::register(r);
    conv::register(r);
}
