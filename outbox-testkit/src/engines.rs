//! Reporting an engine that cannot be reached: loudly, and as a failure when required.

/// The variable listing engines whose absence fails the tests (`postgres,sqlserver`).
pub const REQUIRE_VAR: &str = "OUTBOX_TEST_REQUIRE";

/// True when `engine` is listed in `OUTBOX_TEST_REQUIRE`.
pub fn is_required(engine: &str) -> bool {
    std::env::var(REQUIRE_VAR)
        .map(|v| v.split(',').any(|e| e.trim().eq_ignore_ascii_case(engine)))
        .unwrap_or(false)
}

/// Reports that `engine` cannot be reached: a banner on stderr, and a panic (a test
/// failure) when the engine is required. Callers return right after it.
pub fn unavailable(engine: &str, why: &str) {
    let banner = format!(
        "\n!!!!!!!!!! SKIPPED: {engine} is not reachable: {why}\n!!!!!!!!!! set {REQUIRE_VAR}={engine} to make this a failure\n"
    );
    eprintln!("{banner}");
    assert!(
        !is_required(engine),
        "{engine} is required ({REQUIRE_VAR}) but not reachable: {why}"
    );
}
