//! The operator's reads of many entries: listings page by page (by status, topic and
//! partition key, delivered newest first) and the by-topic picture, with the requeue and
//! purge of one topic they lead to.

use outbox_core::{
    Completion, CompletionRequest, DeadLetterSelection, EmissionResult, EmissionStatus, EntryId,
    ListRequest,
};

use super::{as_claim_store, one_of_each, AdminStore};
use crate::fixtures::*;

/// Listing pages through one status in creation order, with a topic filter and a cursor.
pub async fn list_pages_through_one_status(store: AdminStore) {
    let rows = one_of_each(&store).await;
    let page = |status, limit, after| {
        let store = store.clone();
        async move {
            let mut req = ListRequest::new(status, limit);
            req.after = after;
            ids(&store.list(&req).await.unwrap())
        }
    };
    assert_eq!(
        page(EmissionStatus::Pending, 2, None).await,
        vec![rows[0], rows[1]]
    );
    assert_eq!(
        page(EmissionStatus::Pending, 2, Some(rows[1])).await,
        vec![rows[8]]
    );
    assert!(page(EmissionStatus::Pending, 2, Some(rows[8]))
        .await
        .is_empty());
    assert_eq!(
        page(EmissionStatus::DeadLettered, 10, None).await,
        vec![rows[6], rows[7]]
    );
    assert_eq!(page(EmissionStatus::Failed, 10, None).await, vec![rows[5]]);
    assert!(
        page(EmissionStatus::Pending, 10, Some(EntryId::new()))
            .await
            .is_empty(),
        "an unknown cursor gives an empty page"
    );
    let topic = store.get(rows[0]).await.unwrap().unwrap().topic;
    let mut req = ListRequest::new(EmissionStatus::Pending, 10);
    req.topic = Some(topic);
    assert_eq!(store.list(&req).await.unwrap().len(), 3);
    req.topic = Some("no-such-topic".into());
    assert!(store.list(&req).await.unwrap().is_empty());
    let zero = ListRequest::new(EmissionStatus::Pending, 0);
    assert!(store.list(&zero).await.unwrap_err().is_invalid_input());
    let mut blank = ListRequest::new(EmissionStatus::Pending, 10);
    blank.partition_key = Some(" ".into());
    assert!(store.list(&blank).await.unwrap_err().is_invalid_input());
}

/// A listing filtered by partition key shows only that key's entries, in every status,
/// delivered included.
pub async fn list_filters_by_partition_key(store: AdminStore) {
    let s = as_claim_store(&store);
    let keys = ["k1", "k2", "k1", "k1"];
    let entries = keys
        .iter()
        .zip(0i64..)
        .map(|(k, i)| new_entry(i - 10).partition_key(*k))
        .collect();
    let rows = s.enqueue_batch(entries).await.unwrap();
    let claims = s.claim_pending(&claim_req("w", 2, at(0))).await.unwrap();
    let delivered = claims
        .iter()
        .map(|c| {
            CompletionRequest::new(c.clone(), Completion::Delivered(EmissionResult::new()))
                .at(at(1))
        })
        .collect();
    s.complete_batch(delivered).await.unwrap();
    let keyed = |status, key: &str| {
        let store = store.clone();
        let key = key.to_owned();
        async move {
            let mut req = ListRequest::new(status, 10);
            req.partition_key = Some(key);
            ids(&store.list(&req).await.unwrap())
        }
    };
    assert_eq!(
        keyed(EmissionStatus::Pending, "k1").await,
        vec![rows[2].id, rows[3].id]
    );
    assert_eq!(
        keyed(EmissionStatus::Delivered, "k1").await,
        vec![rows[0].id]
    );
    assert_eq!(
        keyed(EmissionStatus::Delivered, "k2").await,
        vec![rows[1].id]
    );
    assert!(keyed(EmissionStatus::Pending, "k2").await.is_empty());
    assert!(keyed(EmissionStatus::Pending, "none").await.is_empty());
}

/// Delivered entries page from the most recent delivery back; entries delivered at the
/// same instant come in one order on every page (none twice, none skipped), and a cursor
/// that is not a delivered entry gives an empty page.
pub async fn list_pages_delivered_newest_first(store: AdminStore) {
    let s = as_claim_store(&store);
    let rows = seed(&s, 5).await;
    let claims = s.claim_pending(&claim_req("w", 5, at(-100))).await.unwrap();
    assert_eq!(claims.len(), 5);
    let by_id = |id: EntryId| claims.iter().find(|c| c.entry.id == id).unwrap().clone();
    let deliver = |i: usize, secs: i64| {
        CompletionRequest::new(
            by_id(rows[i].id),
            Completion::Delivered(EmissionResult::new()),
        )
        .at(at(secs))
    };
    s.complete_batch(vec![
        deliver(0, -50),
        deliver(1, -40),
        deliver(2, -30),
        deliver(3, -30),
    ])
    .await
    .unwrap();
    let page = |limit, after| {
        let store = store.clone();
        async move {
            let mut req = ListRequest::new(EmissionStatus::Delivered, limit);
            req.after = after;
            ids(&store.list(&req).await.unwrap())
        }
    };
    let first = page(2, None).await;
    let mut newest = first.clone();
    newest.sort();
    let mut tied = vec![rows[2].id, rows[3].id];
    tied.sort();
    assert_eq!(newest, tied, "the two delivered last come first");
    assert_eq!(page(2, Some(first[1])).await, vec![rows[1].id, rows[0].id]);
    assert!(page(2, Some(rows[0].id)).await.is_empty());
    // One at a time: every delivered entry once, in the order of the full page.
    let mut walked = Vec::new();
    let mut after = None;
    loop {
        let one = page(1, after).await;
        let Some(id) = one.first().copied() else {
            break;
        };
        walked.push(id);
        after = Some(id);
        assert!(walked.len() <= 4, "the walk does not end: {walked:?}");
    }
    assert_eq!(walked, page(10, None).await);
    assert_eq!(walked[2..], [rows[1].id, rows[0].id]);
    assert!(
        page(10, Some(rows[4].id)).await.is_empty(),
        "a leased entry is no cursor into the delivered history"
    );
    let mut req = ListRequest::new(EmissionStatus::Delivered, 10);
    req.topic = Some(rows[0].topic.clone());
    let same_topic = rows[..4]
        .iter()
        .filter(|e| e.topic == rows[0].topic)
        .count();
    assert_eq!(store.list(&req).await.unwrap().len(), same_topic);
    req.topic = Some("no-such-topic".into());
    assert!(store.list(&req).await.unwrap().is_empty());
}

/// The by-topic picture counts each topic's live entries by status and its oldest pending
/// entry, busiest topic first, never the delivered ones; a requeue or purge of one topic
/// touches only that topic's entries; a bad topic or limit is refused and changes nothing.
pub async fn topics_are_counted_requeued_and_purged_apart(store: AdminStore) {
    let s = as_claim_store(&store);
    let entries = (0..7)
        .map(|i: i64| {
            let topic = if i < 3 { "a" } else { "b" };
            outbox_core::NewEntry::new(topic, vec![b'x']).created_at(at(i - 10))
        })
        .collect();
    let rows = s.enqueue_batch(entries).await.unwrap();
    let claims = s.claim_pending(&claim_req("w", 7, at(0))).await.unwrap();
    assert_eq!(claims.len(), 7);
    let complete = |i: usize, c: Completion| {
        let claim = claims.iter().find(|c| c.entry.id == rows[i].id).unwrap();
        CompletionRequest::new(claim.clone(), c).at(at(1))
    };
    let dead = || Completion::DeadLettered {
        error: boom(),
        reason: None,
    };
    s.complete_batch(vec![
        complete(0, Completion::Delivered(EmissionResult::new())),
        complete(1, dead()),
        complete(3, dead()),
        complete(4, dead()),
        complete(
            5,
            Completion::Failed {
                error: boom(),
                next_retry: None,
            },
        ),
        complete(6, Completion::Release { reason: None }),
    ])
    .await
    .unwrap();
    // Row 2 stays leased: pending, counted as pending.
    let topics = store.topic_stats(10).await.unwrap();
    let names: Vec<&str> = topics.iter().map(|t| t.topic.as_str()).collect();
    assert_eq!(names, ["b", "a"], "the busiest topic first");
    let (b, a) = (&topics[0], &topics[1]);
    assert_eq!(
        (
            b.count(EmissionStatus::Pending),
            b.count(EmissionStatus::DeadLettered),
            b.count(EmissionStatus::Failed),
            b.live()
        ),
        (1, 2, 1, 4)
    );
    assert_eq!(b.oldest_pending_created_at, Some(rows[6].created_at));
    assert_eq!(
        (
            a.count(EmissionStatus::Pending),
            a.count(EmissionStatus::DeadLettered),
            a.live()
        ),
        (1, 1, 2),
        "the delivered entry is not live"
    );
    assert_eq!(a.oldest_pending_created_at, Some(rows[2].created_at));
    assert!(!a.counts.contains_key(&EmissionStatus::Delivered));
    assert_eq!(store.topic_stats(1).await.unwrap().len(), 1);
    assert!(store.topic_stats(0).await.unwrap_err().is_invalid_input());

    let bad = DeadLetterSelection::Topic(" ".into());
    let err = store
        .requeue(
            &outbox_core::RequeueRequest::new(EmissionStatus::DeadLettered, bad.clone()).at(at(2)),
        )
        .await
        .unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
    assert!(store
        .purge(&outbox_core::PurgeRequest::new(
            EmissionStatus::DeadLettered,
            bad
        ))
        .await
        .unwrap_err()
        .is_invalid_input());
    let by_topic = |topic: &str| DeadLetterSelection::Topic(topic.into());
    let requeued = store
        .requeue(
            &outbox_core::RequeueRequest::new(EmissionStatus::DeadLettered, by_topic("a"))
                .at(at(2)),
        )
        .await
        .unwrap();
    assert_eq!(requeued, 1, "only topic a's dead letter");
    assert_eq!(
        store.get(rows[1].id).await.unwrap().unwrap().status,
        EmissionStatus::Pending
    );
    let purged = store
        .purge(&outbox_core::PurgeRequest::new(
            EmissionStatus::DeadLettered,
            by_topic("b"),
        ))
        .await
        .unwrap();
    assert_eq!(purged, 2);
    assert_eq!(
        store
            .purge(&outbox_core::PurgeRequest::new(
                EmissionStatus::Failed,
                by_topic("a")
            ))
            .await
            .unwrap(),
        0,
        "topic a has no failed entry; b's stays"
    );
    let topics = store.topic_stats(10).await.unwrap();
    let b = topics.iter().find(|t| t.topic == "b").unwrap();
    assert_eq!(
        (
            b.count(EmissionStatus::DeadLettered),
            b.count(EmissionStatus::Failed)
        ),
        (0, 1)
    );
    let a = topics.iter().find(|t| t.topic == "a").unwrap();
    assert_eq!((a.count(EmissionStatus::Pending), a.live()), (2, 2));
}
