//! Runs the service on each driver against the test PostgreSQL server: clients post orders
//! at once, and every committed order's event must reach the emitter exactly once, while
//! refused orders write nothing at all.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use outbox_core::async_trait;
use outbox_core::drain::{Emission, EmitOutcome, Emitter};
use outbox_example_orders::{OrderPlaced, Service, Settings, Stack, EVENT_TOPIC};
use outbox_testkit::postgres::PgTestDb;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use uuid::Uuid;

const CLIENTS: usize = 8;
const ORDERS_PER_CLIENT: usize = 25;

/// Every emission, by event id.
#[derive(Default)]
struct Recorder {
    seen: Mutex<HashMap<Uuid, Vec<OrderPlaced>>>,
}

#[async_trait]
impl Emitter for Recorder {
    async fn emit(&self, emission: Emission<'_>) -> EmitOutcome {
        let entry = emission.entry;
        assert_eq!(entry.topic, EVENT_TOPIC);
        let event: OrderPlaced = serde_json::from_slice(&entry.payload).expect("event JSON");
        self.seen
            .lock()
            .unwrap()
            .entry(entry.id.as_uuid())
            .or_default()
            .push(event);
        EmitOutcome::delivered()
    }
}

impl Recorder {
    fn distinct(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

/// One `POST /orders` on a connection of its own: the status and the JSON reply.
async fn post(addr: SocketAddr, body: &str) -> (u16, Value) {
    let mut stream = TcpStream::connect(addr)
        .await
        .expect("connect to the service");
    let request = format!(
        "POST /orders HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).await.unwrap();
    let status = reply[9..12].parse().expect("a status code");
    let json = reply.split("\r\n\r\n").nth(1).unwrap_or_default();
    (status, serde_json::from_str(json).unwrap_or(Value::Null))
}

async fn count(db: &PgTestDb, sql: &str) -> i64 {
    let sql = sql.replace("{schema}", &db.schema);
    db.connect()
        .await
        .query_one(&sql, &[])
        .await
        .unwrap()
        .get(0)
}

async fn every_committed_order_is_emitted_once(stack: Stack) {
    let Some(db) = PgTestDb::create().await else {
        return;
    };
    let settings = Settings {
        database_url: db.url.clone(),
        schema: db.schema.clone(),
    };
    let recorder = Arc::new(Recorder::default());
    let service = Service::start(&settings, stack, recorder.clone())
        .await
        .expect("start the service");
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(service.serve(listener, async {
        let _ = stopped.await;
    }));

    // Refused orders write neither an order nor an event.
    let (status, _) = post(addr, r#"{"customer":"","total_cents":5}"#).await;
    assert_eq!(status, 422);
    let (status, _) = post(addr, r#"{"customer":"ann","total_cents":-1}"#).await;
    assert_eq!(status, 422);
    let (status, _) = post(addr, r#"{"customer":"ann""#).await;
    assert_eq!(status, 400);

    let clients = (0..CLIENTS).map(|c| {
        tokio::spawn(async move {
            let mut placed = Vec::new();
            for i in 0..ORDERS_PER_CLIENT {
                let body = format!(r#"{{"customer":"client-{c}","total_cents":{i}}}"#);
                let (status, reply) = post(addr, &body).await;
                assert_eq!(status, 201, "{reply}");
                let id = |k: &str| Uuid::parse_str(reply[k].as_str().unwrap()).unwrap();
                placed.push((id("order_id"), id("event_id"), format!("client-{c}"), i));
            }
            placed
        })
    });
    let mut placed = Vec::new();
    for client in clients {
        placed.extend(client.await.unwrap());
    }
    let total = CLIENTS * ORDERS_PER_CLIENT;
    assert_eq!(placed.len(), total);

    tokio::time::timeout(Duration::from_secs(30), async {
        while recorder.distinct() < total {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} of {total} events emitted in 30 s", recorder.distinct()));
    stop.send(()).unwrap();
    let summary = running.await.unwrap().expect("the service stops cleanly");

    let seen = recorder.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), total, "events emitted that no order wrote");
    for (order_id, event_id, customer, total_cents) in &placed {
        let emitted = seen.get(event_id).expect("every committed order's event");
        assert_eq!(
            emitted.len(),
            1,
            "event {event_id} emitted {} times",
            emitted.len()
        );
        let expected = OrderPlaced {
            order_id: *order_id,
            customer: customer.clone(),
            total_cents: i64::try_from(*total_cents).unwrap(),
        };
        assert_eq!(emitted[0], expected);
    }
    assert_eq!(summary.delivered, total as u64, "{summary:?}");
    assert_eq!(summary.not_applied, 0, "{summary:?}");
    let orders = count(&db, r#"SELECT count(*) FROM "{schema}".orders"#).await;
    assert_eq!(orders, total as i64);
    let delivered = count(
        &db,
        r#"SELECT count(*) FROM "{schema}".outbox WHERE delivered_at IS NOT NULL"#,
    )
    .await;
    assert_eq!(delivered, total as i64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlx_every_committed_order_is_emitted_once() {
    every_committed_order_is_emitted_once(Stack::Sqlx).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_tokio_postgres_every_committed_order_is_emitted_once() {
    every_committed_order_is_emitted_once(Stack::TokioPostgres).await;
}
