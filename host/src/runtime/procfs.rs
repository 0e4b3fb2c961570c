//! No guest reaches a procfs mount, whatever it was granted.
//!
//! The guest runs inside the shim's own process, so `/proc/self` is the
//! shim: `/proc/self/mem` reads and *writes* the shim's memory (a process
//! may write its own mappings, even read-only code), which would hand an
//! `unrestricted` guest native code execution inside the shim and every
//! secret it holds, the compiled cache's key among them;
//! `/proc/self/environ` shows the environment as the process received it,
//! before `crate::process_env` confined it. A path check cannot keep a
//! guest out (a bind mount of `/proc` elsewhere is the same filesystem),
//! so the preopens are built around the mounts themselves: the mount table
//! (`/proc/self/mountinfo`, read by the shim before any guest runs) names
//! every procfs mount point, and a granted directory that contains one is
//! replaced by its subdirectories, recursively, minus the ones on the way
//! to a procfs mount. wasmtime-wasi's capability filesystem then keeps the
//! guest inside those directories (no `..` above a preopen, no symlink out
//! of one), so no path the guest can name resolves into procfs.
//!
//! What a split costs: files directly inside a split directory (say
//! `/vmlinuz`) and symbolic links there (`/lib -> usr/lib` on merged-/usr
//! systems; its target stays reachable as `/usr/lib`) are not reachable.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const MOUNTINFO: &str = "/proc/self/mountinfo";

/// Mount points of procfs in this mount namespace, read once.
fn proc_mounts() -> &'static [PathBuf] {
    static MOUNTS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    MOUNTS.get_or_init(|| match std::fs::read_to_string(MOUNTINFO) {
        Ok(text) => procfs_mount_points(&text),
        // No mount table readable: no procfs is mounted where this process
        // can see it (the table lives in procfs). Fall back to the usual
        // place, to be safe.
        Err(_) => vec![PathBuf::from("/proc")],
    })
}

/// The mount points of `proc` filesystems in a mountinfo table.
fn procfs_mount_points(mountinfo: &str) -> Vec<PathBuf> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (mount, fs) = line.split_once(" - ")?;
            let fstype = fs.split(' ').next()?;
            let point = mount.split(' ').nth(4)?;
            (fstype == "proc").then(|| PathBuf::from(unescape(point)))
        })
        .collect()
}

/// Undoes mountinfo's octal escapes (`\040` for a space, and so on).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let value = bytes[i + 1..i + 4]
                .iter()
                .fold(0u32, |acc, b| acc * 8 + u32::from(b - b'0'));
            out.push(value as u8);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `host` (seen by the guest as `guest`) as preopens that reach no
/// procfs mount: itself when none lies at or below it, else its real
/// subdirectories that are not procfs mounts, each split the same way.
pub fn preopens_without_procfs(host: &Path, guest: &str) -> io::Result<Vec<(PathBuf, String)>> {
    // A directory that cannot be resolved is passed on as it is: opening
    // it as a preopen fails the same way, with the error the user sees.
    let Ok(canonical) = host.canonicalize() else {
        return Ok(vec![(host.to_path_buf(), guest.to_owned())]);
    };
    let mut out = Vec::new();
    split(&canonical, host, guest, proc_mounts(), &mut out)?;
    Ok(out)
}

fn split(
    canonical: &Path,
    host: &Path,
    guest: &str,
    mounts: &[PathBuf],
    out: &mut Vec<(PathBuf, String)>,
) -> io::Result<()> {
    if mounts.iter().any(|mount| canonical.starts_with(mount)) {
        return Ok(());
    }
    if !mounts.iter().any(|mount| mount.starts_with(canonical)) {
        out.push((host.to_path_buf(), guest.to_owned()));
        return Ok(());
    }
    // A guest name of "." (the workspace alias for relative paths) cannot
    // be split into names wasi-libc would match: relative paths then fail.
    if guest == "." {
        return Ok(());
    }
    let mut entries: Vec<_> = std::fs::read_dir(canonical)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let child_guest = if guest.ends_with('/') {
            format!("{guest}{name}")
        } else {
            format!("{guest}/{name}")
        };
        split(
            &canonical.join(&name),
            &host.join(&name),
            &child_guest,
            mounts,
            out,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procfs_mount_points_come_from_the_table() {
        let table = "\
22 1 0:21 / /proc rw,nosuid - proc proc rw
23 22 0:22 / /proc/sys/fs/binfmt_misc rw - autofs systemd-1 rw
24 1 0:23 / /srv/with\\040space rw - proc proc rw
25 1 8:1 / / rw - ext4 /dev/sda1 rw
26 1 0:24 / /sys rw - sysfs sysfs rw";
        assert_eq!(
            procfs_mount_points(table),
            [PathBuf::from("/proc"), PathBuf::from("/srv/with space")]
        );
    }

    #[test]
    fn a_directory_containing_procfs_is_split_around_it() {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        for dir in ["etc", "home/ada", "mnt/proc-here", "mnt/data"] {
            std::fs::create_dir_all(base.join(dir)).unwrap();
        }
        std::fs::write(base.join("vmlinuz"), b"").unwrap();
        std::os::unix::fs::symlink("etc", base.join("link")).unwrap();
        let mounts = [base.join("mnt/proc-here")];
        let mut out = Vec::new();
        split(&base, &base, "/", &mounts, &mut out).unwrap();
        let guest: Vec<&str> = out.iter().map(|(_, guest)| guest.as_str()).collect();
        assert_eq!(guest, ["/etc", "/home", "/mnt/data"]);
        assert_eq!(out[0].0, base.join("etc"));
        // A directory with no procfs below is kept whole; one on procfs
        // is dropped.
        let mut whole = Vec::new();
        split(
            &base.join("home"),
            &base.join("home"),
            "/home",
            &mounts,
            &mut whole,
        )
        .unwrap();
        assert_eq!(whole, [(base.join("home"), "/home".to_owned())]);
        let mut none = Vec::new();
        split(&mounts[0], &mounts[0], "/p", &mounts, &mut none).unwrap();
        assert!(none.is_empty());
        // The relative-path alias is never split.
        let mut dot = Vec::new();
        split(&base, &base, ".", &mounts, &mut dot).unwrap();
        assert!(dot.is_empty());
    }

    #[test]
    fn this_process_sees_its_own_procfs() {
        assert!(
            proc_mounts()
                .iter()
                .any(|mount| mount == Path::new("/proc"))
        );
        let root = preopens_without_procfs(Path::new("/"), "/").unwrap();
        assert!(root.iter().all(|(host, _)| !host.starts_with("/proc")));
        assert!(root.iter().any(|(_, guest)| guest == "/etc"));
    }
}
