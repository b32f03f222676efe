#!/usr/bin/env bash
# The previous release beside this one, as in a rolling deploy and after a rollback.
# Builds the `outbox` command of the previous release from git history and, on SQLite,
# PostgreSQL and MariaDB:
#   1. the previous release migrates an empty database and writes entries, and a drain of
#      it starts;
#   2. this release's `migrate` upgrades the schema under that running drain, this release
#      writes entries too and a drain of it runs beside the previous one's; between them
#      every entry is delivered, and none twice (no lease runs out);
#   3. the previous release's store opens again on the upgraded schema: it writes entries
#      and reads stats and dead letters, and this release drains what it wrote;
#   4. a schema recorded as contracted past the previous release is refused by it,
#      cleanly (exit 1, the versions named, no panic).
#
# Usage: scripts/previous-release.sh [REV]
# REV defaults to the commit named in scripts/previous-release (the commit a change to
# the schema started from: whoever changes the migrations, their bookkeeping or the
# definitions sets it to the commit their work began at), or else to the parent of the
# newest commit that changed them. Needs the repository's history (not a shallow clone)
# and the servers .ci/run starts (PostgreSQL on 127.0.0.1:5432 as postgres, MariaDB on
# 127.0.0.1:3306 as root); an engine that cannot be reached fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PGOPTIONS="-c client_min_messages=warning"

if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    echo "previous-release: this clone is shallow; the previous release needs the history" >&2
    exit 1
fi
rev=${1:-}
if [ -z "$rev" ] && [ -f scripts/previous-release ]; then
    rev=$(grep -v '^#' scripts/previous-release | awk 'NF { print $1; exit }')
fi
if [ -z "$rev" ]; then
    newest=$(git log -1 --format=%H -- 'outbox-*/migrations/*' 'outbox-*/sql/migrations/*' \
        'outbox-*/definitions/*')
    rev=$(git rev-parse "$newest^")
fi
rev=$(git rev-parse --verify "$rev^{commit}")
echo "== previous release: $(git log -1 --format='%h %s' "$rev")"

out=$root/target/previous-release
rm -rf "$out"
mkdir -p "$out/src" "$out/work"
git archive "$rev" | tar -x -C "$out/src"

# The previous release builds in a target directory of its own, one per commit: its
# crates have the same names, versions and workspace-relative paths as this release's (and
# as another commit's), and git archive dates their files at the commit, so in a shared
# target directory cargo would take one's artifacts for the other's. Kept between runs.
build=$root/target/previous-release-build/$(git rev-parse --short "$rev")
echo "== building the previous release's outbox"
CARGO_TARGET_DIR=$build cargo build --locked -q -p outbox-cli --manifest-path "$out/src/Cargo.toml"
cp "$build/debug/outbox" "$out/outbox-previous"
echo "== building this release's outbox"
cargo build --locked -q -p outbox-cli
cp "$root/target/debug/outbox" "$out/outbox-this"
previous=$out/outbox-previous
this=$out/outbox-this

pg_url=postgres://postgres@127.0.0.1:5432/postgres
pg_schema=previous_release_$$
my_db=previous_release_$$
background=()
cleanup() {
    for pid in "${background[@]}"; do kill "$pid" 2>/dev/null || true; done
    psql "$pg_url" -qc "DROP SCHEMA IF EXISTS $pg_schema CASCADE" >/dev/null 2>&1 || true
    mariadb -h127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS $my_db" >/dev/null 2>&1 || true
}
trap cleanup EXIT

fail() {
    echo "previous-release: $*" >&2
    exit 1
}

# Runs a command that must succeed within 5 minutes; prints its standard output, and on
# failure what it printed.
run() {
    local what=$1
    shift
    if ! timeout 300 "$@" >"$out/last.out" 2>"$out/last.err" </dev/null; then
        cat "$out/last.out" "$out/last.err" >&2
        fail "$what failed: $*"
    fi
    cat "$out/last.out"
}

expect() {
    local what=$1 needle=$2 text=$3
    [[ "$text" == *"$needle"* ]] || fail "$what: expected '$needle' in: $text"
}

# The number after `delivered` in a drain's summary (0 when there is none).
delivered() {
    { grep -o 'delivered [0-9]*' "$1" || true; } | head -1 | awk '{ print $2 + 0 }'
}

# One engine's round: $1 names it, the rest are the global options naming its database.
round() {
    local engine=$1
    shift
    local db=("$@")
    echo "== $engine"
    run "the previous release's migrate" "$previous" "${db[@]}" migrate
    run "the previous release's enqueue" "$previous" "${db[@]}" enqueue --count 2000 >/dev/null
    # The previous release's drain runs until it is stopped.
    "$previous" "${db[@]}" drain --workers 2 --emitter "jsonl:$out/$engine-previous.jsonl" \
        >"$out/$engine-previous.out" 2>&1 </dev/null &
    local previous_pid=$!
    background+=("$previous_pid")
    # This release upgrades the schema under it, writes entries and drains beside it.
    expect "this release's migrate" "version" "$(run "this release's migrate" "$this" "${db[@]}" migrate)"
    run "this release's enqueue" "$this" "${db[@]}" enqueue --count 2000 >/dev/null
    if ! timeout 300 "$this" "${db[@]}" drain --until-empty --workers 2 \
        --emitter "jsonl:$out/$engine-this.jsonl" >"$out/$engine-this.out" 2>&1 </dev/null; then
        cat "$out/$engine-this.out" >&2
        fail "$engine: this release's drain failed"
    fi
    kill -TERM "$previous_pid"
    if ! timeout 60 tail --pid="$previous_pid" -f /dev/null; then
        fail "$engine: the previous release's drain did not stop"
    fi
    wait "$previous_pid" || {
        cat "$out/$engine-previous.out" >&2
        fail "$engine: the previous release's drain failed"
    }
    local by_previous by_this
    by_previous=$(delivered "$out/$engine-previous.out")
    by_this=$(delivered "$out/$engine-this.out")
    [ "$((by_previous + by_this))" = 4000 ] ||
        fail "$engine: delivered $by_previous + $by_this, not 4000"
    local ids emissions
    ids=$(cat "$out/$engine-previous.jsonl" "$out/$engine-this.jsonl" |
        python3 -c 'import json,sys; print(len({json.loads(l)["id"] for l in sys.stdin}))')
    emissions=$(cat "$out/$engine-previous.jsonl" "$out/$engine-this.jsonl" | wc -l)
    [ "$ids" = 4000 ] || fail "$engine: $ids entries emitted of 4000"
    [ "$emissions" = 4000 ] || fail "$engine: $emissions emissions of 4000 entries"
    # The previous release on the upgraded schema, then this release after it.
    run "the previous release's enqueue" "$previous" "${db[@]}" enqueue --count 500 >/dev/null
    expect "the previous release's stats" "pending" \
        "$(run "the previous release's stats" "$previous" "${db[@]}" stats)"
    run "the previous release's dead-letter list" "$previous" "${db[@]}" dead-letters list >/dev/null
    expect "this release's drain" "delivered 500" \
        "$(run "this release's drain" "$this" "${db[@]}" drain --until-empty --emitter noop 2>&1)"
    echo "   upgraded under a running drain of the previous release; 4000 delivered once" \
        "($by_previous by the previous release, $by_this by this one); this release drained" \
        "the previous one's 500"
}

# A schema recorded past the previous release's window: it must refuse, not run.
refused() {
    local engine=$1
    shift
    if timeout 60 "$previous" "$@" stats >"$out/last.out" 2>"$out/last.err" </dev/null; then
        fail "$engine: the previous release ran on a contracted schema"
    fi
    expect "$engine: the previous release's refusal" "version" "$(cat "$out/last.err")"
    if grep -q panicked "$out/last.err"; then
        fail "$engine: a panic: $(cat "$out/last.err")"
    fi
    echo "   a contracted schema is refused: $(head -1 "$out/last.err")"
}

sqlite_file=$out/work/outbox.db
round sqlite --database-url "sqlite://$sqlite_file"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()" \
    "$sqlite_file" "INSERT INTO outbox_migrations (version, name, applied_at, oldest_compatible,
        checksum) VALUES (999, 'contracted', 0, 999, 'x')"
refused sqlite --database-url "sqlite://$sqlite_file"

psql "$pg_url" -qc "DROP SCHEMA IF EXISTS $pg_schema CASCADE; CREATE SCHEMA $pg_schema" >/dev/null
round postgres --database-url "$pg_url" --schema "$pg_schema"
psql "$pg_url" -qc "INSERT INTO $pg_schema.outbox_migrations (version, name, oldest_compatible,
    checksum) VALUES (999, 'contracted', 999, 'x')" >/dev/null
refused postgres --database-url "$pg_url" --schema "$pg_schema"

mariadb -h127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS $my_db; CREATE DATABASE $my_db"
round mariadb --database-url "mysql://root@127.0.0.1:3306/$my_db"
mariadb -h127.0.0.1 -uroot "$my_db" -e "INSERT INTO outbox_migrations
    (version, name, oldest_compatible, checksum) VALUES (999, 'contracted', 999, 'x')"
refused mariadb --database-url "mysql://root@127.0.0.1:3306/$my_db"

echo "== the previous release ($(git rev-parse --short "$rev")) runs beside this one: ok"
