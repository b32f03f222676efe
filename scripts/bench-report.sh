#!/usr/bin/env bash
# Regenerates benches/REPORT.md, benches/results.json and the plots from a full bench run
# (about an hour and a half on a 2-core machine, an hour of it the soak). PostgreSQL is the
# server OUTBOX_TEST_POSTGRES_URL names; unset, a cluster of the bench's own, started from
# the installed server binaries with production settings (durable commits, the default
# autovacuum and analyze), since the machine's own server runs without autovacuum for CI.
# Extra arguments go to `outbox-bench run`
# (e.g. --only claims,costs; --only soak --keep --soak-minutes 20).
set -euo pipefail
cd "$(dirname "$0")/.."

export OUTBOX_TEST_REQUIRE="${OUTBOX_TEST_REQUIRE:-postgres}"

cargo run --release --locked -p outbox-benches --bin outbox-bench -- run --out benches "$@"
