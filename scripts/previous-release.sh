#!/usr/bin/env bash
# The previous release on this release's schema, as during a rolling deploy or after a
# rollback. Builds the `outbox` command of the commit just before the newest change to
# the migrations or their bookkeeping (by default; or of REV), and on SQLite, PostgreSQL
# and MariaDB:
#   - this release migrates and writes entries; a drain of each release runs at once on
#     them (a rolling deploy), and between them every entry is delivered, none twice while
#     no lease ran out;
#   - the previous release writes entries of its own and reads stats and dead letters;
#     this release drains what it wrote;
#   - a schema recorded past the previous release's window is refused by it, cleanly.
#
# Usage: scripts/previous-release.sh [REV]
# Needs the repository's history (not a shallow clone), and the servers .ci/run starts
# (PostgreSQL on 127.0.0.1:5432 as postgres, MariaDB on 127.0.0.1:3306 as root); an
# engine that cannot be reached fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PGOPTIONS="-c client_min_messages=warning"

if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    echo "previous-release: this clone is shallow; the previous release needs the history" >&2
    exit 1
fi
rev=${1:-}
if [ -z "$rev" ]; then
    newest=$(git log -1 --format=%H -- 'outbox-*/migrations/*' 'outbox-*/sql/migrations/*')
    rev=$(git rev-parse "$newest^")
fi
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

# A command's standard output; its failure ends the run with what it printed.
run() {
    local what=$1
    shift
    if ! "$@" >"$out/last.out" 2>"$out/last.err" </dev/null; then
        echo "previous-release: $what failed: $*" >&2
        cat "$out/last.out" "$out/last.err" >&2
        exit 1
    fi
    cat "$out/last.out"
}

expect() {
    local what=$1 needle=$2 text=$3
    if [[ "$text" != *"$needle"* ]]; then
        echo "previous-release: $what: expected '$needle' in:" >&2
        echo "$text" >&2
        exit 1
    fi
}

# One engine's round: $1 names it, the rest are the global options naming its database.
round() {
    local engine=$1
    shift
    local db=("$@")
    echo "== $engine"
    run "this release's migrate" "$this" "${db[@]}" migrate
    run "this release's enqueue" "$this" "${db[@]}" enqueue --count 3000 --batch 500 >/dev/null
    # Both releases drain at once, each until nothing is left.
    "$previous" "${db[@]}" drain --until-empty --workers 2 \
        --emitter "jsonl:$out/$engine-previous.jsonl" >"$out/$engine-previous.out" 2>&1 </dev/null &
    local previous_pid=$!
    "$this" "${db[@]}" drain --until-empty --workers 2 \
        --emitter "jsonl:$out/$engine-this.jsonl" >"$out/$engine-this.out" 2>&1 </dev/null &
    local this_pid=$!
    local failed=0
    wait "$previous_pid" || failed=1
    wait "$this_pid" || failed=1
    if [ "$failed" = 1 ]; then
        echo "previous-release: $engine: a drain failed" >&2
        cat "$out/$engine-previous.out" "$out/$engine-this.out" >&2
        exit 1
    fi
    local by_previous by_this
    by_previous=$(grep -o 'delivered [0-9]*' "$out/$engine-previous.out" | head -1 | cut -d' ' -f2)
    by_this=$(grep -o 'delivered [0-9]*' "$out/$engine-this.out" | head -1 | cut -d' ' -f2)
    if [ "$((by_previous + by_this))" != 3000 ]; then
        echo "previous-release: $engine: delivered $by_previous + $by_this, not 3000" >&2
        exit 1
    fi
    [ "$by_previous" -gt 0 ] || echo "   (the previous release's drain found nothing left to take)"
    local distinct
    distinct=$(cat "$out/$engine-previous.jsonl" "$out/$engine-this.jsonl" \
        | python3 -c 'import json,sys; print(len({json.loads(l)["id"] for l in sys.stdin}))')
    [ "$distinct" = 3000 ] || { echo "previous-release: $distinct entries emitted of 3000" >&2; exit 1; }
    local emissions
    emissions=$(cat "$out/$engine-previous.jsonl" "$out/$engine-this.jsonl" | wc -l)
    [ "$emissions" = 3000 ] || { echo "previous-release: $emissions emissions of 3000 entries" >&2; exit 1; }
    run "the previous release's enqueue" "$previous" "${db[@]}" enqueue --count 500 >/dev/null
    local stats
    stats=$(run "the previous release's stats" "$previous" "${db[@]}" stats)
    expect "the previous release's stats" "pending" "$stats"
    run "the previous release's dead-letter list" "$previous" "${db[@]}" dead-letters list >/dev/null
    drained=$(run "this release's drain" "$this" "${db[@]}" drain --until-empty --emitter noop 2>&1)
    expect "this release's drain" "delivered 500" "$drained"
    echo "   both releases at once delivered 3000 ($by_previous by the previous, $by_this by this one); this release drained the previous one's 500"
}

# A schema recorded past the previous release's window: it must refuse, not run.
refused() {
    local engine=$1
    shift
    if "$previous" "$@" stats >"$out/last.out" 2>"$out/last.err" </dev/null; then
        echo "previous-release: $engine: the previous release ran on a contracted schema" >&2
        exit 1
    fi
    expect "$engine: the previous release's refusal" "version" "$(cat "$out/last.err")"
    if grep -q panicked "$out/last.err"; then
        echo "previous-release: $engine: a panic" >&2
        exit 1
    fi
    echo "   a contracted schema is refused: $(head -1 "$out/last.err")"
}

sqlite_file=$out/work/outbox.db
round sqlite --database-url "sqlite://$sqlite_file"
sqlite3_insert="INSERT INTO outbox_migrations (version, name, applied_at, oldest_compatible, checksum)
    VALUES (999, 'contracted', 0, 999, 'x')"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()" \
    "$sqlite_file" "$sqlite3_insert"
refused sqlite --database-url "sqlite://$sqlite_file"

pg_url=postgres://postgres@127.0.0.1:5432/postgres
pg_schema=previous_release_$$
psql "$pg_url" -qc "DROP SCHEMA IF EXISTS $pg_schema CASCADE; CREATE SCHEMA $pg_schema" >/dev/null
round postgres --database-url "$pg_url" --schema "$pg_schema"
psql "$pg_url" -qc "INSERT INTO $pg_schema.outbox_migrations (version, name, oldest_compatible, checksum)
    VALUES (999, 'contracted', 999, 'x')" >/dev/null
refused postgres --database-url "$pg_url" --schema "$pg_schema"
psql "$pg_url" -qc "DROP SCHEMA $pg_schema CASCADE" >/dev/null

my_db=previous_release_$$
mariadb -h127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS $my_db; CREATE DATABASE $my_db"
round mariadb --database-url "mysql://root@127.0.0.1:3306/$my_db"
mariadb -h127.0.0.1 -uroot "$my_db" -e "INSERT INTO outbox_migrations
    (version, name, oldest_compatible, checksum) VALUES (999, 'contracted', 999, 'x')"
refused mariadb --database-url "mysql://root@127.0.0.1:3306/$my_db"
mariadb -h127.0.0.1 -uroot -e "DROP DATABASE $my_db"

echo "== the previous release ($(git rev-parse --short "$rev")) runs on this release's schema: ok"
