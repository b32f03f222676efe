//! The drain into real brokers beside the noop emitter: the same backlog, one worker,
//! batch 100, 32 emissions in flight, in one run. What delivering costs on top of the
//! outbox alone.

use super::drain::{measure, DrainSpec};
use super::{progress, Ctx};
use crate::brokers::Destination;
use crate::results::BrokerRow;

const BATCH: u32 = 100;
const CONCURRENCY: usize = 32;

/// Measures noop, NATS JetStream and RabbitMQ on every engine.
pub async fn run(ctx: &mut Ctx) {
    let plan = ctx.plan.clone();
    for engine in ctx.engines.clone() {
        for target in ["noop", "NATS JetStream", "RabbitMQ"] {
            let destination = match target {
                "noop" => None,
                "NATS JetStream" => match Destination::nats().await {
                    Ok(d) => Some(d),
                    Err(why) => {
                        outbox_testkit::engines::unavailable("nats", &why);
                        ctx.skip(format!("brokers: NATS JetStream: {why}"));
                        continue;
                    }
                },
                _ => match Destination::rabbit().await {
                    Ok(d) => Some(d),
                    Err(why) => {
                        outbox_testkit::engines::unavailable("rabbitmq", &why);
                        ctx.skip(format!("brokers: RabbitMQ: {why}"));
                        continue;
                    }
                },
            };
            let backlog = plan.broker_entries + plan.broker_entries / 5;
            let Some(place) = ctx.loaded(engine, backlog).await else {
                return;
            };
            let spec = DrainSpec {
                concurrency: Some(CONCURRENCY),
                emitter: destination.as_ref().map(|d| d.url().to_owned()),
                ..DrainSpec::new(
                    place.location.clone(),
                    1,
                    BATCH,
                    plan.broker_entries,
                    plan.drain_budget * 4,
                )
            };
            let outcome = measure(&spec).await;
            if let Some(d) = destination {
                d.remove().await;
            }
            progress(format_args!(
                "brokers {} → {target}: {:.0}/s",
                engine.label(),
                outcome.entries_per_s
            ));
            ctx.results.brokers.push(BrokerRow {
                engine,
                emitter: target.to_owned(),
                batch: BATCH,
                concurrency: CONCURRENCY,
                backlog,
                outcome,
            });
        }
    }
}
