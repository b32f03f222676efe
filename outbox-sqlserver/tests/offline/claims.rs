//! The claim batch: the lock hints, walks and OUTPUT shape the claim model depends on, and
//! the key runs taken behind the heads.

use super::*;

#[test]
fn claims_lock_skip_and_output_as_the_claim_model_needs() {
    let sql = statements::CLAIM.template;
    assert_eq!(
        sql.matches(
            "WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK, INDEX([{name}_retry_ix]))"
        )
        .count(),
        1,
        "{sql}"
    );
    assert_eq!(
        sql.matches(
            "WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK, INDEX([{name}_pending_ix]))"
        )
        .count(),
        2,
        "{sql}"
    );
    // The hinted indexes exist, filtered on exactly the states their reads ask for.
    let migration = include_str!("../../migrations/0001_create_outbox.up.sql");
    assert!(migration.contains("CREATE INDEX [{name}_pending_ix] ON {table} (created_at, id)"));
    assert!(migration.contains("CREATE INDEX [{name}_retry_ix] ON {table} (retry_due_at, id)"));
    assert_eq!(sql.matches("SELECT TOP (@room) t.*").count(), 4);
    assert_eq!(sql.matches("ORDER BY t.retry_due_at, t.id").count(), 1);
    assert_eq!(sql.matches("ORDER BY t.created_at, t.id").count(), 2);
    // Three walks and the key runs behind their heads.
    assert_eq!(
        sql.matches("UPDATE c\n").count(),
        4,
        "updates go through the ordered CTE"
    );
    assert_eq!(
        sql.matches("claim_token = NEWID()").count(),
        4,
        "a fresh token per row"
    );
    assert_eq!(sql.matches("stamp = NEWID()").count(), 4);
    assert_eq!(
        sql.matches("THEN claim_attempt_count + 1 ELSE 2147483647 END")
            .count(),
        4
    );
    assert_eq!(
        sql.matches("OUTPUT inserted.id INTO @claimed (id);")
            .count(),
        4
    );
    // Eligibility on the locked row: status, due time, lease expiry, topic.
    for predicate in [
        "t.status IN (2, 4)",
        "t.status = 0",
        "t.retry_due_at <= @now",
        "(t.not_before IS NULL OR t.not_before <= @now)",
        "(t.claim_expires_at IS NULL OR t.claim_expires_at <= @now)",
        "(@P2 IS NULL OR (t.topic = @P2 AND DATALENGTH(t.topic) = DATALENGTH(@P2)))",
    ] {
        assert!(sql.contains(predicate), "{predicate}");
    }
    // The pending walk ahead seeks to the start given (@P12, @P13); the walk behind it
    // runs only with a start, for the room the walk ahead left.
    for predicate in [
        "AND t.created_at >= COALESCE(@P12, CAST('0001-01-01' AS datetime2(6)))",
        "AND (@P12 IS NULL OR t.created_at > @P12 OR t.id >= @P13)",
        "AND @P12 IS NOT NULL\n      AND @P14 = 1",
        "AND t.created_at <= @P12",
        "AND (t.created_at < @P12 OR t.id < @P13)",
    ] {
        assert_eq!(sql.matches(predicate).count(), 1, "{predicate}");
    }
    let ahead = sql.find("t.id >= @P13").unwrap();
    let behind = sql.find("t.id < @P13").unwrap();
    let room_left = sql[ahead..behind]
        .matches("SET @room = @room - @@ROWCOUNT;")
        .count();
    assert_eq!(
        room_left, 1,
        "the walk behind gets what the walk ahead left"
    );
    assert!(
        sql.contains("COALESCE(@P1, SYSUTCDATETIME())"),
        "the server's clock unless told"
    );
    assert!(
        !sql.contains(" IN (SELECT"),
        "never the IN (SELECT TOP …) form"
    );
}

/// Key runs: only in per-key order with runs above one, for the room the heads left; behind
/// each keyed head one range of the key index in key order, no longer than the run, cut at
/// the first row that may not be taken; the rows update-locked without READPAST (waited
/// for, so a run has no gap) and judged again on the locked row, runs in head order.
#[test]
fn key_runs_follow_their_heads_in_one_range_of_the_key_index() {
    let sql = statements::CLAIM.template;
    let step = &sql[sql
        .find("IF @P11 = 1 AND @P23 > 1 AND @room > 0")
        .expect("the run step")..];
    let step = &step[..step.find("\nEND;").expect("its end")];
    assert!(
        sql.find("IF @P11 = 1 AND @P23 > 1").unwrap() > sql.rfind("t.id < @P13").unwrap(),
        "runs come after every walk of heads"
    );
    for part in [
        "JOIN {table} AS h ON h.id = c.id",
        "WHERE h.partition_key IS NOT NULL",
        "CROSS APPLY (",
        "SELECT TOP (@P23 - 1) f.id,",
        "FROM {table} AS f WITH (READCOMMITTEDLOCK, INDEX([{name}_key_ix]))",
        "WHERE f.key_hash = hd.key_hash",
        "AND f.partition_key = hd.partition_key COLLATE Latin1_General_100_BIN2",
        "AND f.created_at >= hd.created_at",
        "AND (f.created_at > hd.created_at OR f.id > hd.id)",
        "ORDER BY f.created_at, f.id) AS n",
        "MIN(n.takeable) OVER (ORDER BY n.step ROWS UNBOUNDED PRECEDING) AS unbroken",
        "WHERE b.unbroken = 1",
        "SELECT TOP (@room) t.*",
        "JOIN {table} AS t WITH (UPDLOCK, ROWLOCK, READCOMMITTEDLOCK) ON t.id = b.id",
        "AND (t.not_before IS NULL OR t.not_before <= @now)",
        "AND (t.claim_expires_at IS NULL OR t.claim_expires_at <= @now)",
        "ORDER BY b.head_order, b.step",
    ] {
        assert!(step.contains(part), "{part}");
    }
    assert!(!step.contains("READPAST"), "a run's rows are waited for");
    // The takeable judgement: pending, due, unleased, of the topic.
    for predicate in [
        "CASE WHEN f.status = 0",
        "AND (f.not_before IS NULL OR f.not_before <= @now)",
        "AND (f.claim_expires_at IS NULL OR f.claim_expires_at <= @now)",
        "AND (@P2 IS NULL OR (f.topic = @P2",
    ] {
        assert!(step.contains(predicate), "{predicate}");
    }
    // The key index holds what a run's range reads in order.
    let keys = include_str!("../../migrations/0002_keys_and_slices.up.sql");
    assert!(keys.contains("CREATE INDEX [{name}_key_ix] ON {table} (key_hash, created_at, id)"));
}
