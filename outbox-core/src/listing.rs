//! The statements of an operator's listing, one per status.
//!
//! A listing reads one status through the index that holds that status alone (a partial
//! or filtered index on most engines). A planner uses such an index only when the status
//! is written into the statement, not bound as a parameter (a prepared statement's
//! generic plan, SQLite, SQL Server's filtered indexes), so a store renders its listing
//! once per status at build time and picks the statement by the request's status.
//!
//! Live statuses page in creation order. Delivered rows are the history: their page
//! starts at the most recent delivery and goes back, through the index retention already
//! keeps by delivery time (see [`crate::ListRequest`]).

use crate::EmissionStatus;

/// The text a live listing template holds where the status code goes.
pub const STATUS_PLACEHOLDER: &str = "{status}";

/// The text a live listing template holds where the codes of the statuses indexed with
/// that status go: `0` for pending, `2, 3, 4, 5` for the parked statuses, the predicates
/// of the engines' pending and parked indexes. A template that also says
/// `status IN ({status_group})` lets a planner that matches a partial index's predicate
/// only term by term (SQLite) see that the index holds the status.
pub const STATUS_GROUP_PLACEHOLDER: &str = "{status_group}";

/// The text a live listing template holds where the lowest code of the statuses indexed
/// with that status goes: `0` for pending, `2` for the parked statuses (an engine whose
/// parked index's predicate is `status >= 2` writes `status >= {status_floor}`).
pub const STATUS_FLOOR_PLACEHOLDER: &str = "{status_floor}";

/// The lowest code of the statuses indexed together with `status`.
fn status_floor(status: EmissionStatus) -> &'static str {
    status_group(status).split(',').next().unwrap_or("0")
}

/// The codes of the statuses indexed together with `status` (see
/// [`STATUS_GROUP_PLACEHOLDER`]).
fn status_group(status: EmissionStatus) -> &'static str {
    match status {
        EmissionStatus::Pending => "0",
        EmissionStatus::Delivered => "1",
        _ => "2, 3, 4, 5",
    }
}

/// One rendered listing statement per status.
#[derive(Debug, Clone)]
pub struct ListStatements {
    by_code: Vec<String>,
}

impl ListStatements {
    /// `live` (with [`STATUS_PLACEHOLDER`] where the status code goes, and
    /// [`STATUS_GROUP_PLACEHOLDER`] where its index's statuses go) for every status but
    /// delivered, `delivered` for delivered; each through `render` (the table's
    /// names and the engine's other placeholders).
    pub fn render(live: &str, delivered: &str, render: impl Fn(&str) -> String) -> Self {
        let by_code = EmissionStatus::ALL
            .into_iter()
            .map(|status| match status {
                EmissionStatus::Delivered => render(delivered),
                other => render(
                    &live
                        .replace(STATUS_PLACEHOLDER, &other.code().to_string())
                        .replace(STATUS_GROUP_PLACEHOLDER, status_group(other))
                        .replace(STATUS_FLOOR_PLACEHOLDER, status_floor(other)),
                ),
            })
            .collect();
        Self { by_code }
    }

    /// The statement that lists `status`.
    pub fn get(&self, status: EmissionStatus) -> &str {
        let at = EmissionStatus::ALL
            .iter()
            .position(|s| *s == status)
            .expect("every status is in ALL");
        &self.by_code[at]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_live_status_gets_its_code_and_delivered_its_own_template() {
        let s = ListStatements::render(
            "live {status} in ({status_group}) from {status_floor} of {t}",
            "history of {t}",
            |sql| sql.replace("{t}", "outbox"),
        );
        assert_eq!(
            s.get(EmissionStatus::Pending),
            "live 0 in (0) from 0 of outbox"
        );
        assert_eq!(
            s.get(EmissionStatus::DeadLettered),
            "live 5 in (2, 3, 4, 5) from 2 of outbox"
        );
        assert_eq!(s.get(EmissionStatus::Delivered), "history of outbox");
        assert_eq!(
            s.get(EmissionStatus::RetryableFailure),
            "live 4 in (2, 3, 4, 5) from 2 of outbox"
        );
    }
}
