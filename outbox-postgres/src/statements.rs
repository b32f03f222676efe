//! The SQL of every operation, loaded from `sql/` and rendered once for one table.

use outbox_core::store_kit::sql::SliceForms;
use outbox_core::TableName;

/// Every statement the store runs, with the table name substituted.
#[derive(Debug)]
pub(crate) struct Statements {
    pub(crate) claim: SliceForms,
    pub(crate) claim_ordered: String,
    pub(crate) complete_batch: String,
    pub(crate) renew: String,
    pub(crate) get: String,
    pub(crate) find_pending: String,
    pub(crate) find_retry_ready: String,
    pub(crate) save: String,
    pub(crate) prune_delivered: String,
    pub(crate) clock: String,
    pub(crate) copy_in: String,
    pub(crate) notify: String,
    pub(crate) shared_starts: String,
}

impl Statements {
    /// Renders every template for `table`. Identifiers were validated by [`TableName`];
    /// values are never substituted, only bound.
    pub(crate) fn render(table: &TableName) -> Self {
        Self {
            claim: by_slice(table, &with_share(include_str!("../sql/claim.sql"))),
            claim_ordered: table.render(&with_share(include_str!("../sql/claim_ordered.sql"))),
            complete_batch: table.render(include_str!("../sql/complete_batch.sql")),
            renew: table.render(include_str!("../sql/renew.sql")),
            get: table.render(include_str!("../sql/get.sql")),
            find_pending: table.render(include_str!("../sql/find_pending.sql")),
            find_retry_ready: table.render(include_str!("../sql/find_retry_ready.sql")),
            save: table.render(include_str!("../sql/save.sql")),
            prune_delivered: table.render(include_str!("../sql/prune_delivered.sql")),
            clock: include_str!("../sql/clock.sql").to_owned(),
            copy_in: table.render(include_str!("../sql/copy_in.sql")),
            notify: include_str!("../sql/notify.sql").to_owned(),
            shared_starts: table.render(include_str!("../sql/shared_starts.sql")),
        }
    }
}

/// A claim's template with its leading share of where the store's claims start
/// (`claim_share.sql`) in place of its `{claim_share}` line.
fn with_share(template: &str) -> String {
    template.replace("{claim_share}", include_str!("../sql/claim_share.sql"))
}

/// A claim in two forms (see [`SliceForms`]): of every slice (the template's
/// `{slice_args}` line left out: the function without slice arguments) and of one slice
/// (the line kept: the function with them).
fn by_slice(table: &TableName, template: &str) -> SliceForms {
    SliceForms::render(table, template, " {slice_args}", "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placeholder_is_substituted() {
        let table = TableName::in_schema("app", "events").unwrap();
        let s = Statements::render(&table);
        for (sql, function) in [
            (s.claim.pick(false), "claim"),
            (s.claim.pick(true), "claim"),
            (&s.claim_ordered, "claim_runs"),
            (&s.complete_batch, "complete_batch"),
            (&s.renew, "renew"),
        ] {
            assert!(
                sql.contains(&format!("\"app\".\"events_{function}\"(")),
                "{sql}"
            );
            assert!(!sql.contains('{'), "unrendered placeholder in {sql}");
        }
        for sql in [
            &s.get,
            &s.find_pending,
            &s.find_retry_ready,
            &s.save,
            &s.prune_delivered,
            &s.copy_in,
        ] {
            assert!(!sql.contains('{'), "unrendered placeholder in {sql}");
            assert!(sql.contains("\"app\".\"events\""), "{sql}");
        }
        for sql in [
            &s.shared_starts,
            s.claim.pick(false),
            s.claim.pick(true),
            &s.claim_ordered,
        ] {
            assert!(sql.contains("\"app\".\"events_claim_starts\""), "{sql}");
        }
    }

    /// A claim of every slice leaves the slice arguments out, one of a slice passes them;
    /// both claims pass the start of their pending walk before them. The ordered claim
    /// always passes them (NULL for every slice), then the run.
    #[test]
    fn claims_pass_the_slice_only_when_they_have_one() {
        let s = Statements::render(&TableName::default());
        assert!(
            s.claim_ordered.contains(
                "$8::timestamptz, $9::uuid, $10::boolean,\n                                        \
                 $18::bigint, $19::bigint, $20::bigint)"
            ),
            "{}",
            s.claim_ordered
        );
        let (last_unsliced, slice_args) = ("$10::boolean", "$18::bigint, $19::bigint");
        let every = s.claim.pick(false);
        let after = &every[every.find(last_unsliced).expect(every) + last_unsliced.len()..];
        assert!(!after.contains('$'), "{every}");
        let one = s.claim.pick(true);
        assert!(one.contains(&format!("{last_unsliced}\n")), "{one}");
        assert!(one.contains(slice_args), "{one}");
        let after = &one[one.find(slice_args).unwrap() + slice_args.len()..];
        assert!(!after.contains('$'), "{one}");
    }

    /// Both claims that walk from a start price out whole-table plans and cap the claim
    /// attempt count below the column's maximum.
    #[test]
    fn claims_from_a_start_keep_the_plan_settings() {
        let definition = include_str!("../definitions/claim.sql");
        let bodies: Vec<&str> = definition
            .split("CREATE OR REPLACE FUNCTION")
            .filter(|body| body.contains("_claim\"("))
            .collect();
        assert_eq!(bodies.len(), 2);
        for body in bodies {
            for setting in [
                "enable_sort",
                "enable_bitmapscan",
                "enable_seqscan",
                "enable_hashjoin",
                "enable_mergejoin",
                "jit",
            ] {
                assert!(body.contains(&format!("SET {setting} = off")), "{setting}");
            }
            assert!(body.contains("LEAST(t.claim_attempt_count, 2147483646) + 1"));
            assert!(body.contains("(t.created_at, t.id) >= ("), "{body}");
        }
    }

    #[test]
    fn claims_use_the_locked_cte_form_never_in_subquery() {
        // Two functions (every slice, one slice), each of three walks (retry-ready,
        // pending ahead of the start, pending behind it), each walk a locked CTE.
        let function = outbox_core::store_kit::sql::without_lines_naming(
            include_str!("../definitions/claim.sql"),
            "--",
        );
        assert_eq!(function.matches("CREATE OR REPLACE FUNCTION").count(), 2);
        assert_eq!(function.matches("AS MATERIALIZED").count(), 6, "{function}");
        assert_eq!(function.matches("FOR UPDATE SKIP LOCKED").count(), 6);
        assert!(!function.contains("IN (SELECT"), "{function}");
        // The plan must not hang on statistics: no sort, no bitmap, no sequential scan.
        for setting in ["enable_sort", "enable_bitmapscan", "enable_seqscan"] {
            assert!(
                function.contains(&format!("SET {setting} = off")),
                "{setting}"
            );
        }
        let s = Statements::render(&TableName::default());
        assert!(
            s.claim.pick(false).contains("\"outbox_claim\"("),
            "{}",
            s.claim.pick(false)
        );
    }

    /// Statistics choose none of the hot plans: the claim loses hash and merge joins too,
    /// and completion and renewal run in functions that allow only per-row lookups.
    #[test]
    fn hot_statements_price_out_whole_table_plans() {
        let settings = include_str!("../migrations/0003_plans_without_statistics.up.sql");
        let alter = &settings[settings.find("ALTER FUNCTION").unwrap()..];
        let alter = &alter[..alter.find(';').unwrap()];
        for setting in ["enable_hashjoin", "enable_mergejoin", "jit"] {
            assert!(alter.contains(&format!("SET {setting} = off")), "{alter}");
        }
        // Without hash joins a join of two CTEs is batch × batch: each UPDATE joins one
        // batch's rows by id (the completion its input, the renewal the rows it locked).
        for (function, body, join) in [
            (
                "complete_batch",
                include_str!("../definitions/complete_batch.sql"),
                "FROM input AS i\n    WHERE t.id = i.id",
            ),
            (
                "renew",
                include_str!("../definitions/renew.sql"),
                "FROM locked AS l\n    WHERE t.id = l.id",
            ),
        ] {
            let body = &body[..body.find("\nEND\n").unwrap()];
            for setting in [
                "enable_seqscan",
                "enable_bitmapscan",
                "enable_hashjoin",
                "enable_mergejoin",
                "jit",
            ] {
                assert!(body.contains(&format!("SET {setting} = off")), "{function}");
            }
            // Plans are cached per connection (an SQL function is planned on every call).
            assert!(body.contains("LANGUAGE plpgsql"), "{function}");
            assert!(body.contains(join), "{function}");
            // The refused rows are read without a join of two CTEs.
            assert!(!body.contains("NOT EXISTS"), "{function}");
        }
    }
}
