//! One piece of a call's work, repeated in process, for callgrind to count
//! (`octet-wasm-bench --piece NAME --iterations N`; `scripts/bench` and
//! BENCHMARKS.md's breakdown run each under callgrind with N and 10 N and
//! take the difference). The pieces are the shim's own functions on the
//! bench guest's `hello_world` call, so the breakdown names real code:
//!
//! - `parse`: `wire::message::parse_line` on the request line;
//! - `plan`: the execution context and arguments as the guest gets them
//!   (`protocol::tool_call_text::read`: name, arguments and context in place);
//! - `guest`: one `call_tool` into the guest (wasmtime's call, the
//!   canonical ABI both ways, the guest SDK's own work), as the lanes make it;
//! - `result`: the guest's result as a wire frame (`results::encode::tool_result`,
//!   `encode_response`, the frame guard);
//! - `hash`: wall time of the shim's SHA-256 over the files named in
//!   `OCTET_WASM_BENCH_HASH` (a warm start's hashing passes).

use octet_wasm::cancel::CancelToken;
use octet_wasm::protocol::handshake::api_version::ApiVersion;
use octet_wasm::protocol::requests::tool_call_text;
use octet_wasm::protocol::results::encode::{ToolShape, tool_result};
use octet_wasm::runtime::offline::Offline;
use octet_wasm::runtime::types::{CallContext, ContentPart, ToolCall, ToolResult};
use octet_wasm::runtime::{FsAccess, Limits, Runtime, Sandbox};
use octet_wasm::wire::guard::check_frame;
use octet_wasm::wire::message::{Inbound, encode_response, parse_line};
use std::path::Path;
use std::sync::Arc;

/// The request line the fast driver sends (id 7).
const LINE: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tool/call","params":{"name":"hello_world","arguments":{"name":"Ada"},"context":{"workspace":"/tmp/w","execution_scope":null,"host":{}}}}"#;

pub fn run(piece: &str, iterations: usize, component: &Path) {
    match piece {
        "parse" => {
            for _ in 0..iterations {
                std::hint::black_box(parse_line(std::hint::black_box(LINE.as_bytes())).ok());
            }
        }
        "plan" => {
            let Ok(Inbound::Request { params, .. }) = parse_line(LINE.as_bytes()) else {
                panic!("the request line does not parse")
            };
            let text = params
                .text()
                .expect("a plain request keeps its params as text");
            for _ in 0..iterations {
                std::hint::black_box(tool_call_text::read(7, std::hint::black_box(text)));
            }
        }
        "result" => {
            let shape = ToolShape {
                name: "hello_world",
                output_schema: None,
                artifacts: false,
            };
            for _ in 0..iterations {
                let result = ToolResult {
                    content: vec![ContentPart::Text("Hello, Ada!".into())],
                    ..empty_result()
                };
                let value = tool_result(ApiVersion::V0_1, &shape, result).ok();
                let line = encode_response(
                    7,
                    &value
                        .ok_or(())
                        .map_err(|()| octet_wasm::wire::message::RpcError::internal("x")),
                );
                std::hint::black_box(check_frame(&line).is_ok());
            }
        }
        "guest" => guest(iterations, component),
        "hash" => hash(iterations),
        other => panic!("unknown piece {other} (parse, plan, guest, result, hash)"),
    }
}

/// How long the shim's SHA-256 (`runtime::cache::sha256_hex`, the pass a
/// warm start makes over the component, beside its read) takes over each
/// file named in `OCTET_WASM_BENCH_HASH` (colon-separated), best of
/// `iterations`.
#[allow(clippy::print_stdout, reason = "the figure is the output")]
fn hash(iterations: usize) {
    let files = std::env::var("OCTET_WASM_BENCH_HASH").unwrap_or_default();
    for file in files.split(':').filter(|f| !f.is_empty()) {
        let bytes = std::fs::read(file).unwrap_or_else(|err| panic!("cannot read {file}: {err}"));
        let best = (0..iterations.max(1))
            .map(|_| {
                let started = std::time::Instant::now();
                std::hint::black_box(octet_wasm::runtime::cache::sha256_hex(&bytes));
                started.elapsed().as_secs_f64() * 1000.0
            })
            .fold(f64::INFINITY, f64::min);
        println!(
            "sha256 of {file} ({:.2} MB): {best:.2} ms",
            bytes.len() as f64 / 1e6
        );
    }
}

fn empty_result() -> ToolResult {
    ToolResult {
        content: Vec::new(),
        structured_content: None,
        is_error: false,
        metadata: None,
    }
}

fn guest(iterations: usize, component: &Path) {
    let bytes = std::fs::read(component)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", component.display()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let file = octet_wasm::runtime::component_file::ComponentFile::from_bytes(bytes);
    let (rt, _) = Runtime::<Offline>::load(&file, component, Limits::default(), None)
        .expect("load the bench guest");
    let sandbox = Sandbox {
        filesystem: FsAccess::None,
        workspace: std::env::temp_dir(),
        network: false,
        env: Vec::new(),
        scratch: None,
        output_bytes: 0,
    };
    let call = ToolCall {
        name: "hello_world".into(),
        arguments: r#"{"name":"Ada"}"#.into(),
        catalog_revision: None,
    };
    let cx = CallContext {
        request_id: 7,
        workspace: "/tmp/w".into(),
        execution_scope: None,
        resource_owner: None,
        host: "{}".into(),
    };
    runtime.block_on(async {
        let mut instance = rt
            .instantiate(Arc::new(Offline), &sandbox)
            .await
            .expect("instantiate");
        for _ in 0..iterations {
            let answer = instance
                .call_tool((), CancelToken::new(), call.clone(), cx.clone())
                .await;
            assert!(matches!(answer, Ok(Ok(_))), "hello_world failed");
        }
    });
}
