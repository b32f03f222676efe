//! What the stores draining one table tell each other about their walks, through the
//! database: a store that starts (a new process, a restarted one, one more worker) takes
//! the start the running stores learned instead of walking every dead index entry from
//! the beginning of the pending index to learn it.
//!
//! A store crate keeps the views in a small table of its own, one row per view shared,
//! never updated (so no chain of versions grows while a snapshot is held), old ones pruned
//! now and then by the share itself. It reads the newest view of every kind when the store is
//! built and hands them to [`super::ClaimStarts::told`]; a claim carries the view
//! [`super::ClaimStarts::walk`] gives it, when one is due, into its own statement, so a
//! claim stays one statement and one round trip.
//!
//! Each view a store shares is its own and whole: its start, and the walk from the
//! beginning that start follows from. A store that takes a view walks exactly as the store
//! that shared it would have, so a row that becomes claimable behind the start waits no
//! longer than the policy in [`super`] allows.

use std::time::Duration;

use uuid::Uuid;

use super::PendingKey;
use crate::ClaimRequest;

/// How often, at most, a store shares a start that has moved (besides right after a
/// costly walk from the beginning).
pub const SHARE_EVERY: Duration = Duration::from_secs(1);

/// One store's view of a kind of claim's walks, as shared through the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedStart {
    /// The store that shared it (each [`super::ClaimStarts`] has an id of its own).
    pub sharer: Uuid,
    /// The oldest pending key the store's last claim of the kind took.
    pub from: PendingKey,
    /// How long ago, by the database's clock when read, the store's last walk that covered
    /// the beginning of the index started.
    pub full_age: Duration,
    /// How long after its start that walk holds the next walk from the beginning back: zero
    /// unless it was costly.
    pub hold_back: Duration,
}

/// A view for a claim to share: the kind it is shared under (see [`kind_label`]), the
/// view, and whether the same statement prunes the kind's old shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Share {
    /// The kind of claim.
    pub kind: String,
    /// The view.
    pub view: SharedStart,
    /// Whether to delete the kind's shares made 256 or more shares of the table ago (the
    /// newest always stays).
    pub prune: bool,
}

impl Share {
    /// The view's age in whole microseconds, as the tables store it (saturating).
    pub fn full_age_micros(&self) -> i64 {
        micros(self.view.full_age)
    }

    /// The hold-back in whole microseconds (saturating).
    pub fn hold_back_micros(&self) -> i64 {
        micros(self.view.hold_back)
    }
}

fn micros(d: Duration) -> i64 {
    i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
}

/// The text a kind of claim is shared under: `ordered/` for a claim in per-key order, its
/// slice (`all`, or `index/count`), a `|`, then its topic (empty for every topic; a
/// claim's topic is never empty). Unique per kind: the part before the topic holds no `|`,
/// and a slice starts with a digit or `all`, never with `ordered`.
pub fn kind_label(req: &ClaimRequest) -> String {
    let slice = req.slice.map_or_else(
        || "all".to_owned(),
        |s| format!("{}/{}", s.index(), s.count()),
    );
    let order = if req.ordered { "ordered/" } else { "" };
    format!(
        "{order}{slice}|{}",
        req.topic.as_deref().unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;

    use super::*;
    use crate::Slice;

    #[test]
    fn every_kind_has_its_own_label() {
        let req = ClaimRequest::new("w", 1, TimeDelta::seconds(30));
        let slice = Slice::new(1, 4).unwrap();
        let labels = [
            kind_label(&req),
            kind_label(&req.clone().topic("orders")),
            kind_label(&req.clone().slice(slice)),
            kind_label(&req.clone().topic("orders").slice(slice)),
            kind_label(&req.clone().topic("a|b")),
            kind_label(&req.clone().in_key_order()),
            kind_label(&req.clone().in_key_order().topic("orders").slice(slice)),
        ];
        assert_eq!(labels[0], "all|");
        assert_eq!(labels[3], "1/4|orders");
        assert_eq!(labels[5], "ordered/all|");
        assert_eq!(labels[6], "ordered/1/4|orders");
        let unique: std::collections::HashSet<_> = labels.iter().collect();
        assert_eq!(unique.len(), labels.len(), "{labels:?}");
    }

    #[test]
    fn durations_are_stored_in_microseconds_saturating() {
        let share = Share {
            kind: "all|".into(),
            prune: false,
            view: SharedStart {
                sharer: Uuid::nil(),
                from: (chrono::Utc::now(), Uuid::nil()),
                full_age: Duration::from_micros(2_500_001),
                hold_back: Duration::MAX,
            },
        };
        assert_eq!(share.full_age_micros(), 2_500_001);
        assert_eq!(share.hold_back_micros(), i64::MAX);
    }
}
