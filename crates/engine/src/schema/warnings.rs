//! Warnings that validation gives beside its errors. kube's CEL validator records the
//! failures of rules that ratchet (`warning.AddWarning` on the request's context) instead
//! of refusing the write, and they go out as `Warning` headers; here validation is a pure
//! function of its inputs, so the warnings are gathered on the thread it runs on, around
//! the one call that validates a request ([`collecting`]).

use std::cell::RefCell;

thread_local! {
    /// The warnings of the validation running on this thread, when something collects them.
    static SINK: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Runs `f`, returning what it returns and the warnings it gave, in order.
pub fn collecting<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    let outer = SINK.with(|s| s.replace(Some(Vec::new())));
    let result = f();
    let warnings = SINK.with(|s| s.replace(outer)).unwrap_or_default();
    (result, warnings)
}

/// Records a warning; dropped when nothing collects (a CRD's defaults checked at
/// registration, where kube has no request to warn).
pub(super) fn warn(text: String) {
    SINK.with(|s| {
        if let Some(warnings) = s.borrow_mut().as_mut() {
            warnings.push(text);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_reach_only_the_collector_around_them() {
        warn("dropped".into());
        let ((), outer) = collecting(|| {
            warn("a".into());
            let ((), inner) = collecting(|| warn("b".into()));
            assert_eq!(inner, ["b"]);
            warn("c".into());
        });
        assert_eq!(outer, ["a", "c"]);
    }
}
