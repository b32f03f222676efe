//! Counting the statements sqlx executes, from its `sqlx::query` tracing events (sqlx
//! logs every statement by default): a measure of a store's commands taken outside the
//! store. Install once per test binary; each watcher counts the statements naming its table.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};

/// Tests run in parallel in this process, so each watcher counts only the statements
/// that name its own table.
static WATCHERS: Mutex<Vec<(String, Arc<AtomicUsize>)>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

struct SqlLog;

#[derive(Default)]
struct SqlText(String);

impl Visit for SqlText {
    fn record_str(&mut self, field: &Field, value: &str) {
        if matches!(field.name(), "summary" | "db.statement") {
            self.0.push_str(value);
            self.0.push('\n');
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl Subscriber for SqlLog {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if self.enabled(meta) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        meta.target() == "sqlx::query"
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut sql = SqlText::default();
        event.record(&mut sql);
        for (table, count) in WATCHERS.lock().unwrap().iter() {
            if sql.0.contains(table.as_str()) {
                count.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// A counter of the executed statements that name `table` (quoted, as stores render it).
pub fn watch(table: &str) -> Arc<AtomicUsize> {
    INSTALL.call_once(|| {
        tracing::subscriber::set_global_default(SqlLog)
            .expect("no other global subscriber in this test binary");
    });
    let count = Arc::new(AtomicUsize::new(0));
    WATCHERS
        .lock()
        .unwrap()
        .push((format!("\"{table}\""), Arc::clone(&count)));
    count
}

/// The current count.
pub fn read(count: &AtomicUsize) -> usize {
    count.load(Ordering::SeqCst)
}
