//! A small ext4 file system on a loop device, mounted with `errors=remount-ro`, which a
//! test can make fail the way ext4 fails on a disk error: the kernel remounts it read-only
//! under the open database, and every write after that is refused with `EROFS`. The error
//! is raised through ext4's own `trigger_fs_error` switch, made for such tests. Needs
//! root, a loop device and `mkfs.ext4`; reported (as `sqlite-faults`) where it cannot mount.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::tmpfs::refuse;

/// A mounted ext4 image; unmounted (and its loop device freed) on drop.
pub(crate) struct Ext4 {
    mount_point: tempfile::TempDir,
    /// Holds the image file.
    _image_dir: tempfile::TempDir,
    /// The loop device's name (`loop3`), the ext4 sysfs directory's name.
    device: String,
}

/// Runs `cmd`; its standard error when it fails.
fn run(cmd: &mut Command) -> Result<String, String> {
    match cmd.output() {
        Ok(out) if out.status.success() => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!("cannot run {cmd:?}: {e}")),
    }
}

impl Ext4 {
    /// Makes an ext4 image of `mib` MiB and mounts it on a new temporary directory, or
    /// reports why it cannot and returns `None`.
    pub(crate) fn mount(mib: u64) -> Option<Self> {
        let image_dir = tempfile::tempdir().expect("temp dir");
        let image = image_dir.path().join("disk.img");
        let mount_point = tempfile::tempdir().expect("temp dir");
        let made = std::fs::File::create(&image)
            .and_then(|f| f.set_len(mib << 20))
            .map_err(|e| format!("cannot make the image: {e}"))
            .and_then(|()| run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image)))
            .and_then(|_| {
                run(Command::new("mount")
                    .args(["-o", "loop,errors=remount-ro"])
                    .arg(&image)
                    .arg(mount_point.path()))
            })
            .and_then(|_| {
                run(Command::new("findmnt")
                    .args(["-n", "-o", "SOURCE"])
                    .arg(mount_point.path()))
            });
        match made {
            Ok(source) => {
                let device = source.trim().trim_start_matches("/dev/").to_owned();
                Some(Self {
                    mount_point,
                    _image_dir: image_dir,
                    device,
                })
            }
            Err(why) => {
                refuse(&why);
                None
            }
        }
    }

    /// The database file the stores of these tests use.
    pub(crate) fn db(&self) -> PathBuf {
        self.mount_point.path().join("outbox.db")
    }

    /// The mount point.
    pub(crate) fn path(&self) -> &Path {
        self.mount_point.path()
    }

    /// Raises a file system error: ext4 aborts its journal and the kernel remounts the
    /// file system read-only, as it does on a failing disk.
    pub(crate) fn fail(&self) {
        let switch = format!("/sys/fs/ext4/{}/trigger_fs_error", self.device);
        std::fs::write(&switch, "1").unwrap_or_else(|e| panic!("writing {switch}: {e}"));
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        // Lazy: a connection the test leaked must not keep the mount alive; the loop
        // device is freed with the last reference.
        let _ = Command::new("umount").arg("-l").arg(self.path()).output();
    }
}
