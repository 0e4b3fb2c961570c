//! Shared helpers: where the binary and the guest components are, a private
//! workspace per test, and [`Shim`], a [`Session`] wrapper that panics with
//! the offending frame on any failure and checks octet's fatal rules when it
//! is dropped.

use octet_hostsim::{
    ApiVersion, ChildId, Context, Frame, FrameKind, InitializeParams, Launch, ManifestSpec, Reply,
    RpcError, Session, StderrLine,
};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::ffi::OsString;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// octet's ordinary request timeout (docs/protocol.md#deadline-table);
/// generous for every reply.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The host waits 2 s for the shutdown acknowledgement and 2 s for the exit
/// (docs/protocol.md#shutdown-request); the margin absorbs a loaded test
/// machine.
pub const SHUTDOWN_ACK: Duration = Duration::from_millis(2_500);
pub const EXIT_AFTER_SHUTDOWN: Duration = Duration::from_millis(2_500);
/// stdin EOF: a 2 s bounded drain plus a 0.25 s grace
/// (docs/protocol.md#end-of-input), plus margin.
pub const EXIT_AFTER_EOF: Duration = Duration::from_secs(3);
/// How long to wait for a stderr record the shim writes right away.
pub const LOG_TIMEOUT: Duration = Duration::from_secs(10);

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ has a parent")
        .to_owned()
}

/// The shim binary under test. Every test that runs it asks for it here,
/// so this is where the suite refuses to run outside a private home.
///
/// `OCTET_WASM_TEST_SHIM` names another build of the same source: cargo
/// uplifts every build of the binary to one path per target directory, so
/// two checkouts sharing a target directory overwrite each other's. Only
/// this harness reads it; the shim never does.
pub fn shim_binary() -> PathBuf {
    ensure_private_home();
    std::env::var_os("OCTET_WASM_TEST_SHIM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_octet-wasm")))
}

/// What `scripts/private-home` leaves in the home it makes.
const TEST_HOME_MARKER: &str = ".octet-wasm-test-home";

/// Panics unless the user database names a home that `scripts/private-home`
/// made: the shim keeps its cache, its key and the user's policy under
/// that home (and in the keyring of the user namespace it made), so tests
/// run anywhere else would change the real user's.
fn ensure_private_home() {
    static CHECKED: OnceLock<()> = OnceLock::new();
    CHECKED.get_or_init(|| {
        let home = octet_wasm::user_dirs::home_dir();
        let private = home
            .as_ref()
            .is_some_and(|home| home.join(TEST_HOME_MARKER).is_file());
        assert!(
            private,
            "the e2e tests run the shim, which writes under the user's home ({}) and keyring: run them through scripts/test, or as `scripts/private-home --home target/test-home -- cargo test ...`, so they get a private home",
            home.map_or_else(|| "none".to_owned(), |home| home.display().to_string())
        );
    });
}

/// The compiled-component cache the shim uses: the private test home's
/// (the home from the user database, see [`ensure_private_home`]), shared
/// by every test of the run. Entries are keyed by the component's bytes,
/// so tests in parallel never disturb each other; a test that plants
/// entries uses a component no other test runs.
pub fn cache_dir() -> PathBuf {
    ensure_private_home();
    octet_wasm::user_dirs::cache_dir().expect("the test user has a home in the user database")
}

/// A home of one test's own, inside a user and mount namespace of its own
/// (`scripts/private-home`): a policy written there, or a cache key made
/// or lost in its keyring, is seen by the shims this test starts in it
/// and by nothing else. A process kept asleep in the namespace holds it
/// (and its keyrings) for the value's life; every command enters it with
/// nsenter. Its cache starts empty, so it suits guests that compile
/// quickly (the Rust ones).
pub struct PrivateHome {
    dir: TempDir,
    holder: std::process::Child,
}

impl PrivateHome {
    pub fn new() -> PrivateHome {
        PrivateHome::start(false)
    }

    /// A namespace whose user database has no entry for this user, and
    /// whose nsswitch.conf names LDAP, SSSD and systemd: the user of a
    /// company machine (`scripts/private-home --nss-only`).
    pub fn nss_only() -> PrivateHome {
        PrivateHome::start(true)
    }

    fn start(nss_only: bool) -> PrivateHome {
        use std::os::unix::fs::PermissionsExt;
        ensure_private_home();
        let dir = tempfile::tempdir().expect("a temporary directory");
        let home = dir.path().join("home");
        std::fs::create_dir(&home).expect("create the private home");
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700))
            .expect("make the private home private");
        let mut command = std::process::Command::new(repo_root().join("scripts/private-home"));
        command.arg("--home").arg(&home);
        if nss_only {
            command.arg("--nss-only");
        }
        let holder = command
            .args(["--", "/bin/sleep", "infinity"])
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("start scripts/private-home");
        let private = PrivateHome { dir, holder };
        // The namespace is ready once the wrapper has become `sleep`.
        let comm = format!("/proc/{}/comm", private.holder.id());
        let started = Instant::now();
        while std::fs::read_to_string(&comm).map_or(true, |name| name.trim() != "sleep") {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "scripts/private-home did not set up the namespace"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        private
    }

    /// The home directory the shims see.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `~/.config/octet-wasm/policy.toml` of this home (not yet written).
    pub fn policy_path(&self) -> PathBuf {
        self.home().join(".config/octet-wasm/policy.toml")
    }

    /// Writes the user's policy file (mode 0600, every directory 0700).
    pub fn write_policy(&self, text: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.policy_path();
        let mut dir = self.home();
        for part in [".config", "octet-wasm"] {
            dir.push(part);
            std::fs::create_dir_all(&dir).expect("create the policy directory");
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        std::fs::write(&path, text).expect("write the policy");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        path
    }

    /// The command prefix that runs a program in this home.
    pub fn wrapper(&self) -> Vec<OsString> {
        vec![
            "/usr/bin/nsenter".into(),
            "--target".into(),
            self.holder.id().to_string().into(),
            "--user".into(),
            "--mount".into(),
            "--".into(),
        ]
    }

    /// `octet-wasm ARGS...` in this home, for commands other than `run`.
    pub fn shim_command(&self) -> std::process::Command {
        let wrapper = self.wrapper();
        let mut command = std::process::Command::new(&wrapper[0]);
        command.args(&wrapper[1..]).arg(shim_binary());
        command
    }
}

impl Default for PrivateHome {
    fn default() -> Self {
        PrivateHome::new()
    }
}

impl Drop for PrivateHome {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// `target/components/<name>.wasm`, built by `scripts/build-guests`.
pub fn component(name: &str) -> PathBuf {
    let path = repo_root()
        .join("target")
        .join("components")
        .join(format!("{name}.wasm"));
    assert!(
        path.is_file(),
        "guest component {} is missing: run scripts/build-guests first",
        path.display()
    );
    path
}

/// The guest language the example transcripts run against: `OCTET_WASM_LANG`
/// (`rust`, `python`, `js` or `c`; default `rust`). The transcript modules
/// (hello_world, hello_delay, turn_tracker) are one suite, run once per
/// language by `scripts/test`.
pub fn guest_language() -> String {
    std::env::var("OCTET_WASM_LANG")
        .ok()
        .filter(|lang| !lang.is_empty())
        .unwrap_or_else(|| "rust".to_owned())
}

/// The example's extension directory for [`guest_language`], holding
/// `extension.toml` and `<name>.wasm`: `examples/<name>/` for Rust,
/// `examples/<name>/<lang>/` for the other languages.
pub fn example_dir(name: &str) -> PathBuf {
    let lang = guest_language();
    let mut dir = repo_root().join("examples").join(name);
    if lang != "rust" {
        dir = dir.join(&lang);
    }
    for file in ["extension.toml".to_owned(), format!("{name}.wasm")] {
        assert!(
            dir.join(&file).is_file(),
            "{} is missing: run scripts/build-guests first",
            dir.join(&file).display()
        );
    }
    dir
}

/// The probe guest's tools (`tests/guests/probe/src/lib.rs`);
/// `contributes.tools` must equal them exactly.
pub const PROBE_TOOLS: &[&str] = &[
    // outcomes
    "echo",
    "fail",
    "invalid",
    "panic",
    "unreachable",
    "exit",
    "counter",
    // time
    "spin",
    "spin_polite",
    "sleep",
    "sleep_then_echo",
    "recurse",
    // sizes
    "alloc",
    "grow_forever",
    "big_result",
    "many_parts",
    "nested",
    "structured",
    // host services
    "progress",
    "progress_then_fail",
    "decorate",
    "notify",
    "confirm",
    "input",
    // the sandbox
    "read_file",
    "list_dir",
    "write_file",
    "env",
    "connect",
    "stdout_flood",
    "stderr_flood",
    // links (refused)
    "symlink",
    "hard_link",
    // observation
    "lifecycle_count",
    // API 0.2 service imports (presentation, secrets, policy, artifacts,
    // dynamic tools)
    "present",
    "secret",
    "policy",
    "artifact",
    "dyn_register",
    "dyn_unregister",
    "dyn_many",
    "dyn_current",
    // child agent sessions
    "agent_spawn",
    "agent_send",
    "agent_follow_up",
    "agent_list",
    "agent_wait",
    "agent_interrupt",
    "agent_models",
    // floods and blocked host calls (hostile_output)
    "log_flood",
    "notice_flood",
    "flood_then_trap",
    "fifo_read",
];

/// The probe's manifest.
pub fn probe_manifest(api_version: ApiVersion) -> ManifestSpec {
    ManifestSpec::new("probe", api_version)
        .description("Multi-mode test guest")
        .filesystem("workspace")
        .tools(PROBE_TOOLS)
        .commands(&["stats"])
        .hooks(&[
            "before_prompt",
            "after_response",
            "before_tool_call",
            "after_tool_call",
        ])
        .ui(&["status"])
        .context(true)
        .tool_renderers(&["echo", "spin"])
        .notifications(true)
        .confirmations(true)
}

/// The hello-world example's manifest facts (`hello-world.md`).
pub fn hello_world_manifest() -> ManifestSpec {
    ManifestSpec::new("hello-world", ApiVersion::V0_1)
        .description("A tiny language-neutral octet extension example")
        .tools(&["hello_world"])
        .commands(&["hello"])
        .hooks(&["before_prompt", "after_response"])
        .ui(&["status"])
        .context(true)
        .tool_renderers(&["hello_world"])
        .notifications(true)
}

/// One running shim with its own workspace and scratch directory.
pub struct Shim {
    session: Session,
    pub manifest: ManifestSpec,
    pub manifest_path: PathBuf,
    pub workspace: PathBuf,
    /// Keeps the temporary directories alive while the shim runs.
    _dirs: TempDir,
    /// The private home the shim runs in, if the test gave it one to keep.
    _home: Option<PrivateHome>,
}

impl Shim {
    /// Starts `octet-wasm run <component_arg>` for the extension in
    /// `extension_dir`.
    pub fn start(extension_dir: &Path, component_arg: &str, manifest: ManifestSpec) -> Shim {
        let dirs = tempfile::tempdir().expect("create a temporary directory");
        Shim::start_in(dirs, extension_dir, component_arg, manifest)
    }

    /// Like [`Shim::start`], with the workspace and scratch directory made
    /// inside `dirs`.
    fn start_in(
        dirs: TempDir,
        extension_dir: &Path,
        component_arg: &str,
        manifest: ManifestSpec,
    ) -> Shim {
        Shim::start_in_with_args(dirs, extension_dir, component_arg, manifest, &[])
    }

    /// Like [`Shim::start_in`], with `extra_args` after `run <component>`
    /// (e.g. `--deadline-ms render=250`).
    fn start_in_with_args(
        dirs: TempDir,
        extension_dir: &Path,
        component_arg: &str,
        manifest: ManifestSpec,
        extra_args: &[&str],
    ) -> Shim {
        Shim::start_in_with_env(
            dirs,
            extension_dir,
            component_arg,
            manifest,
            extra_args,
            &[],
        )
    }

    /// Like [`Shim::start_in_with_args`], with `env` added to the shim's
    /// environment (as octet's allowlist or brokered variables would be).
    fn start_in_with_env(
        dirs: TempDir,
        extension_dir: &Path,
        component_arg: &str,
        manifest: ManifestSpec,
        extra_args: &[&str],
        env: &[(&str, &str)],
    ) -> Shim {
        Shim::start_wrapped(
            dirs,
            extension_dir,
            component_arg,
            manifest,
            extra_args,
            env,
            &[],
        )
    }

    /// Like [`Shim::start_in_with_env`], with the shim run by `wrapper`
    /// (a program and its arguments before the shim's path: strace, a
    /// [`PrivateHome`]).
    pub fn start_wrapped(
        dirs: TempDir,
        extension_dir: &Path,
        component_arg: &str,
        manifest: ManifestSpec,
        extra_args: &[&str],
        env: &[(&str, &str)],
        wrapper: &[OsString],
    ) -> Shim {
        let workspace = dirs.path().join("workspace");
        let scratch = dirs.path().join("scratch");
        std::fs::create_dir_all(&workspace).expect("create the workspace");
        std::fs::create_dir_all(&scratch).expect("create the scratch directory");
        let manifest_path = extension_dir.join("extension.toml");
        let mut launch = match wrapper.split_first() {
            Some((program, rest)) => Launch::new(program).args(rest).arg(shim_binary()),
            None => Launch::new(shim_binary()),
        }
        .args(["run", component_arg])
        .args(extra_args);
        for (key, value) in env {
            launch = launch.env(key, value);
        }
        let session = launch
            .extension_dir(extension_dir)
            .manifest_path(&manifest_path)
            .workspace(&workspace)
            .scratch(&scratch)
            .api_version(manifest.api_version)
            .name(&manifest.name)
            .env("RUST_BACKTRACE", "1")
            .spawn()
            .expect("spawn octet-wasm");
        Shim {
            session,
            manifest,
            manifest_path,
            workspace,
            _dirs: dirs,
            _home: None,
        }
    }

    /// `octet-wasm run <component_arg> <extra_args>` for the extension in
    /// `extension_dir`, with `env` added the way a manifest's
    /// `[entrypoint].env` would add it.
    pub fn start_with_env(
        extension_dir: &Path,
        component_arg: &str,
        manifest: ManifestSpec,
        extra_args: &[&str],
        env: &[(&str, &str)],
    ) -> Shim {
        let dirs = tempfile::tempdir().expect("create a temporary directory");
        Shim::start_in_with_env(
            dirs,
            extension_dir,
            component_arg,
            manifest,
            extra_args,
            env,
        )
    }

    /// Keeps `home` (whose namespace the shim runs in) alive as long as
    /// the shim.
    pub fn keeping(mut self, home: PrivateHome) -> Shim {
        self._home = Some(home);
        self
    }

    /// The hello-world example, from `examples/hello-world`.
    pub fn hello_world() -> Shim {
        Shim::start(
            &example_dir("hello-world"),
            "hello-world.wasm",
            hello_world_manifest(),
        )
    }

    /// The probe guest with a generated manifest for `api_version`.
    pub fn probe(api_version: ApiVersion) -> Shim {
        Shim::probe_with(probe_manifest(api_version))
    }

    /// The probe guest with the given manifest, written to a temporary
    /// extension directory.
    pub fn probe_with(manifest: ManifestSpec) -> Shim {
        let component = component("probe");
        let dirs = tempfile::tempdir().expect("create a temporary directory");
        let extension_dir = dirs.path().join("extension");
        std::fs::create_dir_all(&extension_dir).expect("create the extension directory");
        let component_arg = component.to_string_lossy().into_owned();
        let toml = manifest.to_extension_toml("octet-wasm", &["run", &component_arg]);
        std::fs::write(extension_dir.join("extension.toml"), toml)
            .expect("write the probe manifest");
        Shim::start_in(dirs, &extension_dir, &component_arg, manifest)
    }

    /// `initialize` params for this shim's manifest, workspace and version.
    pub fn init_params(&self) -> Value {
        InitializeParams::new(&self.manifest, &self.manifest_path, &self.workspace).to_json()
    }

    /// Sends `initialize` and returns its reply.
    pub fn initialize_with(&mut self, params: Value) -> Reply {
        self.call("initialize", params)
    }

    /// Initializes and returns the result; panics on an error reply.
    pub fn initialize(&mut self) -> Value {
        let params = self.init_params();
        let reply = self.initialize_with(params);
        expect_result(&reply).clone()
    }

    /// An execution context for this workspace.
    pub fn context(&self) -> Value {
        let context = Context::new(&self.workspace);
        match self.manifest.api_version {
            ApiVersion::V0_1 => context.to_json(),
            ApiVersion::V0_2 | ApiVersion::V0_4 => context
                .resource_owner("session-1", "instance-1", 1)
                .to_json(),
        }
    }

    /// Sends a request and waits for its reply.
    pub fn call(&mut self, method: &str, params: Value) -> Reply {
        self.session
            .call(method, params, REQUEST_TIMEOUT)
            .unwrap_or_else(|error| panic!("{method}: {error}"))
    }

    /// Waits for the reply to `id`.
    pub fn reply(&mut self, id: u64) -> Reply {
        self.session
            .wait_response(id, REQUEST_TIMEOUT)
            .unwrap_or_else(|error| panic!("request {id}: {error}"))
    }

    /// `tool/call` params for `name` with `arguments`.
    pub fn tool_params(&self, name: &str, arguments: Value) -> Value {
        json!({"name": name, "arguments": arguments, "context": self.context()})
    }

    /// Calls a tool and waits for its reply.
    pub fn tool(&mut self, name: &str, arguments: Value) -> Reply {
        let params = self.tool_params(name, arguments);
        self.call("tool/call", params)
    }

    /// Sends the next request, panicking on a write error.
    pub fn send_request(&mut self, method: &str, params: Value) -> u64 {
        self.session
            .request(method, params)
            .unwrap_or_else(|error| panic!("send {method}: {error}"))
    }

    /// Writes raw bytes, panicking on a write error.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.session
            .send_raw(bytes)
            .unwrap_or_else(|error| panic!("write raw input: {error}"));
    }

    /// Calls `echo` and asserts that its reply is the only frame written
    /// since the previous reply: proves the shim is alive and wrote nothing
    /// for the input before it.
    pub fn assert_alive_and_silent(&mut self, after: &str) {
        let reply = self.tool("echo", json!({"text": "still alive"}));
        assert!(
            reply.before.is_empty(),
            "after {after} the shim wrote frames before the next reply: {:?}",
            raws(&reply.before)
        );
        assert_eq!(
            tool_text(&reply),
            "still alive",
            "echo after {after}: {}",
            reply.frame.raw
        );
    }

    /// Waits for a structured stderr record past the first `skip` records.
    pub fn wait_new_record(&self, skip: usize, after: &str) -> StderrLine {
        let mut seen = 0;
        self.stderr()
            .wait_for(LOG_TIMEOUT, |line| {
                if line.record.is_none() {
                    return false;
                }
                seen += 1;
                seen > skip
            })
            .unwrap_or_else(|| {
                panic!(
                    "no JSON stderr record after {after}; stderr so far:\n{}",
                    stderr_text(self)
                )
            })
    }

    /// Waits for the process to exit.
    pub fn exit_status(&mut self, timeout: Duration) -> ExitStatus {
        self.session
            .wait_exit(timeout)
            .unwrap_or_else(|error| panic!("{error}; stderr:\n{}", stderr_text(self)))
    }

    /// Sends `shutdown`, expects `{}` within the ack stage and exit status 0
    /// within the exit stage, with nothing else on stdout.
    pub fn shutdown(&mut self) {
        let id = self.send_request("shutdown", json!({}));
        let reply = self
            .session
            .wait_response(id, SHUTDOWN_ACK)
            .unwrap_or_else(|error| panic!("shutdown: {error}"));
        assert_eq!(
            reply.frame.raw,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
        );
        let status = self.exit_status(EXIT_AFTER_SHUTDOWN);
        assert_eq!(status.code(), Some(0), "exit status after shutdown");
        let rest = self
            .session
            .read_to_eof(Duration::from_secs(5))
            .unwrap_or_else(|error| panic!("after shutdown: {error}"));
        assert!(rest.is_empty(), "frames after shutdown: {:?}", raws(&rest));
    }
}

impl Deref for Shim {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.session
    }
}

impl DerefMut for Shim {
    fn deref_mut(&mut self) -> &mut Session {
        &mut self.session
    }
}

impl Drop for Shim {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        if let Err(violation) = self.session.check_clean() {
            panic!("{violation}\nstderr:\n{}", stderr_text(self));
        }
    }
}

/// The successful result of a reply; panics with the error otherwise.
pub fn expect_result(reply: &Reply) -> &Value {
    match reply.outcome() {
        Ok(result) => result,
        Err(error) => panic!("expected a result, got {error}: {}", reply.frame.raw),
    }
}

/// The error of a reply; panics with the result otherwise.
pub fn expect_error(reply: &Reply) -> &RpcError {
    match reply.outcome() {
        Err(error) => error,
        Ok(_) => panic!("expected an error, got {}", reply.frame.raw),
    }
}

/// The text of an `is_error` tool result; panics on a success or an RPC
/// error.
pub fn tool_error(reply: &Reply, what: &str) -> String {
    let result = expect_result(reply);
    assert_eq!(
        result["is_error"], true,
        "{what} should fail: {}",
        reply.frame.raw
    );
    tool_text(reply)
}

/// The text of a successful tool result.
pub fn tool_ok(reply: &Reply, what: &str) -> String {
    let result = expect_result(reply);
    assert_eq!(
        result["is_error"], false,
        "{what} should succeed: {}",
        reply.frame.raw
    );
    tool_text(reply)
}

/// The text of a tool result: the 0.1 `content` string or the 0.2 text parts
/// joined.
pub fn tool_text(reply: &Reply) -> String {
    let result = expect_result(reply);
    match &result["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|part| part["type"] == "text")
            .filter_map(|part| part["text"].as_str())
            .collect(),
        other => panic!("tool result content is {other}: {}", reply.frame.raw),
    }
}

/// The raw lines of frames, for messages.
pub fn raws(frames: &[Frame]) -> Vec<&str> {
    frames.iter().map(|frame| frame.raw.as_str()).collect()
}

/// Everything on stderr so far, for failure messages.
pub fn stderr_text(shim: &Shim) -> String {
    shim.stderr()
        .lines()
        .iter()
        .map(|line| line.text.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

// ----- API 0.2 runtime helpers ---------------------------------------

/// The host's cancellation grace (docs/protocol.md#host-cancellation) and
/// shutdown acknowledgement stage (docs/protocol.md#shutdown-request): an
/// answer later than this costs the extension its process.
pub const HOST_GRACE: Duration = Duration::from_secs(2);

/// The manifest facts of the hello-delay example (`examples/hello-delay`).
pub fn hello_delay_manifest() -> ManifestSpec {
    ManifestSpec::new("hello-delay", ApiVersion::V0_2)
        .version("0.2.0")
        .description("Return a local greeting, after an optional cancellable delay")
        .tools(&["hello"])
}

/// The turn-tracker example's manifest facts (`turn-tracker.md`).
pub fn turn_tracker_manifest() -> ManifestSpec {
    ManifestSpec::new("turn-tracker", ApiVersion::V0_2)
        .version("0.2.0")
        .description("Track which turns are active (a sandboxed keep-awake)")
        .commands(&["turns"])
        .ui(&["status"])
        .notifications(true)
}

/// Responses gathered by [`Shim::responses`], keyed by request id.
pub struct Responses {
    /// The response frame for each awaited id.
    pub by_id: HashMap<u64, Frame>,
    /// When each response was read.
    pub arrived: HashMap<u64, Instant>,
    /// The awaited ids in the order their responses arrived.
    pub order: Vec<u64>,
    /// Every other frame, in order (notifications, child requests).
    pub others: Vec<Frame>,
}

impl Responses {
    /// The response to `id`.
    pub fn frame(&self, id: u64) -> &Frame {
        self.by_id
            .get(&id)
            .unwrap_or_else(|| panic!("no response to request {id}"))
    }

    /// The outcome of the response to `id`.
    pub fn outcome(&self, id: u64) -> &Result<Value, RpcError> {
        self.frame(id)
            .outcome()
            .unwrap_or_else(|| unreachable!("responses hold response frames"))
    }
}

impl Shim {
    /// The hello-delay example, from `examples/hello-delay`.
    pub fn hello_delay() -> Shim {
        Shim::start(
            &example_dir("hello-delay"),
            "hello-delay.wasm",
            hello_delay_manifest(),
        )
    }

    /// The turn-tracker example, from `examples/turn-tracker`.
    pub fn turn_tracker() -> Shim {
        Shim::start(
            &example_dir("turn-tracker"),
            "turn-tracker.wasm",
            turn_tracker_manifest(),
        )
    }

    /// The probe guest with `extra_args` after `run <component>` (e.g.
    /// `--deadline-ms request=1000`).
    pub fn probe_with_args(manifest: ManifestSpec, extra_args: &[&str]) -> Shim {
        Shim::probe_wrapped(manifest, extra_args, &[], &[])
    }

    /// The probe guest with `extra_args` after `run <component>` and `env`
    /// added to the shim's environment.
    pub fn probe_with_env(
        manifest: ManifestSpec,
        extra_args: &[&str],
        env: &[(&str, &str)],
    ) -> Shim {
        Shim::probe_wrapped(manifest, extra_args, env, &[])
    }

    /// Like [`Shim::probe_with_env`], run by `wrapper` (see
    /// [`Shim::start_wrapped`]).
    pub fn probe_wrapped(
        manifest: ManifestSpec,
        extra_args: &[&str],
        env: &[(&str, &str)],
        wrapper: &[OsString],
    ) -> Shim {
        let component = component("probe");
        let dirs = tempfile::tempdir().expect("create a temporary directory");
        let extension_dir = dirs.path().join("extension");
        std::fs::create_dir_all(&extension_dir).expect("create the extension directory");
        let component_arg = component.to_string_lossy().into_owned();
        let mut args = vec!["run", component_arg.as_str()];
        args.extend_from_slice(extra_args);
        let toml = manifest.to_extension_toml("octet-wasm", &args);
        std::fs::write(extension_dir.join("extension.toml"), toml)
            .expect("write the probe manifest");
        Shim::start_wrapped(
            dirs,
            &extension_dir,
            &component_arg,
            manifest,
            extra_args,
            env,
            wrapper,
        )
    }

    /// The host's `initialize` offer for this shim, to adjust before
    /// sending (API 0.2: the real 21 optional features and a limit of 64).
    pub fn offer(&self) -> InitializeParams {
        InitializeParams::new(&self.manifest, &self.manifest_path, &self.workspace)
    }

    /// Sends a `tool/call` without waiting; returns its id.
    pub fn send_tool(&mut self, name: &str, arguments: Value) -> u64 {
        let params = self.tool_params(name, arguments);
        self.send_request("tool/call", params)
    }

    /// Reads frames until every id in `ids` has its response, in whatever
    /// order they come; panics after `timeout`.
    pub fn responses(&mut self, ids: &[u64], timeout: Duration) -> Responses {
        let deadline = Instant::now() + timeout;
        let mut responses = Responses {
            by_id: HashMap::new(),
            arrived: HashMap::new(),
            order: Vec::new(),
            others: Vec::new(),
        };
        while responses.by_id.len() < ids.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = self.recv(left).unwrap_or_else(|error| {
                panic!(
                    "waiting for responses to {ids:?} (have {:?}): {error}\nstderr:\n{}",
                    responses.order,
                    stderr_text(self)
                )
            });
            match frame.response_id() {
                Some(id) if ids.contains(&id) && !responses.by_id.contains_key(&id) => {
                    responses.arrived.insert(id, Instant::now());
                    responses.order.push(id);
                    responses.by_id.insert(id, frame);
                }
                Some(_) => panic!("unexpected response {}", frame.raw),
                None => responses.others.push(frame),
            }
        }
        responses
    }
}

/// `result.protocol` of an API 0.2 initialize result.
pub fn protocol(result: &Value) -> &Value {
    let protocol = &result["protocol"];
    assert!(protocol.is_object(), "no protocol object in {result}");
    protocol
}

/// How the simulated host answers one child request.
pub enum ChildAnswer {
    Result(Value),
    Error(i64, &'static str),
    /// Leave it unanswered.
    Ignore,
}

/// Waits for the reply to `id`, answering every child request with
/// `answer`; returns the reply and the child requests seen (in order).
pub fn serve_children(
    shim: &mut Shim,
    id: u64,
    mut answer: impl FnMut(&Frame) -> ChildAnswer,
) -> (Reply, Vec<Frame>) {
    let mut children = Vec::new();
    let mut before = Vec::new();
    loop {
        let frame = shim
            .recv(REQUEST_TIMEOUT)
            .unwrap_or_else(|error| panic!("waiting for the reply to {id}: {error}"));
        match &frame.kind {
            FrameKind::Response { id: got, .. } if *got == id => {
                return (Reply { frame, before }, children);
            }
            FrameKind::Request { id: child, .. } => {
                let child: ChildId = child.clone();
                match answer(&frame) {
                    ChildAnswer::Result(result) => shim.respond(&child, result).expect("respond"),
                    ChildAnswer::Error(code, message) => shim
                        .respond_error(&child, code, message)
                        .expect("respond with an error"),
                    ChildAnswer::Ignore => {}
                }
                children.push(frame.clone());
            }
            _ => {}
        }
        before.push(frame);
    }
}
