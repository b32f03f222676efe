#!/usr/bin/env bash
# Regenerates benches/REPORT.md, benches/results.json and the plots from a full bench run
# (about an hour and a half on a 2-core machine, an hour of it the soak). PostgreSQL is the
# server OUTBOX_TEST_POSTGRES_URL names; unset, the local server on 127.0.0.1:5432 if one answers, else a throwaway cluster
# from the installed server binaries. Extra arguments go to `outbox-bench run`
# (e.g. --only claims,costs; --only soak --keep --soak-minutes 20).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${OUTBOX_TEST_POSTGRES_URL:-}" ] && command -v pg_isready >/dev/null 2>&1 \
    && pg_isready -q -h 127.0.0.1 -p 5432; then
    export OUTBOX_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:5432/postgres"
fi
export OUTBOX_TEST_REQUIRE="${OUTBOX_TEST_REQUIRE:-postgres}"

cargo run --release --locked -p outbox-benches --bin outbox-bench -- run --out benches "$@"
