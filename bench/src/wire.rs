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
    tools: Vec<&'static str>,
}

impl Target {
    /// The shim running `component` from `dir`. The compiled cache is always
    /// the user's own (`~/.cache/octet-wasm`); a cold target (`warm` false)
    /// runs with `--no-cache`, so every start compiles.
    pub fn shim(shim: &Path, dir: &Path, component: &str, warm: bool, scratch: &Path) -> Target {
        let api = if component.starts_with("hello-world") {
            "0.1"
        } else {
            "0.2"
        };
        let tools = if api == "0.1" {
            vec!["hello_world"]
        } else {
            vec!["burn"]
        };
        Target {
            program: shim.to_owned(),
            args: if warm {
                vec!["run".into(), component.into()]
            } else {
                vec!["run".into(), component.into(), "--no-cache".into()]
            },
            dir: dir.to_owned(),
            workspace: scratch.to_owned(),
            api,
            name: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            tools,
        }
    }

    pub fn native(program: &Path, dir: &Path, scratch: &Path) -> Target {
        Target {
            program: program.to_owned(),
            args: Vec::new(),
            dir: dir.to_owned(),
            workspace: scratch.to_owned(),
            api: "0.1",
            name: "hello-world".into(),
            tools: vec!["hello_world"],
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
        let mut command = Command::new(&target.program);
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
            .stderr(Stdio::null());
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
            assert!(reply.get("result").is_some(), "call failed: {reply}");
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
