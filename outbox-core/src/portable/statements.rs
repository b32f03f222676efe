//! The portable store's SQL, loaded from `sql/portable/` and rendered once per store:
//! table name, entry columns, the backend's clock expression and its placeholder style.
//! Values are never put into the text; they are always bound.

use crate::store_kit::sql::FilterForms;
use crate::TableName;

use super::backend::{Dialect, Placeholders};

/// Every column of an entry, in the order the backends decode them by name.
const ENTRY_COLUMNS: &str = "id, topic, partition_key, payload, headers, status, created_at, \
     updated_at, not_before, next_retry_at, attempt_count, last_error, dead_letter_reason, \
     delivered_at, provider_message_id, claim_owner, claim_token, claimed_at, \
     claim_expires_at, claim_attempt_count, stamp";

/// The rendered statements of one store.
#[derive(Debug, Clone)]
pub(crate) struct Statements {
    pub(crate) probe_table: String,
    pub(crate) clock: String,
    pub(crate) claim_pending_candidates: Forms,
    pub(crate) claim_retry_candidates: Forms,
    pub(crate) read_entry: String,
    pub(crate) claim_row: String,
    pub(crate) complete_row: String,
    pub(crate) save_row: String,
    pub(crate) renew_row: String,
    pub(crate) store_slice_hash: String,
    pub(crate) find_pending: Forms,
    pub(crate) find_retry_ready: Forms,
    pub(crate) insert_entry: String,
    pub(crate) prune_delivered: String,
    pub(crate) stats: String,
    pub(crate) oldest_pending: String,
    pub(crate) dead_letters: String,
    pub(crate) requeue: String,
    pub(crate) list_entries: String,
    pub(crate) list_delivered: String,
    pub(crate) count_delivered_before: String,
    pub(crate) purge: String,
}

impl Statements {
    /// Renders every template for `table` in an engine's `dialect`.
    pub(crate) fn render(table: &TableName, dialect: &Dialect) -> Self {
        let r = |template: &str| {
            let sql = table
                .render_in(template, dialect.quotes)
                .replace("{columns}", ENTRY_COLUMNS)
                .replace("{now}", dialect.db_now)
                .replace("{materialized}", dialect.materialized)
                .replace("{bigint}", dialect.bigint);
            match dialect.placeholders {
                Placeholders::Question => sql,
                Placeholders::Dollar => number_placeholders(&sql),
            }
        };
        Self {
            probe_table: r(include_str!("../../sql/portable/probe_table.sql")),
            clock: r(include_str!("../../sql/portable/clock.sql")),
            claim_pending_candidates: forms(
                include_str!("../../sql/portable/claim_pending_candidates.sql"),
                r,
            ),
            claim_retry_candidates: forms(
                include_str!("../../sql/portable/claim_retry_candidates.sql"),
                r,
            ),
            read_entry: r(include_str!("../../sql/portable/read_entry.sql")),
            claim_row: r(include_str!("../../sql/portable/claim_row.sql")),
            complete_row: r(include_str!("../../sql/portable/complete_row.sql")),
            save_row: r(include_str!("../../sql/portable/save_row.sql")),
            renew_row: r(include_str!("../../sql/portable/renew_row.sql")),
            store_slice_hash: r(include_str!("../../sql/portable/store_slice_hash.sql")),
            find_pending: forms(include_str!("../../sql/portable/find_pending.sql"), r),
            find_retry_ready: forms(include_str!("../../sql/portable/find_retry_ready.sql"), r),
            insert_entry: r(include_str!("../../sql/portable/insert_entry.sql")),
            prune_delivered: r(include_str!("../../sql/portable/prune_delivered.sql")),
            stats: r(include_str!("../../sql/portable/stats.sql")),
            oldest_pending: r(include_str!("../../sql/portable/oldest_pending.sql")),
            dead_letters: r(include_str!("../../sql/portable/dead_letters.sql")),
            requeue: r(include_str!("../../sql/portable/requeue.sql")),
            list_entries: r(include_str!("../../sql/portable/list_entries.sql")),
            list_delivered: r(include_str!("../../sql/portable/list_delivered.sql")),
            count_delivered_before: r(include_str!(
                "../../sql/portable/count_delivered_before.sql"
            )),
            purge: r(include_str!("../../sql/portable/purge.sql")),
        }
    }
}

/// A claim's or find's statement in the forms a request picks, with the portable
/// store's own filters (`slice_filter.sql`, `key_order_filter.sql`).
pub(crate) type Forms = FilterForms;

fn forms(template: &str, r: impl Fn(&str) -> String) -> Forms {
    FilterForms::render(
        template,
        include_str!("../../sql/portable/slice_filter.sql"),
        include_str!("../../sql/portable/key_order_filter.sql"),
        r,
    )
}

/// Rewrites each `?` outside string literals, quoted identifiers and comments to `$1`,
/// `$2`, … in order of appearance.
fn number_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0u32;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                out.push(c);
                for inner in chars.by_ref() {
                    out.push(inner);
                    if inner == c {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                out.push(c);
                for inner in chars.by_ref() {
                    out.push(inner);
                    if inner == '\n' {
                        break;
                    }
                }
            }
            '?' => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EmissionStatus;

    #[test]
    fn placeholders_are_numbered_outside_literals_and_comments() {
        assert_eq!(
            number_placeholders("-- why?\nSELECT '?', \"a?\" FROM t WHERE a = ? AND b = ?"),
            "-- why?\nSELECT '?', \"a?\" FROM t WHERE a = $1 AND b = $2"
        );
    }

    fn dialect(placeholders: Placeholders, quotes: crate::Quotes) -> Dialect {
        Dialect {
            placeholders,
            quotes,
            db_now: "now()",
            materialized: "MATERIALIZED",
            bigint: "BIGINT",
        }
    }

    #[test]
    fn templates_render_with_no_marker_left() {
        let table = TableName::in_schema("app", "outbox").unwrap();
        for style in [Placeholders::Question, Placeholders::Dollar] {
            let s = Statements::render(&table, &dialect(style, crate::Quotes::DOUBLE));
            for sql in [
                s.claim_pending_candidates.pick(true, true),
                &s.read_entry,
                &s.insert_entry,
            ] {
                assert!(!sql.contains('{'), "{sql}");
                assert!(sql.contains("\"app\".\"outbox\""), "{sql}");
                assert_eq!(sql.contains('?'), style == Placeholders::Question, "{sql}");
            }
        }
        let s = Statements::render(
            &table,
            &dialect(Placeholders::Dollar, crate::Quotes::DOUBLE),
        );
        assert!(s.complete_row.contains("stamp = $13"), "{}", s.complete_row);
        let s = Statements::render(
            &table,
            &dialect(Placeholders::Question, crate::Quotes::BACKTICKS),
        );
        assert!(s.read_entry.contains("`app`.`outbox`"), "{}", s.read_entry);
    }

    /// The templates spell status codes as literals so partial indexes apply.
    #[test]
    fn status_literals_in_templates_match_the_codes() {
        assert_eq!(EmissionStatus::Pending.code(), 0);
        assert_eq!(EmissionStatus::Delivered.code(), 1);
        assert_eq!(EmissionStatus::Deferred.code(), 2);
        assert_eq!(EmissionStatus::RetryableFailure.code(), 4);
        assert_eq!(EmissionStatus::DeadLettered.code(), 5);
    }
}
