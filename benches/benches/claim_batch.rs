//! Criterion micro bench: one claim of a batch, on each store the machine can reach.
//! Each iteration enqueues a fresh batch (untimed), claims it (timed) and completes it
//! (untimed), so every claim meets the same clean queue.
//!
//! `cargo bench -p outbox-benches --bench claim_batch`; `cargo test --benches` runs each
//! case once as a smoke test. The long runs and the report are `outbox-bench`'s.

// `criterion_group!` defines a public function it cannot document.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use outbox_benches::results::{Engine, StorePath};
use outbox_benches::scenarios::{delivered, long_lease};
use outbox_benches::subject::{open, Link, Place};
use outbox_core::{ClaimRequest, NewEntry};

fn claim_batch(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mut group = c.benchmark_group("claim_batch");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    let mut engines = vec![Engine::Sqlite];
    if outbox_testkit::postgres::server().is_ok() {
        engines.push(Engine::Postgres);
    } else {
        outbox_testkit::engines::unavailable("postgres", "no PostgreSQL server for the bench");
    }
    for engine in engines {
        for path in [StorePath::Portable, StorePath::Optimized] {
            for batch in [10u32, 100] {
                let Some(place) = rt.block_on(Place::create(engine, "outbox")) else {
                    continue;
                };
                let subject = rt.block_on(open(&place.location, path, Link::direct(), 2));
                let request = ClaimRequest::new("criterion", batch, long_lease());
                let id = BenchmarkId::new(format!("{}-{}", engine.label(), path.label()), batch);
                group.bench_function(id, |b| {
                    b.to_async(&rt).iter_custom(|iters| {
                        let (store, request) = (subject.store.clone(), request.clone());
                        async move {
                            let mut spent = Duration::ZERO;
                            for _ in 0..iters {
                                let fresh = (0..batch)
                                    .map(|_| NewEntry::new("bench", vec![b'x'; 256]))
                                    .collect();
                                store.enqueue_batch(fresh).await.expect("enqueue");
                                let started = Instant::now();
                                let claims = store.claim_pending(&request).await.expect("claim");
                                spent += started.elapsed();
                                assert_eq!(claims.len(), batch as usize);
                                store
                                    .complete_batch(delivered(&claims))
                                    .await
                                    .expect("complete");
                            }
                            spent
                        }
                    });
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, claim_batch);
criterion_main!(benches);
