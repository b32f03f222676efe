//! Filling a bench table fast, with SQL that writes rows exactly as the stores do (statuses,
//! times, claim fields), so every scenario starts from the state it names.

use crate::location::Location;
use crate::results::Engine;

/// What to put in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// Pending entries, due now, created after `after` earlier loaded rows.
    Pending {
        /// How many.
        count: u64,
        /// Rows already loaded ahead of these (keeps created order strictly increasing).
        after: u64,
    },
    /// Delivered history.
    Delivered(u64),
    /// Retryable failures parked an hour ahead.
    Parked(u64),
    /// A live one-hour lease on the oldest pending rows.
    LeaseHead(u64),
    /// Pending entries spread round robin over `keys` partition keys.
    Keyed {
        /// How many.
        count: u64,
        /// Over how many keys.
        keys: u64,
    },
}

/// One statement per kind of rows and engine: backend differences as data.
struct Statement {
    postgres: &'static str,
    sqlite: &'static str,
    /// `{slice_hash}` in it stands for the row's slice hash, which MariaDB's table stores
    /// with every row (see [`Rows::slice_hash`]).
    mariadb: &'static str,
}

const PENDING: Statement = Statement {
    postgres: include_str!("../sql/postgres/load_pending.sql"),
    sqlite: include_str!("../sql/sqlite/load_pending.sql"),
    mariadb: include_str!("../sql/mariadb/load_pending.sql"),
};
const DELIVERED: Statement = Statement {
    postgres: include_str!("../sql/postgres/load_delivered.sql"),
    sqlite: include_str!("../sql/sqlite/load_delivered.sql"),
    mariadb: include_str!("../sql/mariadb/load_delivered.sql"),
};
const PARKED: Statement = Statement {
    postgres: include_str!("../sql/postgres/load_parked.sql"),
    sqlite: include_str!("../sql/sqlite/load_parked.sql"),
    mariadb: include_str!("../sql/mariadb/load_parked.sql"),
};
const KEYED: Statement = Statement {
    postgres: include_str!("../sql/postgres/load_keyed.sql"),
    sqlite: include_str!("../sql/sqlite/load_keyed.sql"),
    mariadb: include_str!("../sql/mariadb/load_keyed.sql"),
};
const LEASE_HEAD: Statement = Statement {
    postgres: include_str!("../sql/postgres/lease_head.sql"),
    sqlite: include_str!("../sql/sqlite/lease_head.sql"),
    mariadb: include_str!("../sql/mariadb/lease_head.sql"),
};

impl Rows {
    fn statement(self) -> &'static Statement {
        match self {
            Rows::Pending { .. } => &PENDING,
            Rows::Delivered(_) => &DELIVERED,
            Rows::Parked(_) => &PARKED,
            Rows::LeaseHead(_) => &LEASE_HEAD,
            Rows::Keyed { .. } => &KEYED,
        }
    }

    /// The statement's parameters: count, payload bytes, rows ahead (each statement takes
    /// the leading ones it names).
    fn params(self, payload_bytes: u32) -> (i64, i32, i64) {
        let payload = i32::try_from(payload_bytes).expect("payload size fits");
        let n = |c: u64| i64::try_from(c).expect("row count fits");
        match self {
            Rows::Pending { count, after } => (n(count), payload, n(after)),
            Rows::Keyed { count, keys } => (n(count), payload, n(keys)),
            Rows::Delivered(c) | Rows::Parked(c) | Rows::LeaseHead(c) => (n(c), payload, 0),
        }
    }

    /// The slice hash of a row in MariaDB's statements (`r.id` the id, `r.k` the key):
    /// FNV-1a of the partition key, or of the id's 16 bytes when there is none.
    fn slice_hash(self) -> String {
        match self {
            // Keys are `key-N` with N a u64: at most 24 ASCII characters.
            Rows::Keyed { .. } => crate::mariadb::fnv1a_of_text("r.k", 24),
            _ => crate::mariadb::fnv1a("r.id", 16),
        }
    }

    fn arity(self) -> usize {
        match self {
            Rows::Pending { .. } | Rows::Keyed { .. } => 3,
            Rows::Delivered(_) | Rows::Parked(_) => 2,
            Rows::LeaseHead(_) => 1,
        }
    }
}

/// Writes `rows` into the table at `location`, each entry with `payload_bytes` of payload.
pub async fn load(location: &Location, rows: Rows, payload_bytes: u32) {
    let table = location.table_name();
    let (count, payload, after) = rows.params(payload_bytes);
    match location.engine {
        Engine::Postgres => {
            let sql = table.render(rows.statement().postgres);
            let client = crate::pg::client(&location.url).await;
            let all: [&(dyn tokio_postgres::types::ToSql + Sync); 3] = [&count, &payload, &after];
            client
                .execute(sql.as_str(), &all[..rows.arity()])
                .await
                .unwrap_or_else(|e| panic!("load {rows:?}: {e:?}"));
            // Flush what the load dirtied now, so no checkpoint of it lands inside the
            // measurement that follows (short drains would take its cost as their own).
            client
                .batch_execute("CHECKPOINT")
                .await
                .unwrap_or_else(|e| panic!("checkpoint after the load: {e:?}"));
        }
        Engine::Mysql => {
            let sql = crate::mariadb::render(&table, rows.statement().mariadb)
                .replace("{slice_hash}", &rows.slice_hash());
            let mut conn = crate::mariadb::connect(location).await;
            let all = [count, i64::from(payload), after];
            let query = all[..rows.arity()]
                .iter()
                .fold(sqlx::query(&sql), |q, v| q.bind(*v));
            query
                .execute(&mut conn)
                .await
                .unwrap_or_else(|e| panic!("load {rows:?}: {e}"));
            // Likewise: InnoDB writes the table's dirty pages out now (FOR EXPORT waits
            // until they are on disk), not in the background during the measurement.
            let flush = crate::mariadb::render(&table, "FLUSH TABLES {table} FOR EXPORT");
            for step in [flush, "UNLOCK TABLES".into()] {
                sqlx::raw_sql(&step)
                    .execute(&mut conn)
                    .await
                    .unwrap_or_else(|e| panic!("flush after the load: {e}"));
            }
            let _ = sqlx::Connection::close(conn).await;
        }
        Engine::Sqlite => {
            let sql = table.render(rows.statement().sqlite);
            let file = sqlite_file(&location.url).to_owned();
            tokio::task::spawn_blocking(move || {
                let conn = rusqlite::Connection::open(file).expect("open the bench file");
                conn.busy_timeout(std::time::Duration::from_secs(60))
                    .expect("busy timeout");
                let all = [count, i64::from(payload), after];
                conn.execute(&sql, rusqlite::params_from_iter(&all[..rows.arity()]))
                    .unwrap_or_else(|e| panic!("load {rows:?}: {e}"));
                // Likewise: move the load out of the WAL before anything is measured.
                conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                    .unwrap_or_else(|e| panic!("checkpoint after the load: {e}"));
            })
            .await
            .expect("loader thread");
        }
    }
}

/// The file behind a `sqlite://FILE` URL.
pub fn sqlite_file(url: &str) -> &str {
    url.trim_start_matches("sqlite://")
}
