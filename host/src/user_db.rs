//! The effective user's home directory from the user database, without
//! loading any code.
//!
//! glibc answers `getpwuid` through its name-service modules (NSS): shared
//! objects it `dlopen`s at run time, from paths the environment can steer
//! and, in a static binary, with a loader that crashes when a module other
//! than `files` answers (LDAP, SSSD, systemd-homed). The shim is a static
//! musl binary instead (`.cargo/config.toml`): musl's `getpwuid_r` reads
//! `/etc/passwd` and asks a running `nscd` over its socket, and can load
//! nothing. Users that only a name-service module knows are then asked of
//! systemd's user database over its varlink socket, which every systemd
//! machine serves and which itself bridges to NSS (in systemd's own
//! process, not ours). Neither path reads the environment.

use serde_json::Value;
use std::ffi::CStr;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// systemd-userdbd's multiplexer: it answers for every user database the
/// machine has (files, homed, NSS through `io.systemd.NameServiceSwitch`).
const USERDB_SOCKET: &str = "/run/systemd/userdb/io.systemd.Multiplexer";
/// The answer is one user record; a bigger one is not a record.
const MAX_REPLY_BYTES: u64 = 1 << 20;
/// A start waits at most this long for the user database.
const USERDB_TIMEOUT: Duration = Duration::from_secs(2);

/// Where the home was found, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `/etc/passwd` (or `nscd`), through musl's `getpwuid_r`.
    Passwd,
    /// systemd's user database.
    Userdb,
}

/// The effective user's home: `Ok(None)` when no database names one; the
/// error says what failed, for the one-line message a start logs.
pub fn home(uid: u32) -> Result<Option<(PathBuf, Source)>, String> {
    if let Some(home) = from_passwd(uid) {
        return Ok(Some((home, Source::Passwd)));
    }
    match from_userdb(Path::new(USERDB_SOCKET), uid, 0) {
        Ok(Some(home)) => Ok(Some((home, Source::Userdb))),
        Ok(None) => Ok(None),
        Err(err) => Err(err),
    }
}

fn from_passwd(uid: u32) -> Option<PathBuf> {
    let mut buffer = vec![0u8; 4096];
    loop {
        // SAFETY: all-zero is a valid `passwd` (null pointers, zero ids).
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is valid for the call; the strings the entry
        // points to live in `buffer`, which outlives their use below.
        let status = unsafe {
            libc::getpwuid_r(
                uid,
                &mut entry,
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                &mut found,
            )
        };
        if status == libc::ERANGE && buffer.len() < 1 << 20 {
            buffer.resize(buffer.len() * 4, 0);
            continue;
        }
        if status != 0 || found.is_null() || entry.pw_dir.is_null() {
            return None;
        }
        // SAFETY: getpwuid_r succeeded, so pw_dir is a NUL-terminated
        // string inside `buffer`.
        let dir = unsafe { CStr::from_ptr(entry.pw_dir) };
        let dir = PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes()));
        return dir.is_absolute().then_some(dir);
    }
}

/// Asks systemd's user database at `socket` for `uid`'s record. `Ok(None)`:
/// no such service on this machine, or it knows no such user. `owner` is
/// root's uid but in tests: only root can make a socket in /run/systemd,
/// so one of another owner is not systemd's.
fn from_userdb(socket: &Path, uid: u32, owner: u32) -> Result<Option<PathBuf>, String> {
    let Ok(meta) = std::fs::symlink_metadata(socket) else {
        return Ok(None);
    };
    if !meta.file_type().is_socket() || meta.uid() != owner {
        return Ok(None);
    }
    let fail = |what: &str, err: std::io::Error| {
        format!(
            "systemd's user database ({}): {what}: {err}",
            socket.display()
        )
    };
    let mut stream = UnixStream::connect(socket).map_err(|err| fail("cannot connect", err))?;
    stream
        .set_read_timeout(Some(USERDB_TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(USERDB_TIMEOUT)))
        .map_err(|err| fail("cannot set a timeout", err))?;
    let mut request = serde_json::to_vec(&serde_json::json!({
        "method": "io.systemd.UserDatabase.GetUserRecord",
        "parameters": { "uid": uid, "service": "io.systemd.Multiplexer" },
    }))
    .expect("a JSON literal serializes");
    request.push(0);
    stream
        .write_all(&request)
        .map_err(|err| fail("cannot ask", err))?;
    let mut reply = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut limited = (&stream).take(MAX_REPLY_BYTES);
    loop {
        let got = limited
            .read(&mut chunk)
            .map_err(|err| fail("no answer", err))?;
        if got == 0 {
            break;
        }
        reply.extend_from_slice(&chunk[..got]);
        if reply.contains(&0) {
            break;
        }
    }
    let end = reply.iter().position(|&b| b == 0).ok_or_else(|| {
        format!(
            "systemd's user database ({}): an unterminated answer",
            socket.display()
        )
    })?;
    home_in_reply(&reply[..end])
        .map_err(|why| format!("systemd's user database ({}): {why}", socket.display()))
}

/// The home directory in a varlink reply to `GetUserRecord`.
fn home_in_reply(reply: &[u8]) -> Result<Option<PathBuf>, String> {
    let reply: Value = serde_json::from_slice(reply)
        .map_err(|err| format!("an answer that is not JSON: {err}"))?;
    if let Some(error) = reply.get("error").and_then(Value::as_str) {
        return match error {
            "io.systemd.UserDatabase.NoRecordFound" => Ok(None),
            other => Err(format!("it answered {other}")),
        };
    }
    let home = reply
        .pointer("/parameters/record/homeDirectory")
        .and_then(Value::as_str)
        .map(PathBuf::from);
    Ok(home.filter(|home| home.is_absolute()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn a_user_record_names_its_home() {
        let reply = br#"{"parameters":{"record":{"userName":"ada","uid":60001,"homeDirectory":"/home/ada"},"incomplete":false}}"#;
        assert_eq!(
            home_in_reply(reply).unwrap(),
            Some(PathBuf::from("/home/ada"))
        );
        let missing = br#"{"error":"io.systemd.UserDatabase.NoRecordFound","parameters":{}}"#;
        assert_eq!(home_in_reply(missing).unwrap(), None);
        let relative = br#"{"parameters":{"record":{"homeDirectory":"home/ada"}}}"#;
        assert_eq!(home_in_reply(relative).unwrap(), None);
        assert!(
            home_in_reply(br#"{"error":"io.systemd.System"}"#)
                .unwrap_err()
                .contains("io.systemd.System")
        );
        assert!(home_in_reply(b"not json").is_err());
    }

    #[test]
    fn the_varlink_exchange_asks_by_uid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("userdb");
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut asked = Vec::new();
            let mut byte = [0u8; 1];
            while stream.read(&mut byte).unwrap() == 1 && byte[0] != 0 {
                asked.push(byte[0]);
            }
            stream
                .write_all(
                    b"{\"parameters\":{\"record\":{\"homeDirectory\":\"/home/homed-user\"}}}\0",
                )
                .unwrap();
            serde_json::from_slice::<Value>(&asked).unwrap()
        });
        let owner = std::fs::symlink_metadata(&path).unwrap().uid();
        assert_eq!(
            from_userdb(&path, 60_123, owner).unwrap(),
            Some(PathBuf::from("/home/homed-user"))
        );
        let asked = server.join().unwrap();
        assert_eq!(asked["method"], "io.systemd.UserDatabase.GetUserRecord");
        assert_eq!(asked["parameters"]["uid"], 60_123);
        // A socket someone else made is not asked.
        assert_eq!(from_userdb(&path, 60_123, owner + 1).unwrap(), None);
    }

    #[test]
    fn no_userdb_service_means_no_answer() {
        assert_eq!(
            from_userdb(Path::new("/nonexistent/socket"), 1, 0).unwrap(),
            None
        );
    }
}
