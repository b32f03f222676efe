//! What `outbox stats` and `outbox ui` show of routes that fail: the deferred entries a
//! drain held for a failing route, grouped by route, read from the first page of deferred
//! entries (the oldest), so the read costs a page, not the table.

use outbox_core::drain::{route_holds, RouteHold};
use outbox_core::{AdminClaimStore, EmissionStatus, ListRequest, Result};

/// How many deferred entries are read to find the held ones.
const PAGE: u32 = 500;

/// The routes held entries wait for.
#[derive(Debug, Default)]
pub(crate) struct Holds {
    /// Each route, how many of the entries read it holds, and its latest error.
    pub(crate) routes: Vec<(RouteHold, u64, String)>,
    /// Whether more deferred entries were left unread (the counts are then at least).
    pub(crate) more: bool,
}

/// Reads the holds of `store`'s oldest deferred entries.
pub(crate) async fn read(store: &dyn AdminClaimStore) -> Result<Holds> {
    let page = store
        .list(&ListRequest::new(EmissionStatus::Deferred, PAGE))
        .await?;
    Ok(Holds {
        routes: route_holds(&page),
        more: page.len() >= PAGE as usize,
    })
}

impl Holds {
    /// A count as shown: `500+` when more were left unread.
    pub(crate) fn shown(&self, n: u64) -> String {
        if self.more {
            format!("{n}+")
        } else {
            n.to_string()
        }
    }

    /// One line per route, for `outbox stats`; nothing when no route holds entries.
    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        for (hold, n, error) in &self.routes {
            out.push_str(&format!(
                "{:<18} {:>10}  {} ({}): {error}\n",
                "held for a route",
                self.shown(*n),
                hold.fault.as_str(),
                hold.destination,
            ));
        }
        out
    }

    /// The routes as JSON: kind, destination, entries (at least, when `more`), last error.
    pub(crate) fn json(&self) -> serde_json::Value {
        let routes: Vec<_> = self
            .routes
            .iter()
            .map(|(hold, n, error)| {
                serde_json::json!({
                    "kind": hold.fault.as_str(),
                    "destination": hold.destination,
                    "entries": n,
                    "at_least": self.more,
                    "last_error": error,
                })
            })
            .collect();
        serde_json::Value::Array(routes)
    }
}
