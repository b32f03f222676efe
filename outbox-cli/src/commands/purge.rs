//! `outbox purge` and `outbox dead-letters purge`: delete entries that wait for an
//! operator (failed, dead-lettered); without `--yes`, say how many would go and delete
//! nothing.

use outbox_core::{DeadLetterSelection, EmissionStatus, OutboxError, Result};

use crate::args::Selection;
use crate::backend::Target;

/// Deletes the entries in `from` that `which` picks, or with `yes` unset, counts them.
pub(crate) async fn run(
    target: &Target,
    from: EmissionStatus,
    which: &Selection,
    yes: bool,
) -> Result<()> {
    outbox_core::store_kit::admin::check_purge(from)?;
    which.which().check()?;
    if !yes {
        let store = target.open_for_reading().await?;
        let n = match which.which() {
            DeadLetterSelection::One(id) => {
                u64::from(store.get(id).await?.is_some_and(|e| e.status == from))
            }
            DeadLetterSelection::Topic(topic) => count_of_topic(&*store, from, topic).await?,
            DeadLetterSelection::All => store
                .live_stats(&outbox_core::StatsRequest::new())
                .await?
                .count(from),
        };
        return Err(OutboxError::invalid(
            "--yes",
            format!(
                "would purge {}; run again with --yes to delete",
                entries(from, n)
            ),
        ));
    }
    let store = target.open().await?;
    let n = store
        .purge(&outbox_core::PurgeRequest::new(from, which.which()))
        .await?;
    if let (Some(id), 0) = (which.id, n) {
        return Err(OutboxError::Database {
            message: format!(
                "no {} with id {id} (see `outbox list --status {}`)",
                noun(from),
                from.as_str()
            ),
            source: None,
        });
    }
    out!("purged {}", entries(from, n));
    Ok(())
}

/// How many entries of `topic` are in `from`: its list, page by page.
async fn count_of_topic(
    store: &dyn outbox_core::AdminClaimStore,
    from: EmissionStatus,
    topic: String,
) -> Result<u64> {
    let mut req = outbox_core::ListRequest::new(from, 1000);
    req.topic = Some(topic);
    let mut n = 0;
    loop {
        let page = store.list(&req).await?;
        n += page.len() as u64;
        match page.last() {
            Some(last) if page.len() == 1000 => req.after = Some(last.id),
            _ => return Ok(n),
        }
    }
}

/// One entry in `status`, in words: "dead letter", "failed entry".
fn noun(status: EmissionStatus) -> String {
    match status {
        EmissionStatus::DeadLettered => "dead letter".to_owned(),
        other => format!("{} entry", other.as_str()),
    }
}

/// `n` entries in `status`, in words: "2 dead letters", "1 failed entry".
fn entries(status: EmissionStatus, n: u64) -> String {
    match (status, n) {
        (_, 1) => format!("1 {}", noun(status)),
        (EmissionStatus::DeadLettered, _) => format!("{n} dead letters"),
        (other, _) => format!("{n} {} entries", other.as_str()),
    }
}
