//! The user's policy fails closed (issue 23, part 4): a `policy.toml` that
//! is there but cannot be used (a typo, a bad value, a file or a directory
//! on the way someone else controls) makes `run` answer `initialize` with
//! an error naming the file, line and key, and never load the guest; only
//! a missing file means the built-in ceilings.
//!
//! Every test runs the real binary in a private home: a new mount
//! namespace where `/etc/passwd` names a temporary home, so the shim's
//! user-database lookup never finds the real user's, and nothing here
//! reads or writes it.

use crate::support::{REQUEST_TIMEOUT, component, probe_manifest, shim_binary};
use octet_hostsim::{
    ApiVersion, Context, InitializeParams, Launch, ManifestSpec, Reply, RpcError, Session,
    StderrLine,
};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tempfile::TempDir;

// ---------------------------------------------------------------------
// Minimal private-home helper, local to this file until the shared
// `support::PrivateHome` lands (switch over at merge).
// ---------------------------------------------------------------------

/// A user whose home is a fresh temporary directory, as the user database
/// of the shim's own mount namespace names it.
struct PrivateHome {
    root: TempDir,
    home: PathBuf,
    passwd: PathBuf,
    /// `None`: the test runner's own uid, in a new user namespace (a fresh
    /// kernel keyring too). `Some(uid)`: another uid (needs root), so the
    /// user's own links and files are not root's.
    other_uid: Option<u32>,
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

fn egid() -> u32 {
    // SAFETY: getegid has no preconditions and cannot fail.
    unsafe { libc::getegid() }
}

/// An unused uid for [`PrivateHome::as_other_user`].
const OTHER_UID: u32 = 61_234;

fn first_existing(candidates: &[&str]) -> PathBuf {
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|path| path.exists())
        .unwrap_or_else(|| panic!("none of {candidates:?} exists"))
}

impl PrivateHome {
    fn new() -> PrivateHome {
        PrivateHome::make(None)
    }

    /// A home for a uid other than root's, so that what the user owns is
    /// told apart from what root owns. The test runner must be root (as
    /// here and in CI).
    fn as_other_user() -> PrivateHome {
        assert_eq!(
            euid(),
            0,
            "this test runs the shim as uid {OTHER_UID}, which needs root"
        );
        PrivateHome::make(Some(OTHER_UID))
    }

    fn make(other_uid: Option<u32>) -> PrivateHome {
        let root = tempfile::tempdir().expect("create a temporary directory");
        // Root's and not writable by others, so it passes the ancestor
        // checks, and searchable by the other uid.
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let home = root.path().join("home");
        std::fs::create_dir(&home).unwrap();
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
        let uid = other_uid.unwrap_or_else(euid);
        let passwd = root.path().join("passwd");
        std::fs::write(
            &passwd,
            format!("tester:x:{uid}:{uid}:tester:{}:/bin/sh\n", home.display()),
        )
        .unwrap();
        let home = PrivateHome {
            root,
            home,
            passwd,
            other_uid,
        };
        home.give(&home.home);
        home
    }

    /// Makes `path` the test user's.
    fn give(&self, path: &Path) {
        if let Some(uid) = self.other_uid {
            std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
        }
    }

    /// A directory of the test user's below the home (and its parents).
    fn user_dir(&self, below: &str) -> PathBuf {
        let mut path = self.home.clone();
        for name in Path::new(below).components() {
            path.push(name);
            if !path.exists() {
                std::fs::create_dir(&path).unwrap();
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).unwrap();
                self.give(&path);
            }
        }
        path
    }

    fn policy_path(&self) -> PathBuf {
        self.home.join(".config/octet-wasm/policy.toml")
    }

    /// Writes the user's policy file with `mode`.
    fn write_policy(&self, text: &str, mode: u32) -> PathBuf {
        self.user_dir(".config/octet-wasm");
        let path = self.policy_path();
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        self.give(&path);
        path
    }

    /// A command line tool run of `octet-wasm <args>` in the private home,
    /// from `cwd`, outside octet (no `OCTET_*` variable).
    fn output(&self, args: &[&str]) -> std::process::Output {
        let cwd = self.root.path();
        let mut command = self
            .launch(args)
            .manifest_path(cwd.join("extension.toml"))
            .workspace(cwd)
            .scratch(cwd)
            .command()
            .expect("build the command");
        command.env_clear().env("HOME", &self.home);
        command.output().expect("run octet-wasm")
    }

    /// `octet-wasm <args>` as octet would launch it, inside the private
    /// home.
    fn launch(&self, args: &[&str]) -> Launch {
        let unshare = first_existing(&["/usr/bin/unshare", "/bin/unshare"]);
        let shell = "mount --bind \"$1\" /etc/passwd && shift && exec \"$@\"";
        let mut launch = Launch::new(unshare);
        launch = match self.other_uid {
            None => launch.args([
                "--user".to_owned(),
                format!("--map-user={}", euid()),
                format!("--map-group={}", egid()),
                "--mount".to_owned(),
            ]),
            Some(_) => launch.arg("--mount"),
        };
        launch = launch
            .args(["--", "/bin/sh", "-c"])
            .arg(format!("PATH=/usr/sbin:/usr/bin:/sbin:/bin; {shell}"))
            .arg("sh")
            .arg(&self.passwd);
        if let Some(uid) = self.other_uid {
            let setpriv = first_existing(&["/usr/bin/setpriv", "/bin/setpriv"]);
            launch = launch.arg(setpriv).args([
                format!("--reuid={uid}"),
                format!("--regid={uid}"),
                "--clear-groups".to_owned(),
                "--".to_owned(),
            ]);
        }
        launch.arg(shim_binary()).args(args).env("HOME", &self.home)
    }
}

// ---------------------------------------------------------------------

/// The probe, run by octet from an extension directory of the bundle's,
/// inside `home`.
struct Run {
    session: Session,
    manifest: ManifestSpec,
    manifest_path: PathBuf,
    extension_dir: PathBuf,
    workspace: PathBuf,
}

impl Run {
    fn start(home: &PrivateHome) -> Run {
        let manifest = probe_manifest(ApiVersion::V0_2);
        let component = component("probe").to_string_lossy().into_owned();
        let extension_dir = home.root.path().join("extension");
        std::fs::create_dir_all(&extension_dir).unwrap();
        std::fs::set_permissions(&extension_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        home.give(&extension_dir);
        let manifest_path = extension_dir.join("extension.toml");
        std::fs::write(
            &manifest_path,
            manifest.to_extension_toml("octet-wasm", &["run", &component]),
        )
        .unwrap();
        let workspace = home.root.path().join("workspace");
        let scratch = home.root.path().join("scratch");
        for dir in [&workspace, &scratch] {
            std::fs::create_dir_all(dir).unwrap();
            home.give(dir);
        }
        std::fs::write(workspace.join("hello.txt"), "in the workspace").unwrap();
        let session = home
            .launch(&["run", &component])
            .extension_dir(&extension_dir)
            .manifest_path(&manifest_path)
            .workspace(&workspace)
            .scratch(&scratch)
            .api_version(manifest.api_version)
            .name(&manifest.name)
            .spawn()
            .expect("spawn octet-wasm in a private home");
        Run {
            session,
            manifest,
            manifest_path,
            extension_dir,
            workspace,
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Reply {
        self.session
            .call(method, params, REQUEST_TIMEOUT)
            .unwrap_or_else(|error| panic!("{method}: {error}; stderr:\n{}", self.stderr()))
    }

    fn initialize(&mut self) -> Reply {
        let params =
            InitializeParams::new(&self.manifest, &self.manifest_path, &self.workspace).to_json();
        self.call("initialize", params)
    }

    fn stderr(&self) -> String {
        self.session
            .stderr()
            .lines()
            .iter()
            .map(|line| line.text.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// `read_file hello.txt` in the workspace: whether the guest got it.
    fn reads_the_workspace(&mut self) -> bool {
        let context = Context::new(&self.workspace)
            .resource_owner("session-1", "instance-1", 1)
            .to_json();
        let reply = self.call(
            "tool/call",
            json!({"name": "read_file", "arguments": {"path": "hello.txt"}, "context": context}),
        );
        let result = reply
            .outcome()
            .as_ref()
            .unwrap_or_else(|error| panic!("read_file: {error}"));
        let text = result.to_string();
        !result["is_error"].as_bool().unwrap_or(false) && text.contains("in the workspace")
    }

    /// The refusal: `initialize` answered with an error, and the shim's one
    /// error record about the policy file.
    fn refused(&mut self) -> (RpcError, StderrLine) {
        let reply = self.initialize();
        let error = match reply.outcome() {
            Err(error) => error.clone(),
            Ok(result) => panic!(
                "initialize succeeded under a policy that cannot be used: {result}\nstderr:\n{}",
                self.stderr()
            ),
        };
        let record = self
            .session
            .stderr()
            .wait_for(Duration::from_secs(5), |line| {
                line.level() == Some("error")
                    && line
                        .message()
                        .is_some_and(|message| message.starts_with("the policy file"))
            })
            .unwrap_or_else(|| panic!("no policy error record; stderr:\n{}", self.stderr()));
        (error, record)
    }

    /// What a refused start must not have done: load (so run) the guest,
    /// or touch the compiled cache.
    fn assert_guest_never_loaded(&self, home: &PrivateHome) {
        let loaded = self
            .session
            .stderr()
            .lines()
            .iter()
            .any(|line| line.message() == Some("component loaded"));
        assert!(!loaded, "the component was loaded:\n{}", self.stderr());
        assert!(
            !home.home.join(".cache/octet-wasm").exists(),
            "the cache was opened"
        );
    }

    /// octet's shutdown after a failed initialize: acknowledged, exit 0,
    /// nothing octet would die of on stdout.
    fn shutdown(mut self) {
        let reply = self.call("shutdown", json!({}));
        assert_eq!(reply.outcome().as_ref().ok(), Some(&json!({})));
        let status = self
            .session
            .wait_exit(Duration::from_secs(5))
            .expect("the shim exits after shutdown");
        assert_eq!(status.code(), Some(0), "stderr:\n{}", self.stderr());
        if let Err(violation) = self.session.check_clean() {
            panic!("{violation}\nstderr:\n{}", self.stderr());
        }
    }
}

#[test]
fn a_typo_refuses_to_start_naming_the_file_line_and_key() {
    let home = PrivateHome::new();
    let path = home.write_policy(
        "memory_mib = 512\n\n[capabilities]\nfilesytem = \"none\"\n",
        0o600,
    );
    let mut run = Run::start(&home);
    let (error, record) = run.refused();
    for needle in [
        path.display().to_string().as_str(),
        "line 4, column 1",
        "key `capabilities.filesytem`",
        "unknown field",
        "does not start until it is fixed or removed",
    ] {
        assert!(
            error.message.contains(needle),
            "{needle:?}: {}",
            error.message
        );
    }
    assert_eq!(
        record.field("path"),
        Some(&json!(path.display().to_string()))
    );
    assert_eq!(record.field("line"), Some(&json!(4)));
    assert_eq!(record.field("column"), Some(&json!(1)));
    assert_eq!(record.field("key"), Some(&json!("capabilities.filesytem")));
    run.assert_guest_never_loaded(&home);
    run.shutdown();
}

#[test]
fn filesystem_none_beside_a_typo_never_gives_the_workspace_back() {
    let home = PrivateHome::new();
    // What the user meant applies...
    home.write_policy("[capabilities]\nfilesystem = \"none\"\n", 0o600);
    let mut run = Run::start(&home);
    let reply = run.initialize();
    assert!(reply.outcome().is_ok(), "{}", reply.frame.raw);
    assert!(
        !run.reads_the_workspace(),
        "filesystem = \"none\" was not applied"
    );
    run.shutdown();
    // ... and a misspelt unrelated key does not bring back the built-in
    // ceilings (workspace access): the extension does not start at all.
    let home = PrivateHome::new();
    home.write_policy(
        "[capabilities]\nfilesystem = \"none\"\nnetwrok = false\n",
        0o600,
    );
    let mut run = Run::start(&home);
    let (error, _) = run.refused();
    assert!(
        error
            .message
            .contains("line 3, column 1, key `capabilities.netwrok`"),
        "{}",
        error.message
    );
    run.assert_guest_never_loaded(&home);
    run.shutdown();
    // Without a file the built-in ceilings apply (the manifest's
    // workspace grant), as before.
    std::fs::remove_file(home.policy_path()).unwrap();
    let mut run = Run::start(&home);
    let reply = run.initialize();
    assert!(reply.outcome().is_ok(), "{}", reply.frame.raw);
    assert!(run.reads_the_workspace(), "no workspace without a policy");
    run.shutdown();
}

#[test]
fn a_config_directory_linked_into_the_bundle_is_refused() {
    let home = PrivateHome::as_other_user();
    // The bundle's own directory holds a policy that would widen every
    // grant; ~/.config/octet-wasm leads there.
    let planted = home.root.path().join("extension/config");
    std::fs::create_dir_all(&planted).unwrap();
    home.give(&planted);
    std::fs::write(
        planted.join("policy.toml"),
        "[capabilities]\nfilesystem = \"unrestricted\"\nnetwork = true\n",
    )
    .unwrap();
    home.give(&planted.join("policy.toml"));
    let link = home.user_dir(".config").join("octet-wasm");
    std::os::unix::fs::symlink(&planted, &link).unwrap();
    home.give(&link);
    let mut run = Run::start(&home);
    assert!(planted.starts_with(&run.extension_dir));
    let (error, record) = run.refused();
    assert!(
        error.message.contains("cannot be trusted")
            && error.message.contains(&link.display().to_string())
            && error.message.contains("symbolic link"),
        "{}",
        error.message
    );
    assert_eq!(
        record.field("path"),
        Some(&json!(home.policy_path().display().to_string()))
    );
    run.assert_guest_never_loaded(&home);
    run.shutdown();
}

#[test]
fn a_user_owned_link_for_the_config_directory_is_refused() {
    let home = PrivateHome::as_other_user();
    let real = home.user_dir("dotfiles/config");
    let octet = real.join("octet-wasm");
    std::fs::create_dir(&octet).unwrap();
    home.give(&octet);
    std::fs::write(octet.join("policy.toml"), "memory_mib = 64\n").unwrap();
    home.give(&octet.join("policy.toml"));
    let link = home.home.join(".config");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    home.give(&link);
    let mut run = Run::start(&home);
    let (error, _) = run.refused();
    assert!(
        error
            .message
            .contains(&format!("{} is a symbolic link", link.display())),
        "{}",
        error.message
    );
    run.assert_guest_never_loaded(&home);
    run.shutdown();
}

#[test]
fn a_policy_others_can_write_is_refused() {
    for mode in [0o620, 0o602] {
        let home = PrivateHome::new();
        home.write_policy("memory_mib = 64\n", mode);
        let mut run = Run::start(&home);
        let (error, record) = run.refused();
        assert!(
            error.message.contains("cannot be trusted") && error.message.contains("writable by"),
            "{mode:o}: {}",
            error.message
        );
        assert!(
            record
                .field("error")
                .and_then(Value::as_str)
                .is_some_and(|e| e.contains("chmod go-w")),
            "{}",
            record.text
        );
        run.assert_guest_never_loaded(&home);
        run.shutdown();
    }
}

#[test]
fn compile_refuses_too_and_check_reports_it_as_a_problem() {
    let home = PrivateHome::new();
    let path = home.write_policy("fuel = 0\n", 0o600);
    let component = component("probe").to_string_lossy().into_owned();
    let output = home.output(&["compile", &component]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("\"level\":\"error\""))
        .collect();
    assert_eq!(errors.len(), 1, "one error line: {stderr}");
    assert!(
        errors[0].contains(&path.display().to_string())
            && errors[0].contains("line 1, column 8, key `fuel`: must be at least 1"),
        "{stderr}"
    );
    assert!(!home.home.join(".cache/octet-wasm").exists());

    // `check` (an author tool: outside octet) says the same, as a problem.
    let dir = home.root.path().join("bundle");
    std::fs::create_dir(&dir).unwrap();
    let manifest = probe_manifest(ApiVersion::V0_2);
    let manifest_path = dir.join("extension.toml");
    std::fs::write(
        &manifest_path,
        manifest.to_extension_toml("octet-wasm", &["run", &component]),
    )
    .unwrap();
    let output = home.output(&["check", &manifest_path.to_string_lossy()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("problem") && stdout.contains("key `fuel`: must be at least 1"),
        "{stdout}"
    );
}
