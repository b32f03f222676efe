//! Offline checks of every statement, run on every machine (no SQL Server is needed): parameters numbered and bound in order, the lock
//! hints and OUTPUT shapes the claim model depends on, the column types the driver
//! binds against, and a syntax smoke test with sqlparser's SQL Server dialect.

use std::collections::BTreeSet;

use chrono::{TimeDelta, TimeZone, Utc};
use outbox_core::store_kit::admin::ListStatements;
use outbox_core::{
    Claim, ClaimRequest, Completion, CompletionRequest, DeadLetterSelection, EmissionResult,
    EmissionStatus, FindRequest, ListRequest, NewEntry, OutboxEntry, PruneRequest, RenewRequest,
    TableName,
};
use sqlparser::dialect::MsSqlDialect;
use sqlparser::parser::Parser;

use outbox_sqlserver::offline::params::{self, Kind, Params};
use outbox_sqlserver::offline::render;
use outbox_sqlserver::offline::statements::{self, Spec, Statements, ALL};

mod admin_reads;
mod claims;

/// A claimed entry with a key and a header, at a time with microseconds.
fn sample() -> OutboxEntry {
    let at =
        Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0).unwrap() + TimeDelta::microseconds(123_456);
    let mut e = OutboxEntry::from_new(
        NewEntry::new("orders", b"{\"n\":1}".to_vec())
            .partition_key("customer-7")
            .header("trace", "abc"),
        at,
    );
    e.claim_owner = Some("worker-1".into());
    e.claim_token = Some(uuid::Uuid::new_v4());
    e.claimed_at = Some(at);
    e.claim_expires_at = Some(at + TimeDelta::seconds(30));
    e.claim_attempt_count = 1;
    e
}

/// The `@Pn` numbers a statement uses (outside comments).
fn numbers_used(sql: &str) -> BTreeSet<usize> {
    let code: String = sql
        .lines()
        .map(|l| l.split("--").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("@P") {
        let digits: String = rest[i + 2..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(n) = digits.parse() {
            found.insert(n);
        }
        rest = &rest[i + 2..];
    }
    found
}

fn comments(sql: &str) -> String {
    sql.lines()
        .filter(|l| l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_statement_uses_exactly_its_declared_parameters_and_documents_them() {
    for spec in ALL {
        let used = numbers_used(spec.template);
        let declared: BTreeSet<usize> = (1..=spec.params.len()).collect();
        assert_eq!(used, declared, "{}: @P numbers used vs declared", spec.file);
        let header = comments(spec.template);
        for n in declared {
            assert!(
                header.contains(&format!("@P{n}")),
                "{}: the header does not describe @P{n}",
                spec.file
            );
        }
    }
}

fn kinds(params: &Params) -> Vec<Kind> {
    params
        .iter()
        .map(|p| Kind::of(p).unwrap_or_else(|| panic!("{p:?} has no kind")))
        .collect()
}

fn declared(spec: Spec) -> Vec<Kind> {
    spec.params.iter().map(|(_, k)| *k).collect()
}

#[test]
fn every_builder_binds_the_declared_kinds_in_order() {
    let claim = Claim::from_claimed_entry(sample()).unwrap();
    let req = ClaimRequest::new("w", 10, TimeDelta::seconds(30)).topic("t");
    let completion =
        CompletionRequest::new(claim.clone(), Completion::Delivered(EmissionResult::new()));
    let now = Some(Utc::now());
    let cases: Vec<(Spec, Params)> = vec![
        (
            statements::CLAIM,
            params::claim(
                &req,
                outbox_core::store_kit::claims::ClaimGroups::RETRY_READY,
                outbox_core::store_kit::claims::WalkStart {
                    from: Some((Utc::now(), uuid::Uuid::new_v4())),
                    behind: true,
                },
                Some(&outbox_core::store_kit::claims::Share {
                    kind: "all|".into(),
                    prune: true,
                    view: outbox_core::store_kit::claims::SharedStart {
                        sharer: uuid::Uuid::new_v4(),
                        from: (Utc::now(), uuid::Uuid::new_v4()),
                        full_age: std::time::Duration::from_micros(2_500_001),
                        hold_back: std::time::Duration::from_millis(40),
                    },
                }),
            )
            .unwrap(),
        ),
        (
            statements::COMPLETE_BATCH,
            params::complete(&[completion]).unwrap(),
        ),
        (
            statements::RENEW,
            params::renew(
                std::slice::from_ref(&claim),
                &RenewRequest::new(TimeDelta::seconds(5)),
            )
            .unwrap(),
        ),
        (statements::SAVE, params::save(&claim.entry, now).unwrap()),
        (statements::GET, params::get(claim.id())),
        (
            statements::FIND_PENDING,
            params::find(&FindRequest::new(5)).unwrap(),
        ),
        (
            statements::FIND_RETRY_READY,
            params::find(&FindRequest::new(5)).unwrap(),
        ),
        (
            statements::PRUNE_DELIVERED,
            params::prune(&PruneRequest {
                delivered_before: Utc::now(),
                batch_size: 100,
            })
            .unwrap(),
        ),
        (statements::STATS, params::stats(now)),
        (statements::LIVE_STATS, params::stats(now)),
        (statements::DEAD_LETTERS, params::dead_letters(10).unwrap()),
        (
            statements::LIST,
            params::list(&ListRequest::new(EmissionStatus::Failed, 10)).unwrap(),
        ),
        (
            statements::LIST_DELIVERED,
            params::list(&ListRequest::new(EmissionStatus::Delivered, 10)).unwrap(),
        ),
        (
            statements::PURGE,
            params::purge(
                &DeadLetterSelection::Topic("t".into()),
                1000,
                EmissionStatus::Failed,
            ),
        ),
        (
            statements::REQUEUE,
            params::requeue(
                now,
                &DeadLetterSelection::One(claim.id()),
                EmissionStatus::Failed,
            ),
        ),
        (
            statements::COUNT_DELIVERED_BEFORE,
            params::count_delivered_before(Utc::now()),
        ),
    ];
    for (spec, params) in &cases {
        assert_eq!(kinds(params), declared(*spec), "{}", spec.file);
    }
    let checked: BTreeSet<&str> = cases.iter().map(|(s, _)| s.file).collect();
    for spec in ALL {
        assert!(
            checked.contains(spec.file) || spec.params.is_empty(),
            "{} has parameters but no builder check",
            spec.file
        );
    }
}

#[test]
fn no_statement_outputs_rows_straight_to_the_client() {
    // OUTPUT without INTO fails on a table with triggers (error 334).
    for spec in ALL {
        for line in spec
            .template
            .lines()
            .filter(|l| l.trim_start().starts_with("OUTPUT "))
        {
            assert!(line.contains(" INTO @"), "{}: {line}", spec.file);
        }
    }
}

#[test]
fn guarded_writes_check_owner_and_token_under_locks_held_to_the_end() {
    for spec in [statements::COMPLETE_BATCH, statements::RENEW] {
        let sql = spec.template;
        assert!(
            sql.contains(
                "FROM {table} AS t WITH (UPDLOCK, ROWLOCK, FORCESEEK)\nJOIN @input AS i ON i.id = t.id"
            ),
            "{}",
            spec.file
        );
        assert!(sql.contains("t.status NOT IN (1, 5)"), "{}", spec.file);
        assert!(sql.contains("t.claim_owner = i.owner"), "{}", spec.file);
        assert!(
            sql.contains("DATALENGTH(t.claim_owner) = DATALENGTH(i.owner)"),
            "{}: `=` ignores trailing spaces",
            spec.file
        );
        assert!(sql.contains("t.claim_token = i.token"), "{}", spec.file);
        assert!(sql.contains("FROM OPENJSON(@P1) WITH ("), "{}", spec.file);
        assert!(
            sql.contains("id binary(16) NOT NULL PRIMARY KEY")
                || sql.contains("id                  binary(16)       NOT NULL PRIMARY KEY"),
            "{}: the input is keyed by id",
            spec.file
        );
    }
    let save = statements::SAVE.template;
    assert!(save.contains("AND t.stamp = @P2"));
    assert!(save.contains("WITH (UPDLOCK, ROWLOCK, FORCESEEK)"));
}

#[test]
fn transactions_are_balanced_and_abort_on_error() {
    for spec in ALL {
        let sql = spec.template;
        let begins = sql.matches("BEGIN TRANSACTION;").count();
        assert_eq!(
            begins,
            sql.matches("COMMIT TRANSACTION;").count(),
            "{}",
            spec.file
        );
        if begins > 0 {
            assert!(sql.contains("SET XACT_ABORT ON;"), "{}", spec.file);
        }
    }
}

#[test]
fn background_deletes_and_requeues_skip_locked_rows_and_yield_in_a_deadlock() {
    for spec in [
        statements::PRUNE_DELIVERED,
        statements::PURGE,
        statements::REQUEUE,
    ] {
        assert!(
            spec.template.contains("WITH (ROWLOCK, READPAST)"),
            "{}",
            spec.file
        );
        assert!(
            spec.template.contains("SET DEADLOCK_PRIORITY LOW;"),
            "{}",
            spec.file
        );
    }
}

#[test]
fn text_columns_are_nvarchar_and_times_are_microseconds() {
    let migration = include_str!("../../migrations/0001_create_outbox.up.sql");
    let code: String = migration
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n");
    let lower = code.to_ascii_lowercase();
    assert!(
        !lower.contains(" varchar") && !lower.contains(" char(") && !lower.contains(" text"),
        "a non-unicode text column"
    );
    assert!(
        !lower.contains("datetime ") && !lower.contains("datetimeoffset"),
        "times are datetime2(6)"
    );
    assert_eq!(lower.matches("datetime2(6)").count(), 8);
    // Filtered indexes on the claimable states, keyed in claim order.
    assert!(code.contains("ON {table} (created_at, id)") && code.contains("WHERE status = 0;"));
    assert!(
        code.contains("ON {table} (retry_due_at, id)") && code.contains("WHERE status IN (2, 4);")
    );
    assert!(code.contains("PRIMARY KEY NONCLUSTERED (id)"));
    // Topics and owners compare by code point, whatever the database's collation.
    for column in ["topic ", "claim_owner "] {
        let line = code
            .lines()
            .find(|l| l.trim_start().starts_with(column))
            .unwrap();
        assert!(line.contains("COLLATE Latin1_General_100_BIN2"), "{line}");
    }
    assert!(code.contains("CREATE UNIQUE CLUSTERED INDEX [{name}_seq_cx] ON {table} (seq)"));
}

/// What sqlparser cannot parse yet, replaced by the nearest form it can; what these
/// replace is checked by the tests above instead.
/// The newest share of each kind is read by the clustered key, newest first.
#[test]
fn shared_starts_are_read_newest_first_and_written_outside_the_claim() {
    let migration = include_str!("../../migrations/0003_shared_claim_starts.up.sql");
    assert!(migration.contains("PRIMARY KEY CLUSTERED (kind, seq)"));
    let read = statements::SHARED_STARTS.template;
    assert!(
        read.contains("ROW_NUMBER() OVER (PARTITION BY c.kind ORDER BY c.seq DESC)"),
        "{read}"
    );
    // A claim shares outside its transaction, pruning by the kind's exact length too.
    let claim = statements::CLAIM.template;
    let share = claim.find("IF @P15 IS NOT NULL").expect("the share");
    assert!(share < claim.find("BEGIN TRANSACTION;").unwrap());
    assert!(claim.contains("AND DATALENGTH(kind) = DATALENGTH(@P15)"));
}

fn parseable(sql: &str) -> String {
    let mut in_exec = false;
    sql.lines()
        .map(|l| {
            // A statement run as dynamic SQL (CREATE FUNCTION, which must open its batch):
            // checked by the_slice_hash_function_is_quoted_whole instead.
            if l.starts_with("EXEC (N'") {
                in_exec = true;
            }
            if in_exec {
                in_exec = l != "');";
                return String::new();
            }
            if l == "OPTION (RECOMPILE);" {
                // A query hint sqlparser does not read: checked by
                // listings_name_their_status_and_start_at_the_cursor.
                return ";".to_owned();
            }
            if l.trim_start().starts_with("OUTPUT ") {
                // The clause goes; a statement it ended still ends.
                if l.trim_end().ends_with(';') { ";" } else { "" }.to_owned()
            } else {
                l.replace("DELETE TOP (@P2)", "DELETE")
                    .replace("CREATE UNIQUE CLUSTERED INDEX", "CREATE UNIQUE INDEX")
                    // A computed column: checked by keys_and_slices_as_the_claim_needs.
                    .replace(
                        "ADD key_hash AS CAST(HASHBYTES('SHA2_256', partition_key) AS binary(32))",
                        "ADD key_hash binary(32)",
                    )
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_statement_parses_as_t_sql() {
    let table = TableName::in_schema("app", "events").unwrap();
    let rendered = Statements::render(&table);
    let mut sources: Vec<(String, String)> = ALL
        .iter()
        .filter(|s| s.file != "enqueue.sql")
        .map(|s| (s.file.to_owned(), render_spec(&table, *s)))
        .collect();
    sources.push(("enqueue.sql (3 rows)".into(), rendered.enqueue(3)));
    for m in outbox_sqlserver::migrations() {
        sources.push((format!("migration {} up", m.version), render(&table, m.up)));
        sources.push((
            format!("migration {} down", m.version),
            render(&table, m.down),
        ));
    }
    for (file, sql) in [
        (
            "session.sql",
            include_str!("../../sql/session.sql").replace("{lock_timeout_ms}", "10000"),
        ),
        (
            "isolation.sql",
            include_str!("../../sql/isolation.sql").to_owned(),
        ),
        (
            "migrations/create_bookkeeping.sql",
            render(
                &table,
                include_str!("../../sql/migrations/create_bookkeeping.sql"),
            ),
        ),
        (
            "migrations/bookkeeping_columns.sql",
            render(
                &table,
                include_str!("../../sql/migrations/bookkeeping_columns.sql"),
            ),
        ),
        (
            "migrations/add_bookkeeping_columns.sql",
            render(
                &table,
                include_str!("../../sql/migrations/add_bookkeeping_columns.sql"),
            ),
        ),
        (
            "migrations/recorded_version.sql",
            render(
                &table,
                include_str!("../../sql/migrations/recorded_version.sql"),
            ),
        ),
        (
            "migrations/recorded_window.sql",
            render(
                &table,
                include_str!("../../sql/migrations/recorded_window.sql"),
            ),
        ),
        (
            "migrations/applied.sql",
            render(&table, include_str!("../../sql/migrations/applied.sql")),
        ),
        (
            "migrations/record.sql",
            render(&table, include_str!("../../sql/migrations/record.sql")),
        ),
        (
            "migrations/create_definitions.sql",
            render(
                &table,
                include_str!("../../sql/migrations/create_definitions.sql"),
            ),
        ),
        (
            "migrations/recorded_definitions.sql",
            render(
                &table,
                include_str!("../../sql/migrations/recorded_definitions.sql"),
            ),
        ),
        (
            "migrations/record_definition.sql",
            render(
                &table,
                include_str!("../../sql/migrations/record_definition.sql"),
            ),
        ),
        (
            "migrations/drop_definitions.sql",
            render(
                &table,
                include_str!("../../sql/migrations/drop_definitions.sql"),
            ),
        ),
        (
            "migrations/forget.sql",
            render(&table, include_str!("../../sql/migrations/forget.sql")),
        ),
    ] {
        sources.push((file.into(), sql));
    }
    sources.push((
        "migration script".into(),
        outbox_sqlserver::migration_script(&table),
    ));
    for (file, sql) in sources {
        if let Err(e) = Parser::parse_sql(&MsSqlDialect {}, &parseable(&sql)) {
            panic!("{file} does not parse: {e}\n{sql}");
        }
    }
}

/// The slice hash function is created by `EXEC (N'…')`: its text holds no quote that
/// would end the literal early, opens with CREATE FUNCTION, closes every block it opens,
/// and a claim calls it by the name it creates.
#[test]
fn the_slice_hash_function_is_quoted_whole() {
    let migration = include_str!("../../migrations/0002_keys_and_slices.up.sql");
    let start = migration.find("EXEC (N'\n").expect("the EXEC block") + "EXEC (N'\n".len();
    let end = migration[start..].find("\n');").expect("its end") + start;
    let body = &migration[start..end];
    assert!(!body.contains('\''), "a quote inside the literal");
    assert!(body.starts_with("CREATE FUNCTION {schema_prefix}[{name}_slice_hash] ("));
    let words: Vec<&str> = body
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .collect();
    let count = |w: &str| words.iter().filter(|x| **x == w).count();
    assert_eq!(count("BEGIN"), count("END"), "unbalanced blocks");
    assert_eq!(
        statements::CLAIM
            .template
            .matches("{schema_prefix}[{name}_slice_hash](t.partition_key, t.id)")
            .count(),
        3,
        "one per read: retry-ready, pending ahead of the start, pending behind it"
    );
}

/// Migration 2 gives the ordered claim what it seeks in: the key hash it names, the key
/// index on it in creation order, and the columns the claim judges a key's rows by.
#[test]
fn keys_and_slices_as_the_claim_needs() {
    let migration = include_str!("../../migrations/0002_keys_and_slices.up.sql");
    assert!(migration.contains(
        "ALTER TABLE {table} ADD key_hash AS CAST(HASHBYTES('SHA2_256', partition_key) AS binary(32));"
    ));
    assert!(migration.contains(
        "CREATE INDEX [{name}_key_ix] ON {table} (key_hash, created_at, id)\n    INCLUDE (status, claim_expires_at);"
    ));
    let sql = statements::CLAIM.template;
    assert_eq!(
        sql.matches("FROM {table} AS k WITH (READCOMMITTEDLOCK, INDEX([{name}_key_ix]))")
            .count(),
        3
    );
    assert_eq!(sql.matches("WHERE k.key_hash = t.key_hash").count(), 3);
}

#[test]
fn the_statements_sqlparser_cannot_read_are_known() {
    // EXEC with named arguments (sp_getapplock) is beyond sqlparser 0.59; the lock is
    // exercised by the migration tests against a server.
    let lock = include_str!("../../sql/migrations/lock.sql");
    assert!(
        Parser::parse_sql(&MsSqlDialect {}, lock).is_err(),
        "migrations/lock.sql parses now: add it to the smoke test"
    );
    assert!(lock.contains("@LockOwner = 'Transaction'"));
}

#[test]
fn portable_statements_number_their_parameters_in_turn_and_parse() {
    let table = TableName::default();
    let sql = outbox_sqlserver::offline::portable_statements(&table);
    for (file, text) in sql {
        let used = numbers_used(&text);
        let expected: BTreeSet<usize> = (1..=used.len()).collect();
        assert_eq!(
            used, expected,
            "{file}: parameters are not numbered @P1..@Pn"
        );
        for n in &used {
            assert!(
                comments(&text).contains(&format!("@P{n}")),
                "{file}: @P{n} is not described"
            );
        }
        assert!(
            !text.contains("UPDLOCK") && !text.contains("READPAST"),
            "{file}: the portable path uses no hints"
        );
        if let Err(e) = Parser::parse_sql(&MsSqlDialect {}, &text) {
            panic!("{file} does not parse: {e}\n{text}");
        }
    }
}

/// `spec` rendered for `table` as the store renders it; a listing as the listing of one
/// live status (failed), the others unchanged by that.
fn render_spec(table: &TableName, spec: Spec) -> String {
    ListStatements::render(spec.template, spec.template, |t| render(table, t))
        .get(EmissionStatus::Failed)
        .to_owned()
}

#[test]
fn rendered_statements_leave_no_placeholder() {
    let table = TableName::in_schema("app", "events").unwrap();
    let rendered = Statements::render(&table);
    let texts = ALL
        .iter()
        .filter(|s| s.file != "enqueue.sql")
        .map(|s| (s.file, render_spec(&table, *s)))
        .chain([("enqueue.sql", rendered.enqueue(2))]);
    for (file, text) in texts {
        assert!(!text.contains('{') && !text.contains('}'), "{file}: {text}");
    }
}
