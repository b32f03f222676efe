//! `POST /orders`: the order and its event in one transaction, whichever driver writes them.

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use outbox_core::EntryId;
use serde_json::json;
use uuid::Uuid;

use crate::{Error, NewOrder};

/// What one committed order wrote.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placed {
    pub(crate) order_id: Uuid,
    pub(crate) event_id: EntryId,
}

/// Writes an order and its event in one transaction: both or neither.
#[async_trait::async_trait]
pub(crate) trait PlaceOrder: Send + Sync {
    async fn place(&self, order: &NewOrder) -> Result<Placed, Error>;
}

/// The service's routes.
pub(crate) fn router(orders: Arc<dyn PlaceOrder>) -> Router {
    Router::new()
        .route("/orders", post(post_order))
        .with_state(orders)
}

async fn post_order(
    State(orders): State<Arc<dyn PlaceOrder>>,
    body: Result<Json<NewOrder>, JsonRejection>,
) -> Response {
    let order = match body {
        Ok(Json(order)) => order,
        Err(rejection) => return problem(rejection.status(), &rejection.body_text()),
    };
    if let Some(why) = order.problem() {
        return problem(StatusCode::UNPROCESSABLE_ENTITY, why);
    }
    match orders.place(&order).await {
        Ok(placed) => (
            StatusCode::CREATED,
            Json(json!({ "order_id": placed.order_id, "event_id": placed.event_id })),
        )
            .into_response(),
        Err(e) => {
            eprintln!("cannot place an order: {e}");
            problem(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the order could not be stored",
            )
        }
    }
}

fn problem(status: StatusCode, why: &str) -> Response {
    (status, Json(json!({ "error": why }))).into_response()
}
