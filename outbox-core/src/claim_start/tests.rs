//! The claim-start policy's unit tests: starts, spacing, and views told and shared.

use chrono::TimeDelta;

use super::*;
use crate::clock::ManualTimer;
use crate::{EntryId, NewEntry};

const HOUR: Duration = Duration::from_secs(3600);
const NOW: Duration = Duration::ZERO;
const BEGINNING: WalkStart = WalkStart {
    from: None,
    behind: false,
};

fn pending(at_s: i64) -> OutboxEntry {
    OutboxEntry::from_new(
        NewEntry::new("t", b"x".to_vec())
            .with_id(EntryId::new())
            .created_at(DateTime::from_timestamp(at_s, 0).unwrap()),
        Utc::now(),
    )
}

fn key(e: &OutboxEntry) -> PendingKey {
    (e.created_at, e.id.as_uuid())
}

fn req(n: u32) -> ClaimRequest {
    ClaimRequest::new("w", n, TimeDelta::seconds(30))
}

/// A walk that started `ago` and took `took`.
fn walk(ago: Duration, took: Duration) -> (Instant, Duration) {
    (now() - ago, took)
}

thread_local! {
    /// The time of this test's stores: each test runs on a thread of its own.
    static TIMER: Arc<ManualTimer> = Arc::new(ManualTimer::new());
}

/// A store whose walks are timed by this test's manual timer.
fn store(every: Duration) -> ClaimStarts {
    ClaimStarts::with_timer(every, TIMER.with(|t| Arc::clone(t) as Arc<dyn Timer>))
}

/// This test's current instant.
fn now() -> Instant {
    TIMER.with(|t| t.now())
}

fn from(e: &OutboxEntry, behind: bool) -> WalkStart {
    WalkStart {
        from: Some(key(e)),
        behind,
    }
}

#[test]
fn a_new_kind_walks_from_the_beginning() {
    let starts = store(HOUR);
    assert_eq!(starts.start(&req(1), true), BEGINNING);
}

#[test]
fn a_full_batch_moves_the_start_to_its_oldest_pending_row() {
    let starts = store(HOUR);
    let rows = [pending(20), pending(10), pending(30)];
    starts.learn(&req(3), true, BEGINNING, walk(NOW, NOW), &rows);
    assert_eq!(starts.start(&req(3), true), from(&rows[1], true));
    // Other kinds of claim keep their own start.
    assert_eq!(starts.start(&req(3).topic("t"), true), BEGINNING);
    let slice = Slice::new(0, 2).unwrap();
    assert_eq!(starts.start(&req(3).slice(slice), true), BEGINNING);
}

#[test]
fn retry_claims_always_walk_from_the_beginning() {
    let starts = store(HOUR);
    let rows = [pending(10)];
    starts.learn(&req(1), false, BEGINNING, walk(NOW, NOW), &rows);
    assert_eq!(starts.start(&req(1), false), BEGINNING);
}

/// Claims in per-key order walk the heads, so they learn a start of their own: one the
/// unordered claims of the same topic and slice neither take nor move.
#[test]
fn ordered_claims_keep_a_start_of_their_own() {
    let starts = store(HOUR);
    let ordered = req(2).in_key_order();
    let heads = [pending(30), pending(20)];
    starts.learn(&ordered, true, BEGINNING, walk(NOW, NOW), &heads);
    assert_eq!(starts.start(&ordered, true), from(&heads[1], true));
    assert_eq!(starts.start(&req(2), true), BEGINNING);
    let rows = [pending(40), pending(50)];
    starts.learn(&req(2), true, BEGINNING, walk(NOW, NOW), &rows);
    assert_eq!(starts.start(&req(2), true), from(&rows[0], true));
    assert_eq!(starts.start(&ordered, true), from(&heads[1], true));
}

#[test]
fn a_claim_without_pending_rows_keeps_the_start() {
    let starts = store(HOUR);
    let rows = [pending(10), pending(11)];
    starts.learn(&req(2), true, BEGINNING, walk(NOW, NOW), &rows);
    let start = starts.start(&req(2), true);
    assert_eq!(start, from(&rows[0], true));
    starts.learn(&req(2), true, start, walk(NOW, NOW), &[]);
    assert_eq!(starts.start(&req(2), true), start);
}

#[test]
fn full_batches_walk_from_the_beginning_at_the_interval() {
    let every = Duration::from_secs(10);
    let starts = store(every);
    starts.learn(
        &req(1),
        true,
        BEGINNING,
        walk(every / 2, NOW),
        &[pending(10)],
    );
    assert!(starts.start(&req(1), true).from.is_some());
    starts.learn(&req(1), true, BEGINNING, walk(every, NOW), &[pending(10)]);
    assert_eq!(starts.start(&req(1), true), BEGINNING);
}

#[test]
fn a_short_claim_that_walked_behind_counts_as_a_walk_from_the_beginning() {
    let every = Duration::from_secs(10);
    let starts = store(every);
    let rows = [pending(10), pending(11)];
    starts.learn(&req(2), true, BEGINNING, walk(every * 2, NOW), &rows);
    assert_eq!(starts.start(&req(2), true), BEGINNING);
    starts.learn(
        &req(2),
        true,
        from(&rows[0], true),
        walk(NOW, NOW),
        &rows[1..],
    );
    assert_eq!(starts.start(&req(2), true), from(&rows[1], true));
}

#[test]
fn an_interval_of_zero_always_walks_from_the_beginning() {
    let starts = store(Duration::ZERO);
    starts.learn(&req(1), true, BEGINNING, walk(NOW, NOW), &[pending(10)]);
    assert_eq!(starts.start(&req(1), true), BEGINNING);
}

#[test]
fn costly_walks_from_the_beginning_are_spaced_out_by_their_duration() {
    let starts = store(Duration::ZERO);
    let rows = [pending(10), pending(11)];
    let took = Duration::from_millis(100);
    // A claim that walked only ahead took 2 ms; a walk from the beginning 100 ms.
    starts.learn(
        &req(2),
        true,
        from(&rows[0], true),
        walk(NOW, Duration::from_millis(2)),
        &rows,
    );
    starts.learn(&req(2), true, BEGINNING, walk(took * 19, took), &rows);
    // For 2 s after it, claims start at the key and do not walk behind it...
    assert_eq!(starts.start(&req(2), true), from(&rows[0], false));
    // ...and a short claim that did not walk behind restarts nothing.
    starts.learn(
        &req(2),
        true,
        from(&rows[0], false),
        walk(NOW, NOW),
        &rows[..1],
    );
    assert_eq!(starts.start(&req(2), true), from(&rows[0], false));
    // Once 2 s have passed, the next claim walks from the beginning.
    starts.learn(&req(2), true, BEGINNING, walk(took * 21, took), &rows);
    assert_eq!(starts.start(&req(2), true), BEGINNING);
}

/// A walk judged costly while the machine was briefly slow holds nothing back once
/// claims that walk only ahead are as slow.
#[test]
fn a_costly_judgment_is_undone_when_plain_claims_slow_down_too() {
    let starts = store(HOUR);
    let rows = [pending(10), pending(11)];
    let ms = Duration::from_millis(1);
    starts.learn(
        &req(2),
        true,
        from(&rows[0], true),
        walk(NOW, 2 * ms),
        &rows,
    );
    starts.learn(&req(2), true, BEGINNING, walk(NOW, 30 * ms), &rows);
    assert_eq!(starts.start(&req(2), true), from(&rows[0], false));
    starts.learn(
        &req(2),
        true,
        from(&rows[0], false),
        walk(NOW, 40 * ms),
        &rows,
    );
    assert_eq!(starts.start(&req(2), true), from(&rows[0], true));
}

#[test]
fn a_walk_no_costlier_than_a_claim_ahead_is_not_held_back() {
    let starts = store(HOUR);
    let rows = [pending(10), pending(11)];
    // Through a slow link every claim takes 50 ms, a walk from the beginning 55 ms.
    let ms = Duration::from_millis(1);
    starts.learn(
        &req(2),
        true,
        from(&rows[0], true),
        walk(NOW, 50 * ms),
        &rows,
    );
    starts.learn(&req(2), true, BEGINNING, walk(NOW, 55 * ms), &rows);
    assert_eq!(starts.start(&req(2), true), from(&rows[0], true));
}

/// Runs one claim through `starts` that claims `rows` in `took`; returns how it walked
/// and what it shared.
async fn claim(
    starts: &ClaimStarts,
    req: &ClaimRequest,
    rows: &[OutboxEntry],
    took: Duration,
) -> (WalkStart, Option<Share>) {
    let mut walked = None;
    starts
        .walk(req, true, |start, share| {
            walked = Some((start, share));
            TIMER.with(|t| t.advance(took));
            async move { Ok(rows.to_vec()) }
        })
        .await
        .unwrap();
    walked.unwrap()
}

/// What `starts` shares with its next claim of `req`'s kind, told to a new store as
/// the database would tell it.
async fn told_by(starts: &ClaimStarts, req: &ClaimRequest) -> ClaimStarts {
    let (_, share) = claim(starts, req, &[], NOW).await;
    let share = share.expect("a view to share");
    assert_eq!(share.kind, kind_label(req));
    let new = store(HOUR);
    new.told([(share.kind, share.view)]);
    new
}

#[tokio::test]
async fn a_new_store_starts_where_another_store_shared() {
    let running = store(HOUR);
    let rows = [pending(10), pending(11)];
    let (walked, shared) = claim(&running, &req(2), &rows, NOW).await;
    assert_eq!((walked, shared), (BEGINNING, None));
    let new = told_by(&running, &req(2)).await;
    assert_eq!(
        claim(&new, &req(2), &rows, NOW).await.0,
        from(&rows[0], true)
    );
    // Another kind of claim was told nothing.
    assert_eq!(
        claim(&new, &req(2).topic("t"), &rows, NOW).await.0,
        BEGINNING
    );
}

#[tokio::test]
async fn a_new_store_keeps_the_spacing_of_a_costly_walk_it_was_told_of() {
    let running = store(HOUR);
    let rows = [pending(10), pending(11)];
    claim(&running, &req(2), &rows, NOW).await;
    // A full batch from the start times a claim that walked only ahead...
    claim(&running, &req(2), &rows, NOW).await;
    // ...against which a short claim that walked behind its start is costly.
    let costly = Duration::from_millis(30);
    let (walked, _) = claim(&running, &req(2), &rows[1..], costly).await;
    assert_eq!(walked, from(&rows[0], true));
    assert_eq!(running.start(&req(2), true), from(&rows[1], false));
    let new = told_by(&running, &req(2)).await;
    assert_eq!(
        claim(&new, &req(2), &rows, NOW).await.0,
        from(&rows[1], false),
        "a new store walked behind its start within the costly walk's spacing"
    );
}

/// A store's first calls also prepare their statements: before it has timed a claim
/// that walked only ahead, no walk from the beginning counts as costly.
#[tokio::test]
async fn a_slow_first_walk_holds_nothing_back() {
    let starts = store(HOUR);
    let rows = [pending(10), pending(11)];
    claim(&starts, &req(2), &rows[..1], Duration::from_millis(30)).await;
    assert_eq!(starts.start(&req(2), true), from(&rows[0], true));
}

#[tokio::test]
async fn a_view_older_than_the_interval_still_walks_from_the_beginning() {
    let rows = [pending(10)];
    let old = SharedStart {
        sharer: Uuid::now_v7(),
        from: key(&rows[0]),
        full_age: Duration::from_secs(20),
        hold_back: NOW,
    };
    let new = store(Duration::from_secs(10));
    new.told([(kind_label(&req(1)), old)]);
    assert_eq!(
        claim(&new, &req(1), &rows, Duration::from_millis(30))
            .await
            .0,
        BEGINNING
    );
    // A store told of earlier walks judges its own first one: costly, so it holds the
    // next back (every new process would otherwise walk over every dead entry again).
    assert_eq!(new.start(&req(1), true), from(&rows[0], false));
}

#[tokio::test]
async fn a_store_is_not_told_its_own_view() {
    let starts = store(HOUR);
    let rows = [pending(10)];
    claim(&starts, &req(1), &rows, NOW).await;
    let (_, share) = claim(&starts, &req(1), &rows, NOW).await;
    let share = share.unwrap();
    let again = ClaimStarts {
        id: starts.id,
        ..store(HOUR)
    };
    again.told([(share.kind, share.view)]);
    assert_eq!(claim(&again, &req(1), &rows, NOW).await.0, BEGINNING);
}

#[tokio::test]
async fn a_moved_start_is_shared_at_most_every_second_and_an_unmoved_one_never_again() {
    let starts = store(HOUR);
    let rows = [pending(10), pending(11)];
    let mut shares = 0;
    for _ in 0..5 {
        shares += usize::from(claim(&starts, &req(2), &rows, NOW).await.1.is_some());
    }
    assert_eq!(shares, 1);
    // The start moves; within the second it is not shared again.
    for _ in 0..2 {
        assert_eq!(claim(&starts, &req(2), &rows[1..], NOW).await.1, None);
    }
    let age = |by: Duration| {
        let mut kinds = starts.kinds.lock().unwrap();
        for w in kinds.values_mut() {
            w.shared = w.shared.map(|(_, from)| (now() - by, from));
        }
    };
    age(SHARE_EVERY);
    let (_, share) = claim(&starts, &req(2), &[], NOW).await;
    assert_eq!(share.unwrap().view.from, key(&rows[1]));
    // An unmoved start is not shared again, however long it has been.
    age(SHARE_EVERY * 10);
    assert_eq!(claim(&starts, &req(2), &[], NOW).await.1, None);
}

/// A queue whose batches never come back full: every claim walks behind its start.
/// The store's first claim is not judged, but a later costly one still holds the next
/// back.
#[tokio::test]
async fn costly_walks_are_spaced_out_on_a_queue_that_is_never_backlogged() {
    let starts = store(HOUR);
    let rows = [pending(10), pending(11)];
    claim(&starts, &req(5), &rows, NOW).await;
    let slow = Duration::from_millis(30);
    let (walked, _) = claim(&starts, &req(5), &rows, slow).await;
    assert_eq!(walked, from(&rows[0], true));
    assert_eq!(starts.start(&req(5), true), from(&rows[0], false));
}

#[tokio::test]
async fn a_new_store_does_not_share_back_what_it_was_told() {
    let running = store(HOUR);
    let rows = [pending(10), pending(11)];
    claim(&running, &req(2), &rows, NOW).await;
    let new = told_by(&running, &req(2)).await;
    for _ in 0..3 {
        assert_eq!(claim(&new, &req(2), &[], NOW).await.1, None);
    }
}

#[tokio::test]
async fn a_view_stays_due_after_a_failed_claim_and_pruning_comes_every_64th_share() {
    let starts = store(HOUR);
    let rows = [pending(10), pending(11)];
    claim(&starts, &req(2), &rows, NOW).await;
    let failed = starts
        .walk(&req(2), true, |_, share| async move {
            assert!(share.is_some(), "a view was due");
            Err(crate::OutboxError::invalid("test", "the claim failed"))
        })
        .await;
    assert!(failed.is_err());
    let (_, share) = claim(&starts, &req(2), &[pending(19)], NOW).await;
    assert!(
        share.expect("still due").prune,
        "a store's first share prunes"
    );
    let mut prunes = Vec::new();
    for n in 0..130u8 {
        let key = pending(20 + i64::from(n));
        starts.kinds.lock().unwrap().values_mut().for_each(|w| {
            w.shared = w.shared.map(|(_, f)| (now() - SHARE_EVERY, f));
        });
        let (_, share) = claim(&starts, &req(2), std::slice::from_ref(&key), NOW).await;
        prunes.push(share.expect("a moved start").prune);
    }
    let at: Vec<usize> = (0..prunes.len()).filter(|&i| prunes[i]).collect();
    assert_eq!(
        at,
        [63, 127],
        "shares 65 and 129 of the kind prune: {prunes:?}"
    );
}

/// An ordered claim shares its view under its own label, and a new store takes it for its
/// first ordered claim only.
#[tokio::test]
async fn ordered_claims_share_under_their_own_kind() {
    let starts = store(HOUR);
    let ordered = req(1).in_key_order();
    let head = pending(10);
    claim(&starts, &ordered, std::slice::from_ref(&head), NOW).await;
    let new = told_by(&starts, &ordered).await;
    assert_eq!(new.start(&ordered, true), from(&head, true));
    assert_eq!(new.start(&req(1), true), BEGINNING);
}

#[test]
fn intervals_over_an_hour_are_refused() {
    assert_eq!(check_full_walk_every(NOW).unwrap(), NOW);
    let err = check_full_walk_every(HOUR + Duration::from_secs(1)).unwrap_err();
    assert!(err.to_string().contains("full walk interval"), "{err}");
}
