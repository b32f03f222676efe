use std::collections::HashMap;

use chrono::TimeZone;

use super::*;
use crate::NewEntry;

/// A row as a driver would hand it over: each column's stored form.
#[derive(Clone, Default)]
struct Row(HashMap<&'static str, Value>);

#[derive(Clone)]
enum Value {
    Null,
    Text(String),
    Bytes(Vec<u8>),
    Int(i64),
    Time(DateTime<Utc>),
    Unreadable,
}

impl Row {
    /// The row the store writes for `e`: uuids as 16 bytes, headers as JSON text.
    fn of(e: &OutboxEntry) -> Self {
        let text = |v: &Option<String>| v.clone().map_or(Value::Null, Value::Text);
        let time = |v: Option<DateTime<Utc>>| v.map_or(Value::Null, Value::Time);
        let uuid = |v: Uuid| Value::Bytes(v.as_bytes().to_vec());
        Self(HashMap::from([
            ("id", uuid(e.id.as_uuid())),
            ("topic", Value::Text(e.topic.clone())),
            ("partition_key", text(&e.partition_key)),
            ("payload", Value::Bytes(e.payload.clone())),
            (
                "headers",
                Value::Text(serde_json::to_string(&e.headers).unwrap()),
            ),
            ("status", Value::Int(e.status.code().into())),
            ("created_at", Value::Time(e.created_at)),
            ("updated_at", Value::Time(e.updated_at)),
            ("not_before", time(e.not_before)),
            ("next_retry_at", time(e.next_retry_at)),
            ("attempt_count", Value::Int(e.attempt_count.into())),
            ("last_error", text(&e.last_error)),
            ("dead_letter_reason", text(&e.dead_letter_reason)),
            ("delivered_at", time(e.delivered_at)),
            ("provider_message_id", text(&e.provider_message_id)),
            ("claim_owner", text(&e.claim_owner)),
            ("claim_token", e.claim_token.map_or(Value::Null, uuid)),
            ("claimed_at", time(e.claimed_at)),
            ("claim_expires_at", time(e.claim_expires_at)),
            (
                "claim_attempt_count",
                Value::Int(e.claim_attempt_count.into()),
            ),
            ("stamp", uuid(e.stamp)),
        ]))
    }

    fn with(mut self, column: &'static str, value: Value) -> Self {
        self.0.insert(column, value);
        self
    }

    fn read<T>(&self, column: &str, pick: impl Fn(&Value) -> Option<T>) -> ColumnRead<T> {
        match self.0.get(column) {
            None => Err("no such column".into()),
            Some(Value::Null) => Ok(None),
            Some(v) => pick(v).map(Some).ok_or_else(|| "wrong type".into()),
        }
    }
}

impl EntryColumns for Row {
    fn text(&self, column: &'static str) -> ColumnRead<String> {
        self.read(column, |v| match v {
            Value::Text(s) => Some(s.clone()),
            _ => None,
        })
    }
    fn bytes(&self, column: &'static str) -> ColumnRead<Vec<u8>> {
        self.read(column, |v| match v {
            Value::Bytes(b) => Some(b.clone()),
            _ => None,
        })
    }
    fn time(&self, column: &'static str) -> ColumnRead<DateTime<Utc>> {
        self.read(column, |v| match v {
            Value::Time(t) => Some(*t),
            _ => None,
        })
    }
    fn code(&self, column: &'static str) -> ColumnRead<i64> {
        self.count(column)
    }
    fn count(&self, column: &'static str) -> ColumnRead<i64> {
        self.read(column, |v| match v {
            Value::Int(n) => Some(*n),
            _ => None,
        })
    }
}

fn at(s: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + s, 0).unwrap()
}

/// A claimed entry with every optional field set.
fn claimed() -> OutboxEntry {
    let mut e = OutboxEntry::from_new(
        NewEntry::new("orders", b"{\"n\":1}".to_vec())
            .partition_key("k-1")
            .header("trace", "abc")
            .not_before(at(1)),
        at(0),
    );
    e.status = EmissionStatus::RetryableFailure;
    e.updated_at = at(2);
    e.next_retry_at = Some(at(3));
    e.attempt_count = 2;
    e.last_error = Some("refused".into());
    e.claim_owner = Some("w-1".into());
    e.claim_token = Some(Uuid::new_v4());
    e.claimed_at = Some(at(4));
    e.claim_expires_at = Some(at(34));
    e.claim_attempt_count = 3;
    e
}

fn corrupt_reason(result: Result<OutboxEntry>, id: &str) -> String {
    match result {
        Err(OutboxError::CorruptRow { id: named, reason }) => {
            assert_eq!(named, id, "the error names the wrong row ({reason})");
            reason
        }
        other => panic!("not CorruptRow: {other:?}"),
    }
}

#[test]
fn a_whole_row_reads_back_as_written() {
    let e = claimed();
    assert_eq!(entry(&Row::of(&e)).unwrap(), e);
    let plain = OutboxEntry::from_new(NewEntry::new("t", Vec::new()), at(0));
    assert_eq!(entry(&Row::of(&plain)).unwrap(), plain);
}

#[test]
fn a_written_row_takes_the_outcome_columns_and_clears_the_lease() {
    let claimed = claimed();
    let mut delivered = claimed.clone();
    delivered.status = EmissionStatus::Delivered;
    delivered.updated_at = at(9);
    delivered.next_retry_at = None;
    delivered.attempt_count = 3;
    delivered.last_error = None;
    delivered.delivered_at = Some(at(9));
    delivered.provider_message_id = Some("m-1".into());
    delivered.stamp = Uuid::new_v4();
    // The completion's row carries the outcome columns only.
    let mut row = Row::of(&delivered);
    for gone in ["topic", "payload", "headers", "created_at", "claim_owner"] {
        row.0.remove(gone);
    }
    let read = written(&row, &claimed).unwrap();
    delivered.claim_owner = None;
    delivered.claim_token = None;
    delivered.claimed_at = None;
    delivered.claim_expires_at = None;
    assert_eq!(read, delivered);
}

#[test]
fn every_unreadable_column_is_named_with_the_row() {
    let e = claimed();
    let id = e.id.to_string();
    let cases = [
        ("topic", Value::Null, "topic is NULL"),
        ("payload", Value::Int(1), "payload: wrong type"),
        (
            "headers",
            Value::Text("[1]".into()),
            "headers: not a JSON object",
        ),
        ("status", Value::Int(42), "status: unknown code 42"),
        (
            "attempt_count",
            Value::Int(-1),
            "attempt_count: -1 is out of range",
        ),
        (
            "claim_attempt_count",
            Value::Int(1 << 32),
            "claim_attempt_count: 4294967296 is out of range",
        ),
        (
            "claim_token",
            Value::Bytes(vec![1, 2, 3]),
            "claim_token: 3 bytes, not 16",
        ),
        ("stamp", Value::Null, "stamp is NULL"),
        ("updated_at", Value::Unreadable, "updated_at: wrong type"),
    ];
    for (column, value, reason) in cases {
        let got = corrupt_reason(entry(&Row::of(&e).with(column, value.clone())), &id);
        assert!(got.starts_with(reason), "{column}: {got:?}");
        let outcome_column = !matches!(column, "topic" | "payload" | "headers" | "claim_token")
            && column != "claim_attempt_count";
        if outcome_column {
            let got = corrupt_reason(written(&Row::of(&e).with(column, value), &e), &id);
            assert!(got.starts_with(reason), "written {column}: {got:?}");
        }
    }
}

#[test]
fn a_row_without_a_readable_id_is_shown_as_unknown() {
    let e = claimed();
    for (value, reason) in [
        (Value::Bytes(vec![0; 15]), "id: 15 bytes, not 16"),
        (Value::Null, "id is NULL"),
    ] {
        let got = corrupt_reason(entry(&Row::of(&e).with("id", value.clone())), "?");
        assert_eq!(got, reason);
        assert!(entry_id(&Row::of(&e).with("id", value)).is_err());
    }
    assert_eq!(entry_id(&Row::of(&e)).unwrap(), e.id);
}
