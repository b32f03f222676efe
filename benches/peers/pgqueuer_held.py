"""Held-snapshot rounds against pgqueuer, a peer PostgreSQL job queue.

What it measures: the drain rate of pgqueuer (https://pypi.org/project/pgqueuer/,
driven through asyncpg) round after round on one queue table, optionally while a
repeatable-read transaction is held open on another connection for the whole run, and
the queue table's dead row versions at the end.

Why it mirrors the Rust bench (benches/src/scenarios/held.rs):

* fresh pending rows per round: each round enqueues ``--round`` new jobs of
  ``--payload-bytes`` bytes to one entrypoint (pgqueuer's own batch enqueue, outside
  the clock), as our bench loads fresh pending entries before each drain;
* new consumers per round: ``--workers`` new QueueManagers, each on its own new asyncpg
  connection (our drain starts a new process per round, connected before its clock
  starts), dequeuing ``--batch`` jobs at a time into an entrypoint that does nothing;
* the clock runs from just before the consumers start until every job of the round has
  been processed and its completion is committed; round rate = jobs / seconds;
* vacuum between rounds: after each round (outside the clock) the consumers' connections
  are closed and pgqueuer's tables are vacuumed, so both runs are vacuumed at the same
  points whatever autovacuum does;
* ``--held``: a repeatable-read transaction, its snapshot taken with ``SELECT 1``, is
  held open on a separate connection for the whole run, so no row version the queue
  leaves dead can be removed; the only difference between a held and an unheld run.

The database named by ``--dsn`` must exist and be empty; pgqueuer's schema is installed
into it with pgqueuer's own installer (``Queries.install``, what ``pgq install`` runs).
Progress goes to stderr; the last line on stdout is one JSON object:

  {"queue": "pgqueuer", "version": ..., "held": ..., "seconds": ..., "round_entries": N,
   "rounds_per_s": [...], "dead_rows": n_dead_tup of the queue table or null}

Install the pinned versions with:
  python3 -m pip install -r benches/peers/requirements.txt
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import sys
import time

REQUIREMENTS = "benches/peers/requirements.txt"

try:
    import asyncpg
    from pgqueuer import QueueManager
    from pgqueuer.models import Job
    from pgqueuer.queries import Queries
    from pgqueuer.types import QueueExecutionMode
except ImportError as missing:
    sys.exit(
        f"pgqueuer_held: cannot import {missing.name or missing}: install the peer with "
        f"`python3 -m pip install -r {REQUIREMENTS}` (pgqueuer and asyncpg)"
    )

ENTRYPOINT = "bench_noop"
ENQUEUE_CHUNK = 1_000
# One round may take at most this long, as the Rust bench's drain budget.
ROUND_BUDGET_S = 900.0


class Failure(Exception):
    """A measurement that cannot be trusted: reported and exits non-zero."""


def log(message: str) -> None:
    print(f"pgqueuer_held: {message}", file=sys.stderr, flush=True)


def payload(i: int, size: int) -> bytes:
    """`size` bytes made of job `i`'s MD5 digest repeated, as the Rust bench's loads do
    (distinct per row, so payloads do not all compress to the same thing)."""
    digest = hashlib.md5(str(i).encode()).digest()
    return (digest * (size // 16 + 1))[:size]


async def enqueue_round(queries: Queries, first: int, count: int, size: int) -> None:
    """Enqueues `count` jobs to ENTRYPOINT with pgqueuer's batch enqueue (lists of
    entrypoints, payloads and priorities), ENQUEUE_CHUNK jobs a call."""
    for start in range(first, first + count, ENQUEUE_CHUNK):
        n = min(ENQUEUE_CHUNK, first + count - start)
        ids = await queries.enqueue(
            [ENTRYPOINT] * n,
            [payload(i, size) for i in range(start, start + n)],
            [0] * n,
        )
        if len(ids) != n:
            raise Failure(f"enqueue of {n} jobs returned {len(ids)} ids")


async def drain_round(
    dsn: str, workers: int, batch: int, expected: int
) -> tuple[float, list[int]]:
    """Drains the queue with `workers` new QueueManagers on new connections; returns the
    seconds from just before they start until they have all returned, and the jobs each
    one ran.

    How acknowledgements are known to be committed before the clock stops: pgqueuer
    buffers completions in a JobStatusLogBuffer (flushed every `batch` jobs or 0.1 s) and
    writes them with one statement that DELETEs the jobs from the queue table and INSERTs
    their log rows. QueueManager.run(mode=drain) returns only once the queue holds no
    queued job and its own tasks have finished, and on the way out it leaves the buffer's
    context, whose __aexit__ flushes what is left (asyncpg runs each statement in
    autocommit, so a flushed completion is committed). The clock stops when every
    manager's run() has returned. Since that last flush is best-effort (a failed one is
    only logged), the caller then checks, outside the clock, that the entrypoint ran
    `expected` times and the queue table holds no job at all (every earlier round left it
    empty too, so none of this round's jobs is left unacknowledged).
    """
    processed = [0] * workers

    def noop(worker: int):  # noqa: ANN202 - the entrypoint for one consumer
        async def entrypoint(job: Job) -> None:
            processed[worker] += 1

        return entrypoint

    # Connected and registered before the clock starts, as our drain child connects
    # before its clock: the round measures draining, not connecting.
    connections: list[asyncpg.Connection] = []
    try:
        for w in range(workers):
            connections.append(
                await asyncpg.connect(
                    dsn, server_settings={"application_name": f"pgq-bench consumer {w}"}
                )
            )
        managers = []
        for w, connection in enumerate(connections):
            manager = QueueManager(Queries.from_asyncpg_connection(connection))
            manager.entrypoint(ENTRYPOINT)(noop(w))
            managers.append(manager)
        started = time.perf_counter()
        async with asyncio.timeout(ROUND_BUDGET_S):
            async with asyncio.TaskGroup() as group:
                for manager in managers:
                    group.create_task(
                        manager.run(batch_size=batch, mode=QueueExecutionMode.drain)
                    )
        elapsed = time.perf_counter() - started
    except TimeoutError:
        raise Failure(f"a round did not drain within {ROUND_BUDGET_S:.0f} s") from None
    except ExceptionGroup as failures:
        first = failures.exceptions[0]
        raise Failure(f"a consumer failed: {type(first).__name__}: {first}") from first
    finally:
        for connection in connections:
            await connection.close()
    if sum(processed) != expected:
        raise Failure(f"the entrypoint ran {sum(processed)} times for {expected} jobs")
    return elapsed, processed


async def hold_snapshot(dsn: str) -> asyncpg.Connection:
    """A connection with a repeatable-read transaction open and its snapshot taken."""
    holder = await asyncpg.connect(
        dsn, server_settings={"application_name": "pgq-bench held snapshot"}
    )
    await holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
    await holder.fetchval("SELECT 1")
    return holder


async def dead_rows(admin: asyncpg.Connection, table: str) -> int | None:
    """The table's n_dead_tup, counters flushed first where the server can (PG 15+)."""
    try:
        if await admin.fetchval(
            "SELECT to_regproc('pg_catalog.pg_stat_force_next_flush') IS NOT NULL"
        ):
            await admin.execute("SELECT pg_stat_force_next_flush()")
        value = await admin.fetchval(
            "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = $1::regclass", table
        )
    except asyncpg.PostgresError as why:
        log(f"no dead row count for {table}: {why}")
        return None
    return None if value is None else int(value)


async def run(args: argparse.Namespace, version: str) -> dict[str, object]:
    admin = await asyncpg.connect(
        args.dsn, server_settings={"application_name": "pgq-bench admin"}
    )
    holder: asyncpg.Connection | None = None
    try:
        queries = Queries.from_asyncpg_connection(admin)
        if await queries.schema_is_installed():
            raise Failure("pgqueuer's schema is already in this database: give an empty one")
        await queries.install()
        names = queries.qbe.settings.qualified
        queue_table, log_table = names.queue_table, names.queue_table_log
        log(f"pgqueuer {version} installed: queue table {queue_table}, log {log_table}")

        if args.held:
            holder = await hold_snapshot(args.dsn)
            log("repeatable-read snapshot held open on another connection")

        started = time.perf_counter()
        rates: list[float] = []
        loaded = 0
        while time.perf_counter() - started < args.seconds or len(rates) < 2:
            t = time.perf_counter()
            await enqueue_round(queries, loaded, args.round, args.payload_bytes)
            loaded += args.round
            enqueue_s = time.perf_counter() - t

            elapsed, split = await drain_round(args.dsn, args.workers, args.batch, args.round)
            left = await admin.fetchval(f"SELECT count(*) FROM {queue_table}")
            if left:
                raise Failure(f"{left} jobs still in {queue_table} after the round drained")
            rates.append(args.round / elapsed)

            t = time.perf_counter()
            # VACUUM cannot run inside a transaction block: one statement each.
            await admin.execute(f"VACUUM {queue_table}")
            await admin.execute(f"VACUUM {log_table}")
            vacuum_s = time.perf_counter() - t
            log(
                f"round {len(rates)}: {args.round} jobs drained in {elapsed:.3f} s "
                f"({rates[-1]:.0f}/s, per consumer {'/'.join(map(str, split))}); "
                f"enqueue {enqueue_s:.3f} s, vacuum {vacuum_s:.3f} s"
            )
        seconds = time.perf_counter() - started

        dead = await dead_rows(admin, queue_table)
        log(f"dead rows: {queue_table} {dead}, {log_table} {await dead_rows(admin, log_table)}")
        return {
            "queue": "pgqueuer",
            "version": version,
            "held": bool(args.held),
            "seconds": seconds,
            "round_entries": args.round,
            "rounds_per_s": rates,
            "dead_rows": dead,
        }
    finally:
        if holder is not None:
            await holder.close()
        await admin.close()


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsn", required=True, help="postgres:// URL of an empty database")
    parser.add_argument("--seconds", type=float, required=True, help="how long to run rounds")
    parser.add_argument("--round", type=int, required=True, help="jobs per round")
    parser.add_argument("--payload-bytes", type=int, required=True, help="bytes per payload")
    parser.add_argument("--workers", type=int, default=2, help="consumers per round")
    parser.add_argument("--batch", type=int, default=100, help="dequeue batch size")
    parser.add_argument(
        "--held", action="store_true", help="hold a repeatable-read snapshot open throughout"
    )
    args = parser.parse_args()
    for name in ("round", "workers", "batch"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.payload_bytes < 0 or args.seconds < 0:
        parser.error("--payload-bytes and --seconds must not be negative")
    return args


def main() -> int:
    args = arguments()
    from importlib.metadata import version as installed_version

    version = installed_version("pgqueuer")
    # Nothing but the result line goes to stdout: anything else printing there (a
    # library's log handler, say) is sent to stderr for the run.
    stdout, sys.stdout = sys.stdout, sys.stderr
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    # `pgq run` runs its workers on uvloop when it is installed (a pgqueuer dependency).
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    try:
        result = runner(run(args, version))
    except Failure as why:
        log(f"failed: {why}")
        return 1
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as why:
        log(f"failed: {type(why).__name__}: {why}")
        return 1
    except Exception as why:  # anything else from pgqueuer: still a clear failure
        log(f"failed: {type(why).__name__}: {why}")
        return 1
    finally:
        sys.stdout = stdout
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
