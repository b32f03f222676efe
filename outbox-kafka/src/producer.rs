//! One sender per partition. Emissions queue their record and wait; the sender produces
//! what is queued (up to 7 KiB of records) in one request, and while it waits for the
//! acknowledgement the next emissions queue up for the request after. Many emissions in
//! flight thus cost a request per round trip, not a request each.
//!
//! Why 7 KiB: the client writes a request through an 8 KiB buffer and does not turn off
//! Nagle's algorithm, so a larger request leaves in two writes and the second waits for
//! the broker's delayed acknowledgement of the first (up to 40 ms on Linux). Measured
//! against tansu on loopback, 32 emissions of 1 KiB in flight over 3 partitions: requests
//! of up to 32 KiB made about 1,000 records/s, requests under 8 KiB about 22,000; several
//! requests in flight per partition made fewer (about 15,000 with 2, 10,000 to 14,000
//! with 4), since each carried fewer records. A single record larger than the buffer
//! still pays the wait.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use outbox_core::drain::{EmitOutcome, RouteFault};
use rskafka::client::error::{Error, ProtocolError};
use rskafka::client::partition::{Compression, PartitionClient};
use rskafka::record::Record;
use tokio::sync::{mpsc, oneshot};

/// Why a record was not acknowledged, sorted for the drain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Sending it again cannot help: dead-letter it with the reason.
    Permanent(String),
    /// Try again later.
    Retryable(String),
    /// The route failed for every record sent the same way: the fault, the destination
    /// and the broker's words.
    Route(RouteFault, String, String),
}

impl Failure {
    /// What the drain records for it.
    pub(crate) fn outcome(self) -> EmitOutcome {
        match self {
            Self::Permanent(why) => EmitOutcome::permanent(why),
            Self::Retryable(why) => EmitOutcome::retryable(why),
            Self::Route(fault, destination, why) => EmitOutcome::route(fault, destination, why),
        }
    }
}

/// The most records one request carries.
const MAX_RECORDS: usize = 500;

/// The most bytes one request carries (unless one record alone is more): records with
/// their framing (see [`wire_size`]) and the request's own, within the client's 8 KiB
/// write buffer.
const REQUEST_BYTES: usize = 7 * 1024;

/// What a request spends beyond its records: request and batch headers, the topic name.
const REQUEST_OVERHEAD: usize = 512;

/// A record's bytes on the wire, over-estimated: key, value and headers, plus the varint
/// lengths, offsets and timestamp of the record and of each header.
fn wire_size(record: &Record) -> usize {
    record.approximate_size() + 32 + 8 * record.headers.len()
}

struct Job {
    record: Record,
    reply: oneshot::Sender<Result<i64, Failure>>,
}

/// The queue of one partition's sender; the sender stops (and this reports closed) once
/// its connection failed, so the emitter starts afresh.
pub(crate) struct PartitionSender {
    queue: mpsc::UnboundedSender<Job>,
}

impl PartitionSender {
    /// Starts the sender of `client`'s partition. A request waits at most `ack_timeout`;
    /// `broken` is set when the connection failed.
    pub(crate) fn start(
        client: PartitionClient,
        ack_timeout: Duration,
        broken: Arc<AtomicBool>,
    ) -> Self {
        let (queue, jobs) = mpsc::unbounded_channel();
        let sender = Sender {
            client,
            ack_timeout,
            broken,
        };
        tokio::spawn(sender.run(jobs));
        Self { queue }
    }

    /// Whether the sender still takes records.
    pub(crate) fn is_open(&self) -> bool {
        !self.queue.is_closed()
    }

    /// Produces `record`; its offset once every in-sync replica has it.
    pub(crate) async fn send(&self, record: Record) -> Result<i64, Failure> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Job { record, reply })
            .map_err(|_| Failure::Retryable("the connection to the broker was lost".into()))?;
        answer.await.unwrap_or_else(|_| {
            Err(Failure::Retryable(
                "the connection to the broker was lost".into(),
            ))
        })
    }
}

struct Sender {
    client: PartitionClient,
    ack_timeout: Duration,
    broken: Arc<AtomicBool>,
}

impl Sender {
    async fn run(self, mut queue: mpsc::UnboundedReceiver<Job>) {
        let mut carried: Option<Job> = None;
        while !self.broken.load(Ordering::Relaxed) {
            let first = match carried.take() {
                Some(job) => job,
                None => match queue.recv().await {
                    Some(job) => job,
                    None => return,
                },
            };
            let mut bytes = REQUEST_OVERHEAD + wire_size(&first.record);
            let mut jobs = vec![first];
            while jobs.len() < MAX_RECORDS {
                let Ok(job) = queue.try_recv() else { break };
                let size = wire_size(&job.record);
                if bytes + size > REQUEST_BYTES {
                    carried = Some(job); // The next request starts with it.
                    break;
                }
                bytes += size;
                jobs.push(job);
            }
            // An emission given up (timed out, its drain stopped) is not sent.
            jobs.retain(|job| !job.reply.is_closed());
            if jobs.is_empty() {
                continue;
            }
            self.answer(jobs).await;
        }
        // Dropping the queue fails what waits in it as retryable.
    }

    /// Produces `jobs`' records in one request and answers each.
    async fn answer(&self, jobs: Vec<Job>) {
        match self.produce(&jobs).await {
            Ok(offsets) => {
                for (job, offset) in jobs.into_iter().zip(offsets) {
                    let _ = job.reply.send(Ok(offset));
                }
            }
            // A request the broker found too large: each record on its own, so only a
            // record too large by itself fails.
            Err(Refused::TooLarge(_)) if jobs.len() > 1 => {
                for job in jobs {
                    if job.reply.is_closed() || self.broken.load(Ordering::Relaxed) {
                        continue; // Given up, or failing as retryable with the link.
                    }
                    let answer = self
                        .produce(std::slice::from_ref(&job))
                        .await
                        .map(|offsets| offsets[0])
                        .map_err(Failure::from);
                    let _ = job.reply.send(answer);
                }
            }
            Err(refused) => {
                let failure = Failure::from(refused);
                for job in jobs {
                    let _ = job.reply.send(Err(failure.clone()));
                }
            }
        }
    }

    /// One produce request for `jobs`' records; one offset per record.
    async fn produce(&self, jobs: &[Job]) -> Result<Vec<i64>, Refused> {
        let records = jobs.iter().map(|job| job.record.clone()).collect();
        let sent = tokio::time::timeout(
            self.ack_timeout,
            self.client.produce(records, Compression::NoCompression),
        )
        .await;
        match sent {
            Ok(Ok(offsets)) if offsets.len() == jobs.len() => Ok(offsets),
            Ok(Ok(offsets)) => Err(Refused::Other(Failure::Retryable(format!(
                "the broker acknowledged {} of {} records",
                offsets.len(),
                jobs.len()
            )))),
            Ok(Err(e)) => Err(self.sort(e)),
            Err(_) => {
                self.broken.store(true, Ordering::Relaxed);
                Err(Refused::Other(Failure::Retryable(format!(
                    "no acknowledgement from the broker within {:?}",
                    self.ack_timeout
                ))))
            }
        }
    }

    /// What an error from the client means for the entries, marking the connection
    /// broken where a new one is needed.
    fn sort(&self, error: Error) -> Refused {
        let place = format!("{}/{}", self.client.topic(), self.client.partition());
        let Error::ServerError { protocol_error, .. } = &error else {
            self.broken.store(true, Ordering::Relaxed);
            return Refused::Other(Failure::Retryable(format!(
                "producing to {place} failed: {error}"
            )));
        };
        let why = format!("the broker refused the records for {place}: {protocol_error}");
        let route = |fault| {
            let topic = format!("topic {:?}", self.client.topic());
            Refused::Other(Failure::Route(fault, topic, why.clone()))
        };
        match protocol_error {
            ProtocolError::MessageTooLarge | ProtocolError::RecordListTooLarge => {
                Refused::TooLarge(why)
            }
            ProtocolError::UnknownTopicOrPartition => {
                // Spurious at times (a new topic, a leader moving): read the topics again
                // on the next emission. The entries are held meanwhile.
                self.broken.store(true, Ordering::Relaxed);
                route(RouteFault::Missing)
            }
            ProtocolError::TopicAuthorizationFailed
            | ProtocolError::ClusterAuthorizationFailed
            | ProtocolError::SaslAuthenticationFailed => route(RouteFault::Refused),
            ProtocolError::NotLeaderOrFollower | ProtocolError::LeaderNotAvailable => {
                // The leader moved: find it again on the next emission.
                self.broken.store(true, Ordering::Relaxed);
                route(RouteFault::Unavailable)
            }
            ProtocolError::InvalidRecord
            | ProtocolError::InvalidTimestamp
            | ProtocolError::InvalidTopicException => Refused::Other(Failure::Permanent(why)),
            _ => Refused::Other(Failure::Retryable(why)),
        }
    }
}

/// Why one request failed: too large (worth sending its records one by one) or not.
enum Refused {
    TooLarge(String),
    Other(Failure),
}

impl From<Refused> for Failure {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::TooLarge(why) => Failure::Permanent(why),
            Refused::Other(failure) => failure,
        }
    }
}
