//! Every statement's parameters, built in one place and in the order the statement
//! numbers them (`@P1`, `@P2`, …). The unit tests hold each builder against the
//! statement's declared parameter list (see `statements::Spec`).

use chrono::{DateTime, Utc};
use outbox_core::store_kit::claims::{ClaimGroups, Share, WalkStart};
use outbox_core::{
    Claim, ClaimRequest, CompletionRequest, DeadLetterSelection, EmissionStatus, EntryId,
    FindRequest, ListRequest, OutboxEntry, OutboxError, PruneRequest, RenewRequest, Result, Slice,
    TargetState,
};
use tiberius::ColumnData;

use crate::binds::{id, int, status, text, time};
use crate::row::id_bytes;

/// The bound values of one call.
pub type Params = Vec<ColumnData<'static>>;

/// The SQL type a parameter is sent as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// datetime2 (UTC).
    Time,
    /// nvarchar.
    Text,
    /// int.
    Int,
    /// bigint (slice hashes).
    BigInt,
    /// tinyint (statuses).
    TinyInt,
    /// bit.
    Bit,
    /// varbinary (ids, payloads).
    Binary,
    /// uniqueidentifier (tokens, stamps).
    Guid,
}

impl Kind {
    /// The kind a value is sent as.
    pub fn of(value: &ColumnData<'_>) -> Option<Self> {
        Some(match value {
            ColumnData::DateTime2(_) => Self::Time,
            ColumnData::String(_) => Self::Text,
            ColumnData::I32(_) => Self::Int,
            ColumnData::I64(_) => Self::BigInt,
            ColumnData::U8(_) => Self::TinyInt,
            ColumnData::Bit(_) => Self::Bit,
            ColumnData::Binary(_) => Self::Binary,
            ColumnData::Guid(_) => Self::Guid,
            _ => return None,
        })
    }
}

/// A lease as the statements take it: whole seconds and the remaining microseconds
/// (DATEADD takes an int; a year of microseconds does not fit one).
pub fn lease_parts(lease: chrono::TimeDelta) -> Result<(i32, i32)> {
    let micros = lease
        .num_microseconds()
        .ok_or_else(|| OutboxError::invalid("lease", "is too long"))?;
    let seconds = i32::try_from(micros / 1_000_000)
        .map_err(|_| OutboxError::invalid("lease", "is too long"))?;
    let rest = i32::try_from(micros % 1_000_000).expect("below a million");
    Ok((seconds, rest))
}

/// `claim.sql`, its pending walk starting as `start` says.
pub fn claim(
    req: &ClaimRequest,
    groups: ClaimGroups,
    start: WalkStart,
    shared: Option<&Share>,
) -> Result<Params> {
    let from = start.from;
    let (seconds, micros) = lease_parts(req.lease)?;
    let mut params = vec![
        time(req.now),
        text(req.topic.as_deref()),
        int("batch size", req.batch_size)?,
        text(Some(&req.owner)),
        ColumnData::I32(Some(seconds)),
        ColumnData::I32(Some(micros)),
        ColumnData::Bit(Some(groups.retry)),
        ColumnData::Bit(Some(groups.pending)),
        slice_count(req.slice)?,
        slice_index(req.slice)?,
        ColumnData::Bit(Some(req.ordered)),
        time(from.map(|(created, _)| created)),
        from.map_or(ColumnData::Binary(None), |(_, uuid)| {
            id(EntryId::from_uuid(uuid))
        }),
        ColumnData::Bit(Some(start.behind)),
    ];
    params.extend(share(shared));
    params.push(int("key run", req.key_run)?);
    Ok(params)
}

/// A claim's share parameters (@P15 to @P22 of `claim.sql`): all NULL without a share.
fn share(share: Option<&Share>) -> [ColumnData<'static>; 8] {
    let Some(share) = share else {
        return [
            text(None),
            ColumnData::Guid(None),
            time(None),
            ColumnData::Binary(None),
            ColumnData::I32(None),
            ColumnData::I32(None),
            ColumnData::I64(None),
            ColumnData::Bit(None),
        ];
    };
    let view = &share.view;
    let (from_created, from_id) = view.from;
    [
        text(Some(&share.kind)),
        ColumnData::Guid(Some(view.sharer)),
        time(Some(from_created)),
        id(EntryId::from_uuid(from_id)),
        ColumnData::I32(Some(
            i32::try_from(view.full_age.as_secs()).unwrap_or(i32::MAX),
        )),
        ColumnData::I32(Some(
            i32::try_from(view.full_age.subsec_micros()).unwrap_or(0),
        )),
        ColumnData::I64(Some(share.hold_back_micros())),
        ColumnData::Bit(Some(share.prune)),
    ]
}

/// A slice's count, NULL without a slice.
fn slice_count(slice: Option<Slice>) -> Result<ColumnData<'static>> {
    match slice {
        Some(s) => int("slice count", s.count()),
        None => Ok(ColumnData::I32(None)),
    }
}

/// A slice's index (0 without a slice: the count's NULL disables the filter).
fn slice_index(slice: Option<Slice>) -> Result<ColumnData<'static>> {
    int("slice index", slice.map_or(0, |s| s.index()))
}

/// `complete_batch.sql`.
pub fn complete(reqs: &[CompletionRequest]) -> Result<Params> {
    Ok(vec![text(Some(&crate::batch_params::completions(reqs)?))])
}

/// `renew.sql`.
pub fn renew(claims: &[Claim], req: &RenewRequest) -> Result<Params> {
    let (seconds, micros) = lease_parts(req.lease)?;
    Ok(vec![
        text(Some(&crate::batch_params::holders(claims))),
        time(req.now),
        ColumnData::I32(Some(seconds)),
        ColumnData::I32(Some(micros)),
    ])
}

/// `save.sql`.
pub fn save(entry: &OutboxEntry, now: Option<DateTime<Utc>>) -> Result<Params> {
    let t = TargetState::from_entry(entry);
    Ok(vec![
        id(entry.id),
        ColumnData::Guid(Some(entry.stamp)),
        status(t.status),
        time(t.next_retry_at),
        int("attempt count", t.attempt_count)?,
        text(t.last_error.as_deref()),
        text(t.dead_letter_reason.as_deref()),
        time(t.delivered_at),
        text(t.provider_message_id.as_deref()),
        time(now),
    ])
}

/// `get.sql`.
pub fn get(entry: EntryId) -> Params {
    vec![id(entry)]
}

/// `find_pending.sql` and `find_retry_ready.sql`.
pub fn find(req: &FindRequest) -> Result<Params> {
    Ok(vec![
        time(req.now),
        text(req.topic.as_deref()),
        int("limit", req.limit)?,
        slice_count(req.slice)?,
        slice_index(req.slice)?,
    ])
}

/// `prune_delivered.sql`.
pub fn prune(req: &PruneRequest) -> Result<Params> {
    Ok(vec![
        time(Some(req.delivered_before)),
        int("prune batch size", req.batch_size)?,
    ])
}

/// `admin/stats.sql`.
/// `admin/stats.sql` and `admin/live_stats.sql`.
pub fn stats(now: Option<DateTime<Utc>>) -> Params {
    vec![time(now)]
}

/// `admin/dead_letters.sql`.
pub fn dead_letters(limit: u32) -> Result<Params> {
    Ok(vec![int("limit", limit)?])
}

/// `admin/list_entries.sql` and `admin/list_delivered.sql`.
pub fn list(req: &ListRequest) -> Result<Params> {
    Ok(vec![
        text(req.topic.as_deref()),
        ColumnData::Binary(req.after.map(|a| id_bytes(a).into())),
        int("limit", req.limit)?,
        text(req.partition_key.as_deref()),
    ])
}

/// `admin/count_delivered_before.sql`.
pub fn count_delivered_before(before: DateTime<Utc>) -> Params {
    vec![time(Some(before))]
}

fn selection(which: &DeadLetterSelection) -> ColumnData<'static> {
    ColumnData::Binary(which.id().map(|one| id_bytes(one).into()))
}

/// `admin/requeue.sql`.
pub fn requeue(
    now: Option<DateTime<Utc>>,
    which: &DeadLetterSelection,
    from: EmissionStatus,
) -> Params {
    vec![
        time(now),
        selection(which),
        status(from),
        text(which.topic()),
    ]
}

/// `admin/purge.sql`.
pub fn purge(which: &DeadLetterSelection, batch: i32, from: EmissionStatus) -> Params {
    vec![
        selection(which),
        ColumnData::I32(Some(batch)),
        status(from),
        text(which.topic()),
    ]
}

/// A call's values as the driver takes them.
pub fn refs<'a>(params: &'a [ColumnData<'static>]) -> Vec<&'a dyn tiberius::ToSql> {
    params.iter().map(|p| p as &dyn tiberius::ToSql).collect()
}
