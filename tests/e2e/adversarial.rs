//! Adversarial guests and hosts against the sandbox and the limits
//! (docs/protocol.md#deadlines, docs/choices.md#sandbox, docs/security.md).
//! Every case ends with a clear error answer — naming the limit
//! where there is one — followed by a request that succeeds; the hostsim
//! checker (run when each [`Shim`] is dropped) proves nothing but valid
//! frames reached stdout.

use crate::support::{
    HOST_GRACE, Shim, expect_error, expect_result, probe_manifest, raws, stderr_text, tool_error,
    tool_ok, tool_text,
};
use octet_hostsim::{ApiVersion, ManifestSpec, Reply, StderrLine};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// An initialized probe with `extra_args` after `run <component>`.
fn ready(manifest: ManifestSpec, extra_args: &[&str]) -> Shim {
    let mut shim = Shim::probe_with_args(manifest, extra_args);
    shim.initialize();
    shim
}

/// An initialized API 0.2 probe (filesystem "workspace").
fn probe(extra_args: &[&str]) -> Shim {
    ready(probe_manifest(ApiVersion::V0_2), extra_args)
}

fn assert_mentions(text: &str, needles: &[&str], what: &str) {
    for needle in needles {
        assert!(
            text.contains(needle),
            "{what}: {needle:?} not in the answer: {text}"
        );
    }
}

/// The next call works (on a fresh instance where the last one was
/// dropped), and nothing was written between the two answers.
fn assert_recovers(shim: &mut Shim, after: &str) {
    shim.assert_alive_and_silent(after);
}

// ----- CPU ---------------------------------------------------------------

#[test]
fn an_infinite_loop_in_a_tool_stops_at_the_request_deadline() {
    let mut shim = probe(&["--deadline-ms", "request=1500"]);
    let started = Instant::now();
    let reply = shim.tool("spin", json!({}));
    let elapsed = started.elapsed();
    let text = tool_error(&reply, "spin");
    assert_mentions(
        &text,
        &[
            "deadline of 1500 ms",
            "deadlines.request in ~/.config/octet-wasm/policy.toml",
        ],
        "spin",
    );
    assert!(
        elapsed >= Duration::from_millis(1_400) && elapsed < Duration::from_millis(2_500),
        "spin answered after {elapsed:?} with a 1500 ms deadline"
    );
    assert_recovers(&mut shim, "a runaway tool");
    shim.shutdown();
}

#[test]
fn an_infinite_loop_in_a_renderer_is_answered_before_the_host_gives_up() {
    let mut shim = probe(&[]);
    let render = |shim: &Shim, tool: &str, output: &str| {
        json!({"name": tool, "arguments": {}, "output": output, "is_error": false,
               "context": shim.context()})
    };
    let params = render(&shim, "spin", "");
    let started = Instant::now();
    let reply = shim.call("tool/render", params);
    let elapsed = started.elapsed();
    let error = expect_error(&reply);
    assert_eq!(error.code, -32000, "{}", reply.frame.raw);
    assert_eq!(error.message, "request deadline exceeded");
    let data = error.data.clone().unwrap_or(Value::Null);
    assert_eq!(data["deadline_ms"], 400, "{}", reply.frame.raw);
    assert_eq!(
        data["raise_with"],
        "deadlines.render in ~/.config/octet-wasm/policy.toml"
    );
    // octet waits 500 ms for a render (docs/protocol.md#deadline-table).
    assert!(
        elapsed < Duration::from_millis(500),
        "the runaway render was answered after {elapsed:?}"
    );
    // The primary instance was replaced; the next render works.
    let params = render(&shim, "echo", "hi");
    let reply = shim.call("tool/render", params);
    assert_eq!(
        expect_result(&reply)["segments"][0]["text"],
        "echo · hi",
        "{}",
        reply.frame.raw
    );
    assert_recovers(&mut shim, "a runaway renderer");
    shim.shutdown();
}

#[test]
fn a_loop_ignoring_cancellation_is_answered_and_interrupted() {
    let mut shim = probe(&[]);
    let records = shim.stderr().records().len();
    let id = shim.send_tool("spin", json!({}));
    std::thread::sleep(Duration::from_millis(300));
    let cancelled = Instant::now();
    shim.cancel(id, "user")
        .unwrap_or_else(|error| panic!("cancel: {error}"));
    let reply = shim.reply(id);
    let waited = cancelled.elapsed();
    let error = expect_error(&reply);
    assert_eq!(error.code, -32800, "{}", reply.frame.raw);
    assert!(
        waited < HOST_GRACE,
        "cancellation answered after {waited:?}"
    );
    // After the cancel grace the busy call is dropped and its instance
    // discarded (logged), and the shim serves on.
    let discarded = shim
        .stderr()
        .wait_for(Duration::from_secs(5), |line| {
            line.message()
                .is_some_and(|m| m.starts_with("guest instance discarded"))
        })
        .unwrap_or_else(|| panic!("no discard record; stderr:\n{}", stderr_text(&shim)));
    assert!(shim.stderr().records().len() > records);
    assert_mentions(
        discarded.text.as_str(),
        &["cancellation grace"],
        "discard record",
    );
    assert_recovers(&mut shim, "a loop that ignored its cancellation");
    shim.shutdown();
}

#[test]
fn fuel_exhaustion_is_an_error_naming_fuel() {
    let mut shim = probe(&["--fuel", "100000000"]);
    let reply = shim.tool("spin", json!({}));
    let text = tool_error(&reply, "spin with fuel");
    assert_mentions(
        &text,
        &["fuel budget of 100000000", "--fuel"],
        "spin with fuel",
    );
    // Fuel is per call: ordinary calls still fit.
    for i in 0..3 {
        let reply = shim.tool("echo", json!({"text": format!("fuelled {i}")}));
        assert_eq!(tool_ok(&reply, "echo with fuel"), format!("fuelled {i}"));
    }
    assert_recovers(&mut shim, "running out of fuel");
    shim.shutdown();
}

// ----- memory and traps ---------------------------------------------------

#[test]
fn a_memory_bomb_stops_at_the_memory_limit() {
    let mut shim = probe(&["--memory-mib", "64"]);
    let reply = shim.tool("grow_forever", json!({}));
    let text = tool_error(&reply, "grow_forever");
    assert_mentions(
        &text,
        &["memory limit of 64 MiB", "--memory-mib"],
        "grow_forever",
    );
    assert_recovers(&mut shim, "a memory bomb");
    // A fallible allocation past the limit fails inside the guest, which
    // answers for itself; one within the limit works.
    let reply = shim.tool("alloc", json!({"bytes": 100 << 20}));
    assert_mentions(
        &tool_error(&reply, "alloc 100 MiB"),
        &["allocation of 104857600 bytes failed"],
        "alloc 100 MiB",
    );
    let reply = shim.tool("alloc", json!({"bytes": 16 << 20}));
    assert_eq!(tool_ok(&reply, "alloc 16 MiB"), "allocated 16777216 bytes");
    shim.shutdown();
}

#[test]
fn deep_recursion_is_a_trap_not_a_crash() {
    let mut shim = probe(&[]);
    let reply = shim.tool("recurse", json!({"depth": 100}));
    assert_eq!(tool_ok(&reply, "recurse 100"), "depth 100");
    let reply = shim.tool("recurse", json!({"depth": 100_000_000u64}));
    let text = tool_error(&reply, "recurse 100,000,000");
    assert_mentions(&text, &["tool recurse failed", "trapped"], "deep recursion");
    assert_recovers(&mut shim, "a stack overflow");
    shim.shutdown();
}

#[test]
fn unreachable_is_a_trap_named_in_the_answer() {
    let mut shim = probe(&[]);
    let reply = shim.tool("unreachable", json!({}));
    let text = tool_error(&reply, "unreachable");
    assert_mentions(&text, &["trapped", "unreachable"], "unreachable");
    assert_recovers(&mut shim, "unreachable");
    shim.shutdown();
}

#[test]
fn a_panic_storm_leaves_the_shim_serving() {
    let mut shim = probe(&[]);
    let started = Instant::now();
    for i in 0..100 {
        let reply = shim.tool("panic", json!({}));
        let text = tool_error(&reply, &format!("panic #{i}"));
        assert_mentions(&text, &["tool panic failed"], "panic");
        assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    }
    let reply = shim.tool("counter", json!({}));
    assert_eq!(tool_ok(&reply, "counter after the storm"), "1");
    assert_recovers(&mut shim, "100 panics in a row");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "100 panics took {:?}",
        started.elapsed()
    );
    shim.shutdown();
}

/// A trap's stderr record carries the guest backtrace with the guest's own
/// function names (the probe keeps its wasm name section).
#[test]
fn trap_records_name_the_guest_functions() {
    let mut shim = probe(&[]);
    for tool in ["unreachable", "panic"] {
        let skip = trap_records(&shim).len();
        let reply = shim.tool(tool, json!({}));
        tool_error(&reply, tool);
        // The first trap record past the `skip` earlier ones (each line is
        // offered to the predicate once, in order).
        let mut seen = 0;
        let record = shim
            .stderr()
            .wait_for(Duration::from_secs(5), |line| {
                if line.message() != Some("guest trapped") {
                    return false;
                }
                seen += 1;
                seen > skip
            })
            .unwrap_or_else(|| {
                panic!("no trap record for {tool}; stderr:\n{}", stderr_text(&shim))
            });
        let frames: Vec<String> = record
            .field("backtrace")
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("trap record without a backtrace: {}", record.text))
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        assert!(
            !frames.is_empty(),
            "{tool}: empty backtrace: {}",
            record.text
        );
        // Guest frames by name, not by index, and demangled: the SDK's
        // tool dispatch (the probe's handler is inlined into it) and the
        // component export it was entered through.
        for frame in &frames {
            assert!(
                frame.starts_with("probe.wasm!")
                    && !frame.contains("<func ")
                    && !frame.contains("_ZN"),
                "{tool}: unnamed or mangled frame {frame:?} in {frames:#?}"
            );
        }
        assert!(
            frames
                .iter()
                .any(|f| f.contains("octet_guest::registry::Extension::tool")),
            "{tool}: no SDK tool dispatch in the backtrace: {frames:#?}"
        );
        assert!(
            frames.iter().any(|f| f.ends_with("#call-tool")),
            "{tool}: no call-tool export in the backtrace: {frames:#?}"
        );
    }
    shim.shutdown();
}

fn trap_records(shim: &Shim) -> Vec<StderrLine> {
    shim.stderr()
        .lines()
        .into_iter()
        .filter(|line| line.message() == Some("guest trapped"))
        .collect()
}

// ----- filesystem ---------------------------------------------------------

/// A directory beside the workspace with a secret file, and a workspace
/// file; returns (outside dir, secret path).
fn plant_files(shim: &Shim) -> (PathBuf, PathBuf) {
    let outside = shim
        .workspace
        .parent()
        .expect("the workspace has a parent")
        .join("outside");
    std::fs::create_dir_all(&outside).expect("create the outside directory");
    let secret = outside.join("secret.txt");
    std::fs::write(&secret, "TOP SECRET").expect("write the secret");
    std::fs::write(shim.workspace.join("hello.txt"), "hello from the workspace")
        .expect("write the workspace file");
    std::os::unix::fs::symlink(&secret, shim.workspace.join("link.txt"))
        .expect("symlink to the secret");
    std::os::unix::fs::symlink(&outside, shim.workspace.join("linkdir"))
        .expect("symlink to the outside directory");
    (outside, secret)
}

fn path_str(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Reads that must be refused, with the text that must not leak.
fn assert_read_refused(shim: &mut Shim, path: &str, leak: &str) {
    let reply = shim.tool("read_file", json!({"path": path}));
    let text = tool_error(&reply, &format!("read_file {path}"));
    assert!(
        !text.contains(leak),
        "read_file {path} leaked the file: {text}"
    );
}

#[test]
fn workspace_filesystem_grants_the_workspace_and_nothing_else() {
    let mut shim = probe(&[]);
    let (outside, secret) = plant_files(&shim);
    let workspace = path_str(&shim.workspace);

    // The workspace: relative and absolute, read and write.
    let reply = shim.tool("read_file", json!({"path": "hello.txt"}));
    assert_eq!(tool_ok(&reply, "relative read"), "hello from the workspace");
    let reply = shim.tool(
        "read_file",
        json!({"path": format!("{workspace}/hello.txt")}),
    );
    assert_eq!(tool_ok(&reply, "absolute read"), "hello from the workspace");
    let reply = shim.tool("write_file", json!({"path": "new.txt", "text": "written"}));
    assert_eq!(tool_ok(&reply, "relative write"), "wrote 7 bytes");
    let reply = shim.tool(
        "write_file",
        json!({"path": format!("{workspace}/abs.txt"), "text": "abs"}),
    );
    assert_eq!(tool_ok(&reply, "absolute write"), "wrote 3 bytes");
    assert_eq!(
        std::fs::read_to_string(shim.workspace.join("new.txt")).unwrap(),
        "written"
    );
    assert_eq!(
        std::fs::read_to_string(shim.workspace.join("abs.txt")).unwrap(),
        "abs"
    );
    let reply = shim.tool("list_dir", json!({"path": "."}));
    assert_mentions(
        &tool_ok(&reply, "list the workspace"),
        &["hello.txt", "new.txt"],
        "list_dir .",
    );

    // Everything else.
    assert_read_refused(&mut shim, "/etc/passwd", "root:");
    assert_read_refused(&mut shim, "../outside/secret.txt", "TOP SECRET");
    assert_read_refused(
        &mut shim,
        &format!("{workspace}/../outside/secret.txt"),
        "TOP SECRET",
    );
    assert_read_refused(&mut shim, &path_str(&secret), "TOP SECRET");
    assert_read_refused(&mut shim, "link.txt", "TOP SECRET");
    assert_read_refused(&mut shim, &format!("{workspace}/link.txt"), "TOP SECRET");
    assert_read_refused(&mut shim, "linkdir/secret.txt", "TOP SECRET");
    // The guest's `/` is not the host's: an absolute path outside every
    // preopen resolves inside the workspace (the `.` preopen, see
    // `Sandbox::preopens`), so it lists the workspace at most.
    let reply = shim.tool("list_dir", json!({"path": "/"}));
    let listing = tool_text(&reply);
    let names: Vec<&str> = listing.lines().collect();
    for host_entry in ["etc", "usr", "tmp", "outside", "secret.txt"] {
        assert!(
            !names.contains(&host_entry),
            "list_dir / shows the host's {host_entry}: {}",
            reply.frame.raw
        );
    }
    for path in ["..", "/etc", "linkdir", &path_str(&outside)] {
        let reply = shim.tool("list_dir", json!({"path": path}));
        let text = tool_error(&reply, &format!("list_dir {path}"));
        assert!(!text.contains("secret.txt"), "list_dir {path}: {text}");
    }
    for path in [
        "../outside/evil.txt".to_owned(),
        path_str(&outside.join("evil.txt")),
        "linkdir/evil.txt".to_owned(),
    ] {
        let reply = shim.tool("write_file", json!({"path": path, "text": "evil"}));
        tool_error(&reply, &format!("write_file {path}"));
    }
    let reply = shim.tool(
        "write_file",
        json!({"path": "link.txt", "text": "overwritten"}),
    );
    tool_error(&reply, "write through a symlink");
    assert!(
        !outside.join("evil.txt").exists(),
        "a write escaped the workspace"
    );
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "TOP SECRET");

    assert_recovers(&mut shim, "refused file access");
    shim.shutdown();
}

#[test]
fn no_filesystem_means_nothing_is_readable() {
    let mut shim = ready(probe_manifest(ApiVersion::V0_2).filesystem("none"), &[]);
    let (_outside, secret) = plant_files(&shim);
    let workspace = path_str(&shim.workspace);
    assert_read_refused(&mut shim, "hello.txt", "hello from the workspace");
    assert_read_refused(
        &mut shim,
        &format!("{workspace}/hello.txt"),
        "hello from the workspace",
    );
    assert_read_refused(&mut shim, "/etc/passwd", "root:");
    assert_read_refused(&mut shim, &path_str(&secret), "TOP SECRET");
    assert_read_refused(&mut shim, "link.txt", "TOP SECRET");
    for path in [".", "/", workspace.as_str()] {
        let reply = shim.tool("list_dir", json!({"path": path}));
        tool_error(&reply, &format!("list_dir {path}"));
    }
    let reply = shim.tool("write_file", json!({"path": "new.txt", "text": "x"}));
    tool_error(&reply, "write with filesystem none");
    let reply = shim.tool(
        "write_file",
        json!({"path": format!("{workspace}/new.txt"), "text": "x"}),
    );
    tool_error(&reply, "absolute write with filesystem none");
    assert!(!shim.workspace.join("new.txt").exists());
    assert_recovers(&mut shim, "refused file access");
    shim.shutdown();
}

// ----- network ------------------------------------------------------------

fn connect_to_listener(network: bool) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a listener");
    listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    let addr = listener.local_addr().expect("listener address").to_string();
    let mut shim = ready(probe_manifest(ApiVersion::V0_2).network(network), &[]);
    let reply = shim.tool("connect", json!({"addr": addr}));
    let accepted = (0..50).any(|_| {
        if listener.accept().is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
        false
    });
    if network {
        assert_eq!(
            tool_ok(&reply, "connect with network"),
            format!("connected to {addr}")
        );
        assert!(accepted, "the listener saw no connection");
    } else {
        let text = tool_error(&reply, "connect without network");
        assert_mentions(&text, &[&format!("connect {addr}")], "connect");
        assert!(!accepted, "a guest without network reached the listener");
        // Name lookups are refused too.
        let reply = shim.tool("connect", json!({"addr": "localhost:9"}));
        tool_error(&reply, "connect by name without network");
    }
    assert_recovers(&mut shim, "a connection attempt");
    shim.shutdown();
}

#[test]
fn without_network_a_connect_is_refused() {
    connect_to_listener(false);
}

#[test]
fn with_network_a_connect_reaches_the_listener() {
    connect_to_listener(true);
}

// ----- environment --------------------------------------------------------

const DECLARED: &str = "SSH_AUTH_SOCK";
const UNDECLARED: &str = "PROBE_UNDECLARED_SECRET";

fn env_probe(manifest: ManifestSpec) -> Shim {
    let mut shim = Shim::probe_with_env(
        manifest,
        &[],
        &[
            (DECLARED, "/tmp/agent.sock"),
            (UNDECLARED, "must not leak"),
            // Ignored by the shim (with a warning), and never the guest's.
            ("OCTET_WASM_CACHE_DIR", "/tmp/not-the-cache"),
        ],
    );
    shim.initialize();
    shim
}

fn assert_invisible(shim: &mut Shim, name: &str) {
    let reply = shim.tool("env", json!({"name": name}));
    assert_eq!(
        tool_error(&reply, &format!("env {name}")),
        format!("{name} is not set")
    );
}

#[test]
fn only_declared_environment_variables_reach_the_guest() {
    let mut shim = env_probe(probe_manifest(ApiVersion::V0_2).environment(&[DECLARED]));
    let reply = shim.tool("env", json!({"name": DECLARED}));
    assert_eq!(tool_ok(&reply, "declared variable"), "/tmp/agent.sock");
    for name in [
        UNDECLARED,
        "PATH",
        "HOME",
        "OCTET_WORKSPACE",
        "OCTET_EXTENSION_SCRATCH",
        "OCTET_WASM_CACHE_DIR",
    ] {
        assert_invisible(&mut shim, name);
    }
    assert_recovers(&mut shim, "environment probes");
    shim.shutdown();
}

#[test]
fn without_a_declaration_no_variable_reaches_the_guest() {
    for api in [ApiVersion::V0_1, ApiVersion::V0_2] {
        let mut shim = env_probe(probe_manifest(api));
        assert_invisible(&mut shim, DECLARED);
        assert_invisible(&mut shim, UNDECLARED);
        shim.shutdown();
    }
}

// ----- result bounds ------------------------------------------------------

#[test]
fn a_result_over_the_frame_limit_becomes_a_small_error() {
    let mut shim = probe(&[]);
    let reply = shim.tool("big_result", json!({"bytes": 2 << 20}));
    assert!(
        reply.frame.raw.len() < 4096,
        "the error frame is {} bytes",
        reply.frame.raw.len()
    );
    let error = expect_error(&reply);
    assert_eq!(error.code, -32603, "{}", reply.frame.raw);
    assert_mentions(&error.message, &["1 MiB frame limit"], "big_result");
    let data = error.data.clone().unwrap_or(Value::Null);
    assert_eq!(data["limit"], "frame", "{}", reply.frame.raw);
    assert_eq!(data["limit_bytes"], 1_048_575, "{}", reply.frame.raw);
    // Just under the limit is a result.
    let reply = shim.tool("big_result", json!({"bytes": 1_000_000}));
    assert_eq!(tool_ok(&reply, "big_result 1,000,000").len(), 1_000_000);
    assert_recovers(&mut shim, "an oversized result");
    shim.shutdown();
}

fn invalid_result(reply: &Reply, what: &str) -> String {
    let error = expect_error(reply);
    assert_eq!(error.code, -32603, "{what}: {}", reply.frame.raw);
    error.message.clone()
}

#[test]
fn content_parts_are_bounded_at_256() {
    let mut shim = probe(&[]);
    for count in [10_000, 257] {
        let reply = shim.tool("many_parts", json!({"count": count}));
        let message = invalid_result(&reply, &format!("{count} parts"));
        assert_mentions(
            &message,
            &[&format!("{count} content parts"), "the limit is 256"],
            "many_parts",
        );
    }
    let reply = shim.tool("many_parts", json!({"count": 256}));
    let parts = expect_result(&reply)["content"]
        .as_array()
        .map(Vec::len)
        .unwrap_or_default();
    assert_eq!(parts, 256, "{}", reply.frame.raw);
    assert_recovers(&mut shim, "too many parts");
    shim.shutdown();
}

#[test]
fn metadata_depth_is_bounded_at_32() {
    let mut shim = probe(&[]);
    for depth in [33, 1_000] {
        let reply = shim.tool("nested", json!({"depth": depth}));
        let message = invalid_result(&reply, &format!("depth {depth}"));
        assert_mentions(
            &message,
            &["metadata is nested deeper than 32 levels"],
            "nested",
        );
    }
    let reply = shim.tool("nested", json!({"depth": 32}));
    assert_eq!(tool_ok(&reply, "depth 32"), "nested 32");
    let mut metadata = &expect_result(&reply)["metadata"];
    let mut depth = 0;
    while let Some(inner) = metadata.get("n") {
        metadata = inner;
        depth += 1;
    }
    assert_eq!(depth, 32, "{}", reply.frame.raw);
    assert_recovers(&mut shim, "deep metadata");
    shim.shutdown();
}
