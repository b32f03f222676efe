//! Where claims start, shared between the table's stores (migration 3): the views read
//! when a store is built. A claim shares its own in its batch (`claim.sql`).

use std::time::Duration;

use outbox_core::store_kit::claims::SharedStart;
use outbox_core::{OutboxError, Result};
use tiberius::Row;
use uuid::Uuid;

use crate::row::{required, required_time};

/// The newest view of each kind of claim, by kind label, from the rows of
/// `shared_starts.sql`.
pub(crate) fn shared_views(rows: &[Row]) -> Result<Vec<(String, SharedStart)>> {
    rows.iter()
        .map(|row| {
            let kind: &str = required(row, "kind", SHOWN)?;
            Ok((kind.to_owned(), view(row)?))
        })
        .collect()
}

const SHOWN: &str = "shared claim start";

/// One row of `shared_starts.sql`, its kind aside.
fn view(row: &Row) -> Result<SharedStart> {
    let micros = |column: &'static str| -> Result<Duration> {
        let us: i64 = required(row, column, SHOWN)?;
        u64::try_from(us)
            .map(Duration::from_micros)
            .map_err(|_| OutboxError::invalid(SHOWN, format!("{column} is negative: {us}")))
    };
    let from_id: &[u8] = required(row, "from_id", SHOWN)?;
    let from_id = Uuid::from_slice(from_id)
        .map_err(|_| OutboxError::invalid(SHOWN, "from_id is not 16 bytes"))?;
    Ok(SharedStart {
        sharer: required(row, "sharer", SHOWN)?,
        from: (required_time(row, "from_created", SHOWN)?, from_id),
        full_age: micros("full_age_us")?,
        hold_back: micros("hold_back_us")?,
    })
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use tiberius::{ColumnData, ColumnType};

    use super::*;
    use crate::fixtures::datetime2;

    fn row(age_us: i64, took_us: i64, id_len: usize) -> Row {
        Row::builder()
            .column(
                "kind",
                ColumnType::NVarchar,
                ColumnData::String(Some("2/4|orders".into())),
            )
            .column(
                "sharer",
                ColumnType::Guid,
                ColumnData::Guid(Some(Uuid::from_u128(7))),
            )
            .column(
                "from_created",
                ColumnType::Datetime2,
                ColumnData::DateTime2(Some(datetime2(
                    DateTime::<Utc>::from_timestamp(1_700_000_000, 123_456_000).unwrap(),
                ))),
            )
            .column(
                "from_id",
                ColumnType::BigBinary,
                ColumnData::Binary(Some(vec![9; id_len].into())),
            )
            .column(
                "full_age_us",
                ColumnType::Int8,
                ColumnData::I64(Some(age_us)),
            )
            .column(
                "hold_back_us",
                ColumnType::Int8,
                ColumnData::I64(Some(took_us)),
            )
            .build()
    }

    #[test]
    fn a_read_row_is_a_view() {
        let views = shared_views(&[row(2_500_001, 40_000, 16)]).unwrap();
        let (kind, v) = &views[0];
        assert_eq!(kind, "2/4|orders");
        assert_eq!(v.sharer, Uuid::from_u128(7));
        assert_eq!(v.from.0.timestamp_micros(), 1_700_000_000_123_456);
        assert_eq!(v.from.1, Uuid::from_bytes([9; 16]));
        assert_eq!(v.full_age, Duration::from_micros(2_500_001));
        assert_eq!(v.hold_back, Duration::from_millis(40));
    }

    #[test]
    fn a_bad_row_is_refused() {
        for (bad, why) in [(row(-1, 0, 16), "negative"), (row(0, 0, 15), "16 bytes")] {
            let err = view(&bad).unwrap_err().to_string();
            assert!(err.contains(why), "{err}");
        }
    }

    /// The age a claim shares is split into whole seconds and microseconds (DATEADD takes
    /// an int), and a walk's duration too long for a bigint is capped, not wrapped.
    #[test]
    fn a_shared_view_is_sent_with_its_age_split() {
        let share = outbox_core::store_kit::claims::Share {
            kind: "all|".into(),
            prune: true,
            view: SharedStart {
                sharer: Uuid::from_u128(7),
                from: (Utc::now(), Uuid::from_u128(9)),
                full_age: Duration::from_micros(3_000_000_007),
                hold_back: Duration::MAX,
            },
        };
        let req = outbox_core::ClaimRequest::new("w", 1, chrono::TimeDelta::seconds(30));
        let start = outbox_core::store_kit::claims::WalkStart::default();
        let p = crate::params::claim(
            &req,
            outbox_core::store_kit::claims::ClaimGroups::NEXT,
            start,
            Some(&share),
        )
        .unwrap();
        assert!(matches!(&p[14], ColumnData::String(Some(k)) if k == "all|"));
        assert!(matches!(p[18], ColumnData::I32(Some(3_000))));
        assert!(matches!(p[19], ColumnData::I32(Some(7))));
        assert!(matches!(p[20], ColumnData::I64(Some(i64::MAX))));
        assert!(matches!(p[21], ColumnData::Bit(Some(true))));
        let none = crate::params::claim(
            &req,
            outbox_core::store_kit::claims::ClaimGroups::NEXT,
            start,
            None,
        )
        .unwrap();
        assert!(matches!(none[14], ColumnData::String(None)));
    }

    /// An ordered claim walks from the start its kind learned, may walk behind it, and
    /// shares it under its own kind (`@P11` to `@P15`).
    #[tokio::test]
    async fn an_ordered_claim_passes_its_own_start() {
        use outbox_core::store_kit::claims::{ClaimGroups, ClaimStarts};
        let starts = ClaimStarts::new(Duration::from_secs(3600));
        let req =
            outbox_core::ClaimRequest::new("w", 1, chrono::TimeDelta::seconds(30)).in_key_order();
        let head = outbox_core::OutboxEntry::from_new(
            outbox_core::NewEntry::new("t", vec![]).partition_key("k"),
            Utc::now(),
        );
        let learned = (head.created_at, head.id.as_uuid());
        for round in 0..2 {
            let rows = vec![head.clone()];
            starts
                .walk(&req, true, |start, share| {
                    let p = crate::params::claim(&req, ClaimGroups::PENDING, start, share.as_ref())
                        .unwrap();
                    assert!(matches!(p[10], ColumnData::Bit(Some(true))));
                    if round == 1 {
                        assert_eq!(start.from, Some(learned));
                        assert!(matches!(p[11], ColumnData::DateTime2(Some(_))));
                        assert!(matches!(p[13], ColumnData::Bit(Some(true))));
                        assert!(
                            matches!(&p[14], ColumnData::String(Some(k)) if k == "ordered/all|")
                        );
                    }
                    async move { Ok(rows) }
                })
                .await
                .unwrap();
        }
    }
}
