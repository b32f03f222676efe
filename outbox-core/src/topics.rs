//! What is live per topic: the dashboard overview's by-topic table.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::{EmissionStatus, ListRequest, OutboxAdmin, OutboxError, Result};

/// The most topics one call returns.
pub const MAX_TOPICS: u32 = 10_000;

/// What is live in one topic: its entries per status (every status but delivered, which
/// is the history) and its oldest pending entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TopicStats {
    /// The topic.
    pub topic: String,
    /// Entries per status; every status but delivered is present, zero included.
    pub counts: BTreeMap<EmissionStatus, u64>,
    /// Creation time of the topic's oldest pending entry.
    pub oldest_pending_created_at: Option<DateTime<Utc>>,
}

impl TopicStats {
    /// A topic with nothing counted yet.
    pub fn new(topic: String) -> Self {
        Self {
            topic,
            counts: EmissionStatus::ALL
                .into_iter()
                .filter(|s| *s != EmissionStatus::Delivered)
                .map(|s| (s, 0))
                .collect(),
            oldest_pending_created_at: None,
        }
    }

    /// Entries with `status`.
    pub fn count(&self, status: EmissionStatus) -> u64 {
        self.counts.get(&status).copied().unwrap_or(0)
    }

    /// Entries not delivered yet, whatever their status.
    pub fn live(&self) -> u64 {
        self.counts.values().sum()
    }
}

/// One group a store read: `n` entries of `topic` in `status`, the oldest created at
/// `oldest` (read for pending entries; ignored for the others).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicGroup {
    /// The topic.
    pub topic: String,
    /// The status (never delivered).
    pub status: EmissionStatus,
    /// How many entries.
    pub n: u64,
    /// The oldest entry's creation time.
    pub oldest: Option<DateTime<Utc>>,
}

impl TopicGroup {
    /// A group as a statement returns it: the status as its stored code, the count as a
    /// signed integer. A code no status has, delivered, or a negative count is an error.
    pub fn read(topic: String, status: i64, n: i64, oldest: Option<DateTime<Utc>>) -> Result<Self> {
        let bad = |what: String| OutboxError::Database {
            message: format!("topic stats of {topic:?}: {what}"),
            source: None,
        };
        let status = EmissionStatus::from_code(status)
            .filter(|s| *s != EmissionStatus::Delivered)
            .ok_or_else(|| bad(format!("status code {status} is not a live status")))?;
        let n = u64::try_from(n).map_err(|_| bad(format!("negative count {n}")))?;
        Ok(Self {
            topic,
            status,
            n,
            oldest,
        })
    }
}

/// Checks the most topics a caller asks for: 1 up to [`MAX_TOPICS`].
pub fn check_topic_limit(limit: u32) -> Result<()> {
    if limit == 0 || limit > MAX_TOPICS {
        return Err(OutboxError::invalid(
            "limit",
            format!("must be 1 up to {MAX_TOPICS} topics, got {limit}"),
        ));
    }
    Ok(())
}

/// The topics of `groups` (as a store read them: the first error is returned), those
/// with the most live entries first (then by name), at most `limit` of them.
pub fn topic_stats_of(
    groups: impl IntoIterator<Item = Result<TopicGroup>>,
    limit: u32,
) -> Result<Vec<TopicStats>> {
    let mut topics: BTreeMap<String, TopicStats> = BTreeMap::new();
    for g in groups {
        let g = g?;
        let t = topics
            .entry(g.topic.clone())
            .or_insert_with(|| TopicStats::new(g.topic));
        *t.counts.entry(g.status).or_insert(0) += g.n;
        if g.status == EmissionStatus::Pending {
            t.oldest_pending_created_at = match (t.oldest_pending_created_at, g.oldest) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
    }
    let mut out: Vec<TopicStats> = topics.into_values().collect();
    out.sort_by(|a, b| b.live().cmp(&a.live()).then_with(|| a.topic.cmp(&b.topic)));
    out.truncate(limit as usize);
    Ok(out)
}

/// The statuses a topic's live entries are in: every one but delivered.
fn live_statuses() -> impl Iterator<Item = EmissionStatus> {
    EmissionStatus::ALL
        .into_iter()
        .filter(|s| *s != EmissionStatus::Delivered)
}

/// Entries read per page by [`by_listing`], largest first: a store whose batch maximum
/// refuses one is asked for the next.
const PAGES: [u32; 4] = [500, 100, 10, 1];

/// [`OutboxAdmin::topic_stats`] for a store without a statement of its own: pages
/// through every live status with [`OutboxAdmin::list`] and counts (the cost of what is
/// live, in pages of up to 500). The pages are read one after the other, not in one
/// snapshot: an entry that moves between statuses meanwhile may be counted twice or not
/// at all.
pub async fn by_listing<S: OutboxAdmin + ?Sized>(store: &S, limit: u32) -> Result<Vec<TopicStats>> {
    check_topic_limit(limit)?;
    let mut page_size = PAGES[0];
    for size in PAGES {
        page_size = size;
        match store
            .list(&ListRequest::new(EmissionStatus::Pending, size))
            .await
        {
            Err(e) if e.is_invalid_input() && size > 1 => continue,
            Err(e) => return Err(e),
            Ok(_) => break,
        }
    }
    let mut groups = Vec::new();
    for status in live_statuses() {
        let mut req = ListRequest::new(status, page_size);
        loop {
            let page = store.list(&req).await?;
            for e in &page {
                groups.push(Ok(TopicGroup {
                    topic: e.topic.clone(),
                    status,
                    n: 1,
                    oldest: Some(e.created_at),
                }));
            }
            match page.last() {
                Some(last) if page.len() == page_size as usize => req.after = Some(last.id),
                _ => break,
            }
        }
    }
    topic_stats_of(groups, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(topic: &str, status: EmissionStatus, n: u64, secs: i64) -> TopicGroup {
        TopicGroup {
            topic: topic.into(),
            status,
            n,
            oldest: DateTime::from_timestamp(secs, 0),
        }
    }

    #[test]
    fn topics_sum_their_groups_and_the_busiest_come_first() {
        let stats = topic_stats_of(
            [
                group("b", EmissionStatus::Pending, 2, 20),
                group("a", EmissionStatus::DeadLettered, 1, 5),
                group("b", EmissionStatus::Pending, 1, 10),
                group("c", EmissionStatus::Failed, 3, 1),
            ]
            .map(Ok),
            2,
        )
        .unwrap();
        assert_eq!(stats.len(), 2, "cut at the limit");
        assert_eq!(stats[0].topic, "b");
        assert_eq!(stats[0].count(EmissionStatus::Pending), 3);
        assert_eq!(
            stats[0].oldest_pending_created_at,
            DateTime::from_timestamp(10, 0)
        );
        assert_eq!(stats[1].topic, "c", "three live beat one");
        assert_eq!(
            stats[1].oldest_pending_created_at, None,
            "only pending ages count"
        );
        assert_eq!(stats[1].counts.len(), 5, "every live status, zero included");
    }

    #[test]
    fn a_group_with_a_stored_code_that_is_not_live_is_an_error() {
        assert!(
            TopicGroup::read("t".into(), 1, 1, None).is_err(),
            "delivered"
        );
        assert!(TopicGroup::read("t".into(), 9, 1, None).is_err());
        assert!(TopicGroup::read("t".into(), 0, -1, None).is_err());
        let g = TopicGroup::read("t".into(), 5, 2, None).unwrap();
        assert_eq!((g.status, g.n), (EmissionStatus::DeadLettered, 2));
    }

    #[tokio::test]
    async fn the_default_pages_within_a_small_batch_maximum() {
        use crate::{NewEntry, OutboxStore, StoreLimits};
        let limits = StoreLimits::default().with_max_batch_size(7).unwrap();
        let store = crate::MemoryClaimStore::new().with_limits(limits);
        let entries = (0..25)
            .map(|i| NewEntry::new(if i < 20 { "busy" } else { "quiet" }, vec![1]))
            .collect::<Vec<_>>();
        for chunk in entries.chunks(5) {
            store.enqueue_batch(chunk.to_vec()).await.unwrap();
        }
        let stats = by_listing(&store, 10).await.unwrap();
        let pending: Vec<(&str, u64)> = stats
            .iter()
            .map(|t| (t.topic.as_str(), t.count(EmissionStatus::Pending)))
            .collect();
        assert_eq!(pending, [("busy", 20), ("quiet", 5)]);
    }

    #[test]
    fn a_limit_of_none_or_too_many_topics_is_refused() {
        assert!(check_topic_limit(0).unwrap_err().is_invalid_input());
        assert!(check_topic_limit(MAX_TOPICS + 1)
            .unwrap_err()
            .is_invalid_input());
        assert!(check_topic_limit(1).is_ok());
    }
}
