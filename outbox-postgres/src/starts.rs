//! Where claims start, shared between the table's stores (migration 7): the views read
//! when a store is built, and a claim's parameters for the view it shares.

use std::time::Duration;

use chrono::{DateTime, Utc};
use outbox_core::store_kit::claims::{Share, SharedStart};
use outbox_core::{OutboxError, Result};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::connection::{query, Db};
use crate::error::map_err;
use crate::typed::{typed, Param};

/// The newest view of each kind of claim the table's stores shared, by kind label
/// (`shared_starts.sql`).
pub(crate) async fn shared_views(db: &Db, sql: &str) -> Result<Vec<(String, SharedStart)>> {
    query(db, sql, &[]).await?.iter().map(view).collect()
}

/// One row of `shared_starts.sql`.
fn view(row: &Row) -> Result<(String, SharedStart)> {
    let micros = |column: &str| -> Result<Duration> {
        let us: i64 = row.try_get(column).map_err(map_err)?;
        u64::try_from(us).map(Duration::from_micros).map_err(|_| {
            OutboxError::invalid("shared claim start", format!("{column} is negative: {us}"))
        })
    };
    let view = SharedStart {
        sharer: row.try_get("sharer").map_err(map_err)?,
        from: (
            row.try_get("from_created").map_err(map_err)?,
            row.try_get("from_id").map_err(map_err)?,
        ),
        full_age: micros("full_age_us")?,
        hold_back: micros("hold_back_us")?,
    };
    Ok((row.try_get("kind").map_err(map_err)?, view))
}

/// A claim's parameters $11 to $17 (`claim.sql`): the view it shares, all NULL when it
/// shares none.
#[derive(Debug, Default)]
pub(crate) struct ShareParams {
    kind: Option<String>,
    sharer: Option<Uuid>,
    from_created: Option<DateTime<Utc>>,
    from_id: Option<Uuid>,
    full_age_us: Option<i64>,
    hold_back_us: Option<i64>,
    prune: bool,
}

impl ShareParams {
    pub(crate) fn new(share: Option<Share>) -> Self {
        let Some(share) = share else {
            return Self::default();
        };
        Self {
            full_age_us: Some(share.full_age_micros()),
            hold_back_us: Some(share.hold_back_micros()),
            sharer: Some(share.view.sharer),
            from_created: Some(share.view.from.0),
            from_id: Some(share.view.from.1),
            kind: Some(share.kind),
            prune: share.prune,
        }
    }

    /// In the order `claim.sql` numbers them.
    pub(crate) fn params(&self) -> [Param<'_>; 7] {
        [
            typed(&self.kind),
            typed(&self.sharer),
            typed(&self.from_created),
            typed(&self.from_id),
            typed(&self.full_age_us),
            typed(&self.hold_back_us),
            typed(&self.prune),
        ]
    }
}
