//! cel-go's planner evaluates a type conversion of a constant while it makes the program
//! (`OptOptimize`'s `maybeOptimizeConstUnary`), so a rule holding `int('x')`, `uint(-1)`
//! or `int(double('NaN'))` is refused when its CRD is written: "program instantiation
//! failed: <the conversion's error>". Conversions of conversions of literals fold in turn.

use kube_cel::cel::common::ast::{Expr, IdedExpr};

/// cel-go's `overloads.IsTypeConversionFunction`.
const CONVERSIONS: [&str; 10] =
    ["bool", "bytes", "double", "duration", "dyn", "int", "string", "timestamp", "type", "uint"];

/// The error of the first constant conversion that fails (in cel-go's planning order:
/// operands before the call), as cel-go words it.
pub fn constant_error(e: &IdedExpr) -> Option<String> {
    fold(e).err()
}

/// Whether `e` is a constant once folded (`Ok(true)`), or the error folding it met.
fn fold(e: &IdedExpr) -> Result<bool, String> {
    match &e.expr {
        Expr::Literal(_) => Ok(true),
        Expr::Call(c) => {
            let mut constant = true;
            for child in c.target.as_deref().into_iter().chain(&c.args) {
                constant &= fold(child)?;
            }
            let conversion = c.target.is_none() && c.args.len() == 1 && CONVERSIONS.contains(&c.func_name.as_str());
            if conversion && constant {
                super::cel::evaluate_constant(e)?;
                return Ok(true);
            }
            Ok(false)
        }
        _ => {
            for child in super::celmeter::children(e) {
                fold(child)?;
            }
            Ok(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(source: &str) -> Option<String> {
        constant_error(&super::super::celcheck::cel_parse(source).expect("parses"))
    }

    /// The oracle's `program instantiation failed: ...` answers, and rules it takes.
    #[test]
    fn constant_conversions_fail_when_the_program_is_made() {
        for (source, oracle) in [
            ("uint(-1) == uint(1.8e19)", "unsigned integer overflow"),
            ("self.x >= uint(double('NaN'))", "unsigned integer overflow"),
            ("dyn(int('b')) == dyn(3.0)", "type conversion error from 'string' to 'int'"),
            ("int(double('-Infinity')) in [1, 2, 3]", "integer overflow"),
        ] {
            assert_eq!(error_of(source).as_deref(), Some(oracle), "{source}");
        }
        for source in ["int(self.x) == 1", "int('1') == 1 && uint(2) == 2u", "[1].size() == 1"] {
            assert_eq!(error_of(source), None, "{source}");
        }
    }
}
