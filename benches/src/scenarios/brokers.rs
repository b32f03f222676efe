//! The drain into real brokers beside the noop emitter: the same backlog, one worker,
//! batch 100, 32 emissions in flight, in one run. What delivering costs on top of the
//! outbox alone. Then each broker with no outbox in front: the emitter called directly,
//! and the client library alone at the drain's 32 in flight and at 256, so a gap to noop
//! shows whether it is the outbox's, the emitter's or the broker's.

use super::drain::{measure, DrainSpec};
use super::{progress, Ctx};
use crate::brokers::{Destination, BROKERS};
use crate::results::{BrokerCeilingRow, BrokerRow};

const BATCH: u32 = 100;
const CONCURRENCY: usize = 32;
/// The deeper pipeline the client alone is also measured at.
const DEEP: usize = 256;

/// Measures noop, NATS JetStream, RabbitMQ and Kafka on every engine, then the brokers alone.
pub async fn run(ctx: &mut Ctx) {
    drains(ctx).await;
    ceilings(ctx).await;
}

/// The brokers with no outbox: the emitter alone at 32 in flight, the client alone at 32
/// and at 256, on a destination of their own, as many messages as a drain delivers.
async fn ceilings(ctx: &mut Ctx) {
    let plan = ctx.plan.clone();
    for broker in BROKERS {
        let destination = Destination::of(broker).await;
        let destination = match destination {
            Ok(d) => d,
            Err(why) => {
                ctx.skip(format!("broker ceilings: {broker}: {why}"));
                continue;
            }
        };
        let (messages, bytes) = (plan.broker_entries, plan.payload_bytes);
        for (publisher, in_flight) in [
            ("emitter", CONCURRENCY),
            ("client", CONCURRENCY),
            ("client", DEEP),
        ] {
            let measured = if publisher == "emitter" {
                destination.emitter_rate(messages, in_flight, bytes).await
            } else {
                destination.client_rate(messages, in_flight, bytes).await
            };
            match measured {
                Ok(per_s) => {
                    progress(format_args!(
                        "brokers {broker}, {publisher} alone, {in_flight} in flight: {per_s:.0}/s"
                    ));
                    ctx.results.broker_ceilings.push(BrokerCeilingRow {
                        broker: broker.to_owned(),
                        publisher: publisher.to_owned(),
                        in_flight,
                        messages,
                        payload_bytes: bytes,
                        per_s,
                    });
                }
                Err(why) => ctx.skip(format!(
                    "broker ceilings: {broker}, {publisher} at {in_flight} in flight: {why}"
                )),
            }
        }
        destination.remove().await;
    }
}

async fn drains(ctx: &mut Ctx) {
    let plan = ctx.plan.clone();
    for engine in ctx.engines.clone() {
        for target in std::iter::once("noop").chain(BROKERS) {
            let destination = match target {
                "noop" => None,
                broker => match Destination::of(broker).await {
                    Ok(d) => Some(d),
                    Err(why) => {
                        outbox_testkit::engines::unavailable(Destination::engine(broker), &why);
                        ctx.skip(format!("brokers: {broker}: {why}"));
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
