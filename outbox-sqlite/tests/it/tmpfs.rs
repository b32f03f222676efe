//! A small filesystem of its own that a test can fill and grow again: a tmpfs mounted on
//! a temporary directory (this needs root), unmounted when the guard drops.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use outbox_sqlite::{SqliteClaimStore, SqliteStoreConfig};

/// The name the skip report uses and `OUTBOX_TEST_REQUIRE` lists to make a skip a failure.
pub(crate) const REQUIRE_NAME: &str = "sqlite-faults";

/// A mounted tmpfs; unmounted (with what it holds) on drop.
pub(crate) struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` (`mount`'s syntax: `3m`) on a new temporary directory.
    /// Where mounting is not possible (not root, no permission) it says so loudly and
    /// returns `None`, or fails the test when `OUTBOX_TEST_REQUIRE` lists `sqlite-faults`.
    pub(crate) fn mount(size: &str) -> Option<Self> {
        let dir = tempfile::tempdir().expect("temp dir");
        let done = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match done {
            Ok(out) if out.status.success() => Some(Self { dir }),
            Ok(out) => {
                let why = String::from_utf8_lossy(&out.stderr);
                refuse(&format!("mount -t tmpfs failed: {}", why.trim()));
                None
            }
            Err(e) => {
                refuse(&format!("cannot run mount: {e}"));
                None
            }
        }
    }

    /// The mount point.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The database file the stores of these tests use.
    pub(crate) fn db(&self) -> PathBuf {
        self.path().join("outbox.db")
    }

    /// Grows (or shrinks) the filesystem to `size`, keeping what it holds.
    pub(crate) fn resize(&self, size: &str) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(self.path())
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "remount to {size} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Fills every byte left with a filler file; returns its path (delete it to free the
    /// space again).
    pub(crate) fn fill(&self) -> PathBuf {
        let path = self.path().join("filler");
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .expect("create the filler");
        // Large writes first, then smaller ones for the last pages.
        for block in [1 << 16, 1 << 12, 1 << 9] {
            let bytes = vec![0u8; block];
            loop {
                match file.write_all(&bytes) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::StorageFull => break,
                    Err(e) => panic!("writing the filler: {e}"),
                }
            }
        }
        path
    }

    /// Fills the filesystem but for about `bytes` (see [`Tmpfs::fill`]).
    pub(crate) fn fill_but(&self, bytes: u64) -> PathBuf {
        let path = self.fill();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open the filler");
        let len = file.metadata().expect("the filler's size").len();
        file.set_len(len.saturating_sub(bytes))
            .expect("shorten the filler");
        path
    }

    /// A migrated store on [`Tmpfs::db`].
    pub(crate) async fn store(&self, config: SqliteStoreConfig) -> SqliteClaimStore {
        crate::support::store_at(&self.db(), config).await
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazy: a connection the test leaked must not keep the mount alive.
        let _ = Command::new("umount").arg("-l").arg(self.path()).output();
    }
}

/// Reports the fault tests' file system as unavailable (loudly; a failure where required).
pub(crate) fn refuse(why: &str) {
    outbox_testkit::engines::unavailable(
        REQUIRE_NAME,
        &format!("{why}; these tests mount small file systems and need root"),
    );
}

/// Empties the write-ahead log into the database file and truncates it, so the next
/// commit has to grow the log and meets a full disk at once.
pub(crate) async fn truncate_wal(pool: &sqlx::SqlitePool) {
    let busy: i64 = sqlx::query_scalar("PRAGMA wal_checkpoint(TRUNCATE)")
        .fetch_one(pool)
        .await
        .expect("checkpoint");
    assert_eq!(busy, 0, "a reader kept the log from being truncated");
}
