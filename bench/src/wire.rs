//! A lean octet host: blocking pipes, no checks beyond matching ids.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// How to start an extension, as octet would.
pub struct Target {
    program: PathBuf,
    args: Vec<String>,
    dir: PathBuf,
    workspace: PathBuf,
    api: &'static str,
    name: String,
    tools: Vec<String>,
    /// A program (and its flags) the extension runs under: callgrind,
    /// strace (see [`Target::wrapped`]).
    wrapper: Vec<String>,
}

impl Target {
    /// The shim running `component` from `dir`, with the API version and
    /// tools its `extension.toml` declares. The compiled cache is always
    /// the user's own (`~/.cache/octet-wasm`); a cold target (`warm` false)
    /// runs with `--no-cache`, so every start compiles.
    pub fn shim(shim: &Path, dir: &Path, component: &str, warm: bool, scratch: &Path) -> Target {
        let manifest = std::fs::read_to_string(dir.join("extension.toml")).unwrap_or_default();
        let api = if manifest.contains("api_version = \"0.1\"") {
            "0.1"
        } else {
            "0.2"
        };
        let tools = manifest
            .lines()
            .find_map(|l| l.trim().strip_prefix("tools = ["))
            .map(|list| {
                list.trim_end_matches(']')
                    .split(',')
                    .map(|t| t.trim().trim_matches('"').to_owned())
                    .filter(|t| !t.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let name = manifest
            .lines()
            .find_map(|l| l.strip_prefix("name = "))
            .map(|n| n.trim_matches('"').to_owned())
            .unwrap_or_default();
        let mut args = vec!["run".to_owned(), component.to_owned()];
        if !warm {
            args.push("--no-cache".into());
        }
        Target {
            program: shim.to_owned(),
            args,
            dir: dir.to_owned(),
            workspace: scratch.to_owned(),
            api,
            name,
            tools,
            wrapper: Vec::new(),
        }
    }

    /// The native floor; `quiet` when the guest under test sends no
    /// notification.
    pub fn native(program: &Path, dir: &Path, scratch: &Path, quiet: bool) -> Target {
        Target {
            program: program.to_owned(),
            args: if quiet {
                vec!["--quiet".into()]
            } else {
                Vec::new()
            },
            dir: dir.to_owned(),
            workspace: scratch.to_owned(),
            api: "0.1",
            name: "hello-world".into(),
            tools: vec!["hello_world".into()],
            wrapper: Vec::new(),
        }
    }

    /// The component file a shim target runs.
    pub fn component(&self) -> PathBuf {
        self.dir.join(self.args.get(1).map_or("", String::as_str))
    }

    /// The program this target starts.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// The same target started as `wrapper... program args...`.
    pub fn wrapped(&self, wrapper: Vec<String>, program: &Path) -> Target {
        Target {
            program: program.to_owned(),
            args: self.args.clone(),
            dir: self.dir.clone(),
            workspace: self.workspace.clone(),
            api: self.api,
            name: self.name.clone(),
            tools: self.tools.clone(),
            wrapper,
        }
    }
}

/// Every response and request frame of both extensions starts so.
const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;

/// How the answer to a hello-world call whose notification was refused by
/// the notification bound starts (after the id).
const BOUND_ERROR: &[u8] = br#","error":{"code":-32000,"message":"notification not sent: the extension is sending more than 200"#;

/// A pre-encoded `tool/call` frame: everything after the id.
pub struct Prepared {
    tail: Vec<u8>,
    frame: Vec<u8>,
}

impl Prepared {
    pub fn hello(ext: &Ext) -> Prepared {
        let params =
            json!({"name": "hello_world", "arguments": {"name": "Ada"}, "context": ext.context()});
        let mut tail = br#","method":"tool/call","params":"#.to_vec();
        serde_json::to_writer(&mut tail, &params).expect("encode params");
        tail.extend_from_slice(b"}\n");
        Prepared {
            tail,
            frame: Vec::with_capacity(512),
        }
    }
}

pub struct Ext {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    workspace: String,
    line: String,
}

impl Ext {
    pub fn start(target: &Target) -> Ext {
        Self::start_timed(target).0
    }

    /// Spawns and initializes; the duration is spawn → initialize reply.
    pub fn start_timed(target: &Target) -> (Ext, Duration) {
        let manifest = target.dir.join("extension.toml");
        let mut command = match target.wrapper.split_first() {
            None => Command::new(&target.program),
            Some((tool, flags)) => {
                let mut command = Command::new(tool);
                command.args(flags).arg(&target.program);
                command
            }
        };
        command
            .args(&target.args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("OCTET_EXTENSION_API_VERSION", target.api)
            .env("OCTET_EXTENSION_NAME", &target.name)
            .env("OCTET_EXTENSION_DIR", &target.dir)
            .env("OCTET_EXTENSION_MANIFEST", &manifest)
            .env("OCTET_WORKSPACE", &target.workspace)
            .env("OCTET_EXTENSION_SCRATCH", &target.workspace)
            .current_dir(&target.workspace)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if std::env::var_os("OCTET_WASM_BENCH_STDERR").is_some() {
                Stdio::inherit()
            } else {
                Stdio::null()
            });
        let started = Instant::now();
        let mut child = command
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {}: {err}", target.program.display()));
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut ext = Ext {
            child,
            stdin,
            stdout,
            next_id: 1,
            workspace: target.workspace.to_string_lossy().into_owned(),
            line: String::new(),
        };
        let mut params = json!({
            "api_version": target.api, "octet_version": "0.8.0",
            "extension": {"name": target.name, "version": "0.1.0", "manifest_path": manifest, "source": "explicit"},
            "workspace": ext.workspace,
            "capabilities": {"filesystem": "none", "process": false, "network": false},
            "contributes": {"tools": target.tools, "commands": if target.api == "0.1" { json!(["hello"]) } else { json!([]) },
                "hooks": if target.api == "0.1" { json!(["before_prompt", "after_response"]) } else { json!([]) },
                "ui": ["status"], "context": true, "tool_renderers": ["hello_world"], "notifications": true, "confirmations": false},
            "host": {"session_id": null, "session_name": null, "model": "m", "reasoning": null, "active_skills": []},
        });
        if target.program.ends_with("native-floor") {
            params["contributes"]["commands"] = json!([]);
        } else if target.name != "hello-world" {
            // Only what the manifest declares (bench/hello: tools).
            params["contributes"] = json!({"tools": target.tools, "commands": [], "hooks": [], "ui": [], "context": false,
                "tool_renderers": [], "notifications": false, "confirmations": false});
        }
        if target.api == "0.2" {
            params["contributes"] = json!({"tools": target.tools, "commands": [], "hooks": [], "ui": [], "context": false,
                "tool_renderers": [], "notifications": false, "confirmations": false, "shortcuts": []});
            params["protocol"] = json!({"version": "0.2", "required_features": ["request_cancellation", "content_parts"],
                "optional_features": ["request_progress"], "limits": {"max_concurrent_requests": 64}});
        }
        let reply = ext.call("initialize", params);
        let took = started.elapsed();
        assert!(reply.get("result").is_some(), "initialize failed: {reply}");
        (ext, took)
    }

    /// The extension's process id (the wrapper's, when wrapped).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// One `hello_world` call of the fast driver: the frame is the
    /// pre-encoded `prepared` with only the id written in, sent with one
    /// `write`; lines are read until the response, which is recognised by
    /// its prefix without parsing it. Returns the lines read (notification
    /// included), so the caller can check that the floor and the shim send
    /// the same frames, and whether the answer was hello-world's error for
    /// a notification past the shim's bound of 200 a second (the floor
    /// answers the same, see native-floor.rs).
    pub fn call_prepared(&mut self, prepared: &mut Prepared) -> (usize, bool) {
        let id = self.next_id;
        self.next_id += 1;
        prepared.frame.clear();
        prepared.frame.extend_from_slice(HEAD);
        let _ = write!(prepared.frame, "{id}");
        prepared.frame.extend_from_slice(&prepared.tail);
        self.stdin
            .write_all(&prepared.frame)
            .expect("write to the extension");
        let mut lines = 0;
        loop {
            self.line.clear();
            let read = self
                .stdout
                .read_line(&mut self.line)
                .expect("read from the extension");
            assert!(read > 0, "the extension closed stdout");
            lines += 1;
            let Some(rest) = self.line.as_bytes().strip_prefix(HEAD) else {
                continue; // a notification (`{"jsonrpc":"2.0","method":...`)
            };
            let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            let answered: u64 = std::str::from_utf8(&rest[..digits])
                .ok()
                .and_then(|d| d.parse().ok())
                .unwrap_or(0);
            if answered != id {
                continue;
            }
            let answer = &rest[digits..];
            let refused = answer.starts_with(BOUND_ERROR);
            assert!(
                refused
                    || (answer.starts_with(b",\"result\":") && self.line.contains("Hello, Ada!")),
                "unexpected answer: {}",
                self.line
            );
            return (lines, refused);
        }
    }

    pub fn context(&self) -> Value {
        json!({"workspace": self.workspace, "execution_scope": null, "host": {}})
    }

    fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut line = serde_json::to_vec(&frame).unwrap_or_default();
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write to the extension");
        self.stdin.flush().expect("flush to the extension");
        id
    }

    /// The next response (notifications skipped).
    fn response(&mut self) -> Value {
        loop {
            self.line.clear();
            let read = self
                .stdout
                .read_line(&mut self.line)
                .expect("read from the extension");
            assert!(read > 0, "the extension closed stdout");
            let value: Value = serde_json::from_str(&self.line).expect("a JSON frame");
            if value.get("id").is_some() && value.get("method").is_none() {
                return value;
            }
        }
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        loop {
            let reply = self.response();
            if reply["id"].as_u64() == Some(id) {
                return reply;
            }
        }
    }

    /// `total` requests with at most `inflight` outstanding at any time.
    pub fn pipeline(
        &mut self,
        total: usize,
        inflight: usize,
        mut make: impl FnMut() -> (&'static str, Value),
    ) {
        let mut sent = 0;
        let mut done = 0;
        while done < total {
            while sent < total && sent - done < inflight {
                let (method, params) = make();
                self.send(method, params);
                sent += 1;
            }
            let reply = self.response();
            let bound = reply["error"]["message"].as_str().is_some_and(|m| {
                m.starts_with("notification not sent: the extension is sending more than 200")
            });
            assert!(
                reply.get("result").is_some() || bound,
                "call failed: {reply}"
            );
            done += 1;
        }
    }

    /// VmHWM of the extension process, in KiB.
    pub fn peak_rss_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .ok()
            .and_then(|text| {
                text.lines()
                    .find(|l| l.starts_with("VmHWM:"))
                    .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
            })
            .unwrap_or(0)
    }

    /// Sends `shutdown`, reads the ack and returns ack → exit.
    pub fn shutdown(mut self) -> Duration {
        let reply = self.call("shutdown", json!({}));
        let acked = Instant::now();
        assert_eq!(reply["result"], json!({}), "shutdown reply: {reply}");
        let _ = self.child.wait();
        acked.elapsed()
    }
}
