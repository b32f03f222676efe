//! The metrics this test binary recorded, for tests whose drain runs on several threads
//! (a local recorder sees one): one process-wide debugging recorder, installed on first use.

use std::sync::OnceLock;

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

fn snapshotter() -> &'static Snapshotter {
    static SNAPSHOTTER: OnceLock<Snapshotter> = OnceLock::new();
    SNAPSHOTTER.get_or_init(|| {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        recorder
            .install()
            .expect("no other recorder in this test binary");
        snapshotter
    })
}

/// Installs the recorder now, so what follows is recorded.
pub(crate) fn start() {
    snapshotter();
}

/// The counter `name`'s value per label set (`key=value` pairs, comma-separated, in the
/// order recorded), summed over the whole binary so far.
pub(crate) fn counters(name: &str) -> Vec<(String, u64)> {
    let mut seen: Vec<(String, u64)> = snapshotter()
        .snapshot()
        .into_vec()
        .into_iter()
        .filter(|(key, ..)| key.key().name() == name)
        .filter_map(|(key, _, _, value)| {
            let DebugValue::Counter(n) = value else {
                return None;
            };
            let labels: Vec<String> = key
                .key()
                .labels()
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            Some((labels.join(","), n))
        })
        .collect();
    seen.sort();
    seen
}
