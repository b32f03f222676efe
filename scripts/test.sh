#!/usr/bin/env bash
# The project's test command: formatting, lints, docs, and every test of the workspace.
# Engines the tests need are found or started by the tests themselves; set
# OUTBOX_TEST_REQUIRE=postgres (CI does) to turn an unreachable engine into a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo doc (warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
echo "== cargo test"
cargo test --workspace --locked
