//! Running a test alone in a process of its own, for the tests that measure the process
//! itself (its resident or peak memory). nextest gives every test a process, but `cargo
//! test` runs the tests of the one binary as threads of one process, where the memory of the
//! tests beside it would count; so such a test runs its body in a child process of this
//! binary, under either runner.

use std::process::Command;

/// Set in the child: run the body here.
const CHILD_ENV: &str = "KUBECTL_CRD_TEST_ALONE";

/// Whether the calling test runs its body here. In the child, yes; otherwise this runs
/// `test` (its path in the binary, `engine_limits::name`) alone in a child process, fails
/// if the child fails (with its output), and answers no.
pub fn in_own_process(test: &str) -> bool {
    if std::env::var_os(CHILD_ENV).is_some() {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .output()
        .expect("run the test in a child process");
    let output = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{test}, alone in a child process, failed:\n{output}");
    // A name that selects nothing passes too; make sure the test ran.
    assert!(output.contains("1 passed"), "{test} did not run in the child:\n{output}");
    eprint!("{output}");
    false
}
