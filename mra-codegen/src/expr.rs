//! The integer conditions of `constraint(..)` and of rule defaults (`default = if wave == 64 { 0 }
//! else { 1 }`): expressions over parameter names, `K`, `bytes` and the arch's limits.

use serde::{Deserialize, Serialize};
use std::fmt;

/// `lhs op rhs`, as written in `constraint(..)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Constraint {
    pub lhs: Expr,
    pub op: CmpOp,
    pub rhs: Expr,
    /// The condition as written, for messages and printing.
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CmpOp {
    Le,
    Lt,
    Ge,
    Gt,
    Eq,
    Ne,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    /// `^`: power.
    Pow,
}

/// An integer expression over parameter names, `K`, `bytes` and the arch's limits (`shared`,
/// `wave`, `max_threads`, `registers`). Fixed values are substituted by the macro.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expr {
    Int(i64),
    Name(String),
    Bin(Box<Expr>, BinOp, Box<Expr>),
}

impl Expr {
    /// The value under `env`; `None` on overflow, division by zero or an unknown name.
    pub fn eval(&self, env: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
        match self {
            Expr::Int(n) => Some(*n),
            Expr::Name(n) => env(n),
            Expr::Bin(a, op, b) => {
                let (a, b) = (a.eval(env)?, b.eval(env)?);
                match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    BinOp::Div => a.checked_div(b),
                    BinOp::Rem => a.checked_rem(b),
                    BinOp::Pow => u32::try_from(b).ok().and_then(|e| a.checked_pow(e)),
                }
            }
        }
    }
}

impl Constraint {
    pub fn holds(&self, env: &dyn Fn(&str) -> Option<i64>) -> Option<bool> {
        let (a, b) = (self.lhs.eval(env)?, self.rhs.eval(env)?);
        Some(match self.op {
            CmpOp::Le => a <= b,
            CmpOp::Lt => a < b,
            CmpOp::Ge => a >= b,
            CmpOp::Gt => a > b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
        })
    }
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

