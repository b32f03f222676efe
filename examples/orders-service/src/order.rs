//! The order a client posts and the event the service publishes for it.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The topic of the event written with each order.
pub const EVENT_TOPIC: &str = "orders.placed";

/// The body of `POST /orders`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NewOrder {
    /// Who ordered: 1 to 200 characters.
    pub customer: String,
    /// The order's total in cents; not negative.
    pub total_cents: i64,
}

impl NewOrder {
    /// Why the order cannot be taken, if it cannot.
    pub fn problem(&self) -> Option<&'static str> {
        let length = self.customer.trim().chars().count();
        if length == 0 || self.customer.chars().count() > 200 {
            Some("customer must be 1 to 200 characters")
        } else if self.total_cents < 0 {
            Some("total_cents must not be negative")
        } else {
            None
        }
    }
}

/// The event's payload: what a consumer needs to know of a new order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderPlaced {
    /// The order's id.
    pub order_id: Uuid,
    /// Who ordered.
    pub customer: String,
    /// The total in cents.
    pub total_cents: i64,
}

impl OrderPlaced {
    /// The outbox entry announcing `order` under `order_id`; its id is the event's id.
    pub(crate) fn entry(order_id: Uuid, order: &NewOrder) -> outbox_core::NewEntry {
        let event = Self {
            order_id,
            customer: order.customer.clone(),
            total_cents: order.total_cents,
        };
        let payload = serde_json::to_vec(&event).expect("an event always serializes");
        outbox_core::NewEntry::new(EVENT_TOPIC, payload).header("content-type", "application/json")
    }
}
