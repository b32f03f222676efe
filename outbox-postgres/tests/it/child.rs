//! Worker processes: this test binary re-run with `--exact <test>`, told by environment
//! variables what to do. The named test returns at once when its variable is absent, so
//! in an ordinary run it is a no-op.

use std::process::{Command, Stdio};

/// The server URL a child connects to.
pub(crate) const URL: &str = "OUTBOX_IT_CHILD_URL";
/// The schema whose outbox table the child works on.
pub(crate) const SCHEMA: &str = "OUTBOX_IT_CHILD_SCHEMA";
/// The owner name the child claims under.
pub(crate) const OWNER: &str = "OUTBOX_IT_CHILD_OWNER";
/// Where the child writes its records.
pub(crate) const LOG: &str = "OUTBOX_IT_CHILD_LOG";

/// A command that runs only the test `test` (its module path in this binary) in a new
/// process, with `role` set to mark it as the child.
pub(crate) fn command(test: &str, role: &str, envs: &[(&str, &str)]) -> Command {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut cmd = Command::new(exe);
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(role, "1")
        .stdin(Stdio::null());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd
}

/// The variable `name`, which a child requires.
pub(crate) fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("a worker process needs {name}"))
}

/// True in the child process `role` marks.
pub(crate) fn is(role: &str) -> bool {
    std::env::var_os(role).is_some()
}

/// A store for a child process on the parent's schema.
pub(crate) async fn store() -> outbox_postgres::PgClaimStore {
    let schema = var(SCHEMA);
    let table = outbox_core::TableName::in_schema(&schema, "outbox").unwrap();
    let pool = crate::support::pool(crate::support::pg_config(&var(URL), &var(OWNER)), 2);
    outbox_postgres::PgClaimStore::new(pool, outbox_postgres::PgStoreConfig::new().table(table))
        .await
        .expect("worker store")
}
