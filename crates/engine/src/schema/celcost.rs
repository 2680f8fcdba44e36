//! kube-apiserver's limits on CEL and cel-go's cost units, in one place: the parser's
//! limits (expression size, nesting), the static budgets a CRD's rules must fit at
//! registration, the runtime limits of one evaluation and of one request, and the cost
//! arithmetic cel-go's estimator and tracker share (saturating, with factors rounded up).
//!
//! The static estimate ([`super::celcheck`]) and the runtime meter ([`super::celmeter`])
//! both count in these units, so that kube's decisions and messages come out the same.

/// cel-go's default parser recursion limit (kube keeps it).
pub const MAX_RECURSION_DEPTH: usize = 250;
/// cel-go's default limit on an expression's size, in code points.
pub const EXPRESSION_SIZE_CODE_POINT_LIMIT: usize = 100_000;

/// `celconfig.PerCallLimit`: what one evaluation of one expression may cost.
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// `celconfig.RuntimeCELCostBudget`: what all the rules of one request may cost.
pub const RUNTIME_COST_BUDGET: i64 = 10_000_000;
/// `StaticEstimatedCostLimit`: one rule's estimated cost times how often it can run.
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// `StaticEstimatedCRDCostLimit`: the sum over all the rules of one schema.
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;
/// `celconfig.MaxRequestSizeBytes`: unbounded lists, maps and strings are sized from it.
pub const MAX_REQUEST_SIZE_BYTES: u64 = 3 * 1024 * 1024;

/// cel-go's `common` cost units.
pub const SELECT_AND_IDENT_COST: u64 = 1;
pub const LIST_CREATE_BASE_COST: u64 = 10;
pub const MAP_CREATE_BASE_COST: u64 = 30;
pub const STRING_TRAVERSAL_COST_FACTOR: f64 = 0.1;
pub const REGEX_STRING_LENGTH_COST_FACTOR: f64 = 0.25;
/// kube's `MaxNameFormatRegexSize`: what `format.named(...).validate(s)` is charged for.
pub const MAX_NAME_FORMAT_REGEX_SIZE: f64 = 128.0;

/// kube's runtime message when one evaluation goes over [`PER_CALL_LIMIT`].
pub const CANCELLED: &str = "operation cancelled: actual cost limit exceeded";
/// kube's runtime message when a request's rules go over [`RUNTIME_COST_BUDGET`].
pub const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// How much stack CEL work gets. The `cel` crate's parser and interpreter recurse along
/// the expression; within cel-go's limits (nesting 250) they need about 2 MiB in release
/// builds, and some 30 times more in unoptimized ones (tests), whose frames are larger.
/// More than a runtime worker's stack either way, so CEL work runs on a stack of its own.
const CEL_STACK: usize = if cfg!(debug_assertions) { 256 << 20 } else { 32 << 20 };

/// Runs `f` (parsing, checking or evaluating CEL) with [`CEL_STACK`] of stack: on the
/// current one when it has that much left, else on a new one (only address space until used).
pub fn on_cel_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(CEL_STACK / 2, CEL_STACK, f)
}

/// Rules and values nesting at most this deep are "shallow": nearly every real CRD's.
pub const SHALLOW_DEPTH: usize = 32;
/// The stack shallow CEL work takes, with room to spare: [`SHALLOW_DEPTH`] levels of
/// expression over as many levels of values took between 128 and 256 KiB in the tests'
/// build (the `cel` crate at opt-level 1); unoptimized frames are larger still, optimized
/// ones smaller (`shallow_work_fits_its_stack` runs the work on this much).
const SHALLOW_STACK: usize = if cfg!(debug_assertions) { 4 << 20 } else { 1 << 20 };
#[cfg(test)]
pub const SHALLOW_STACK_FOR_TESTS: usize = SHALLOW_STACK;

/// Runs CEL work on the stack it needs: shallow work on the current stack when that has
/// [`SHALLOW_STACK`] left (a tokio worker's 2 MiB does, optimized), else as
/// [`on_cel_stack`]. A new stack is a map, a guard and an unmap per call, with fresh pages
/// faulted in: for a small object, a sixth of its whole validation.
pub fn on_stack_for<R>(shallow: bool, f: impl FnOnce() -> R) -> R {
    if shallow { stacker::maybe_grow(SHALLOW_STACK, CEL_STACK, f) } else { on_cel_stack(f) }
}

/// Runs `f` on the CEL stack, turning a panic inside the `cel` crate (its parser's depth
/// counter can underflow; its interpreter does not support every node) into an error,
/// so that one rule can cost a request, never the server or a connection.
pub fn guarded<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    on_cel_stack(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))).map_err(|panic| {
        let text =
            panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
        format!("internal error: {}", text.unwrap_or_default())
    })
}

/// cel-go's `multiplyByCostFactor`: `x * factor` rounded up, saturating.
pub fn by_factor(x: u64, factor: f64) -> u64 {
    let product = (x as f64 * factor).ceil();
    if product >= u64::MAX as f64 { u64::MAX } else { product as u64 }
}

/// A `[min, max]` range: cel-go's `SizeEstimate` and `CostEstimate` (the same arithmetic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Range {
    pub min: u64,
    pub max: u64,
}

impl Range {
    pub const fn exactly(n: u64) -> Range {
        Range { min: n, max: n }
    }

    /// Anything from nothing to the largest number: what cel-go assumes of unknown sizes.
    pub const UNKNOWN: Range = Range { min: 0, max: u64::MAX };

    pub fn plus(self, other: Range) -> Range {
        Range { min: self.min.saturating_add(other.min), max: self.max.saturating_add(other.max) }
    }

    pub fn multiply(self, other: Range) -> Range {
        Range { min: self.min.saturating_mul(other.min), max: self.max.saturating_mul(other.max) }
    }

    pub fn by_factor(self, factor: f64) -> Range {
        Range { min: by_factor(self.min, factor), max: by_factor(self.max, factor) }
    }

    pub fn union(self, other: Range) -> Range {
        Range { min: self.min.min(other.min), max: self.max.max(other.max) }
    }
}

/// kube's `getCostErrorMessage`: by how much an estimate exceeds its limit.
pub fn exceeds_budget(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        // Two orders of magnitude over: the rule is O(n^2) or worse, the number says nothing.
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_messages_format_the_factor_as_kube_does() {
        let msg = |cost| exceeds_budget("estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT);
        assert!(msg(31_457_863).contains("by factor of 3.1x ("), "{}", msg(31_457_863));
        assert!(msg(12_000_000).contains("by factor of 1.200000x ("));
        assert!(msg(2_000_000_000).contains("by factor of more than 100x ("));
    }

    #[test]
    fn cost_arithmetic_saturates_and_rounds_up() {
        assert_eq!(by_factor(3_145_726, STRING_TRAVERSAL_COST_FACTOR), 314_573);
        assert_eq!(Range::UNKNOWN.plus(Range::exactly(1)).max, u64::MAX);
        assert_eq!(Range::exactly(u64::MAX).multiply(Range::exactly(2)).max, u64::MAX);
        assert_eq!(by_factor(u64::MAX, 2.0), u64::MAX);
    }
}
