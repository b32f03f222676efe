//! Worker processes for fault tests: the running test binary started again with
//! `--exact <test>`, told by environment variables what to do. The named test returns at
//! once when its role variable is absent, so in an ordinary run it does nothing.

use std::process::{Command, Stdio};

/// A command that runs only the test `test` (its module path in the running test binary)
/// in a new process, with the variable `role` set to mark it as the child, and `envs`.
pub fn command(test: &str, role: &str, envs: &[(&str, &str)]) -> Command {
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
pub fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("a worker process needs {name}"))
}

/// True in the child process `role` marks.
pub fn is(role: &str) -> bool {
    std::env::var_os(role).is_some()
}
