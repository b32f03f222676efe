#!/usr/bin/env bash
# The project's test command: formatting, lints, docs, every test of the workspace, and a
# quick smoke run of every bench scenario (its report goes to target/bench-quick/).
# Engines the tests need are found or started by the tests themselves; set
# OUTBOX_TEST_REQUIRE=postgres (CI does) to turn an unreachable engine into a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

# The PostgreSQL tests start a throwaway cluster from the installed server binaries
# (unless OUTBOX_TEST_POSTGRES_URL names a server). Install them on a fresh machine.
if [ -z "${OUTBOX_TEST_POSTGRES_URL:-}" ] && ! command -v pg_ctl >/dev/null 2>&1 \
    && ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
    echo "== installing the PostgreSQL server (no initdb/pg_ctl found)"
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
fi

# rustfmt and clippy are rustup components a minimal toolchain may lack.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
    rustup component add rustfmt clippy
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo doc (warnings are errors; private items too, so their links stay right)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet --document-private-items
# Tests skipped for an engine no one can start here say so in their captured output only;
# say it where a reader of this log sees it.
sqlserver_skip() {
    if [ -z "${OUTBOX_TEST_SQLSERVER_URL:-}" ]; then
        echo "!!!!!!!!!! SKIPPED: the SQL Server integration tests (outbox-sqlserver tests/it, outbox-cli tests/sqlserver.rs)"
        echo "!!!!!!!!!! OUTBOX_TEST_SQLSERVER_URL is not set; where Docker runs: docker compose up -d sqlserver,"
        echo "!!!!!!!!!! then set it as the README's 'Test servers' section says (the offline SQL Server checks did run)"
    fi
}
echo "== cargo test"
sqlserver_skip
cargo test --workspace --locked
sqlserver_skip
echo "== benches: criterion cases once each, then every scenario once (quick), invariants checked"
cargo test --locked -p outbox-benches --benches
cargo run --locked -q -p outbox-benches --bin outbox-bench -- \
    run --quick --check --out target/bench-quick >target/bench-quick.md
