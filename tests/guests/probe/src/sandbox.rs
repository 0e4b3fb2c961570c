//! Tools that probe the WASI sandbox: files, environment, network and the
//! guest's own stdout/stderr. Every I/O failure is a `failed` error, i.e. an
//! is_error result carrying the error's text.

use std::io::Write;

use octet_guest::prelude::*;
use serde::Deserialize;

use crate::object_schema;

#[derive(Deserialize)]
struct Path {
    path: String,
}

#[derive(Deserialize)]
struct WriteFile {
    path: String,
    text: String,
}

#[derive(Deserialize)]
struct Name {
    name: String,
}

#[derive(Deserialize)]
struct Addr {
    addr: String,
}

#[derive(Deserialize)]
struct Bytes {
    bytes: usize,
}

/// Size of each write in the floods.
const FLOOD_CHUNK: usize = 4096;

pub fn register(ext: &mut Extension) {
    let path = || object_schema(json!({"path": {"type": "string"}}));
    // read_file {path} → the file's contents
    ext.tool(
        Tool::new("read_file", "Read a file").parameters(path()),
        |args: Path| {
            std::fs::read_to_string(&args.path).map_err(|e| io_error("read", &args.path, e))
        },
    );
    // list_dir {path} → the entry names, sorted, one per line
    ext.tool(
        Tool::new("list_dir", "List a directory").parameters(path()),
        |args: Path| {
            let entries =
                std::fs::read_dir(&args.path).map_err(|e| io_error("list", &args.path, e))?;
            let mut names = entries
                .map(|entry| entry.map(|entry| entry.file_name().to_string_lossy().into_owned()))
                .collect::<std::io::Result<Vec<String>>>()
                .map_err(|e| io_error("list", &args.path, e))?;
            names.sort();
            Ok::<_, Error>(names.join("\n"))
        },
    );
    // write_file {path, text} → `wrote <n> bytes`
    ext.tool(
        Tool::new("write_file", "Write a file").parameters(object_schema(json!({
            "path": {"type": "string"},
            "text": {"type": "string"},
        }))),
        |args: WriteFile| -> Result<String> {
            std::fs::write(&args.path, &args.text).map_err(|e| io_error("write", &args.path, e))?;
            Ok(format!("wrote {} bytes", args.text.len()))
        },
    );
    // env {name} → the variable's value, or error `failed("<name> is not set")`
    ext.tool(
        Tool::new("env", "Read an environment variable")
            .parameters(object_schema(json!({"name": {"type": "string"}}))),
        |args: Name| {
            std::env::var(&args.name)
                .map_err(|_| Error::failed(format!("{} is not set", args.name)))
        },
    );
    // connect {addr} → `connected to <addr>` after a TCP connect through WASI
    // sockets, or error `failed("connect <addr>: <error>")`
    ext.tool(
        Tool::new("connect", "Open a TCP connection")
            .parameters(object_schema(json!({"addr": {"type": "string"}}))),
        |args: Addr| -> Result<String> {
            std::net::TcpStream::connect(&args.addr)
                .map_err(|e| Error::failed(format!("connect {}: {e}", args.addr)))?;
            Ok(format!("connected to {}", args.addr))
        },
    );
    let bytes = || object_schema(json!({"bytes": {"type": "integer", "minimum": 0}}));
    // stdout_flood {bytes} → writes that many bytes (`o`) to the guest's
    // stdout with print!, then `wrote <bytes> bytes to stdout`
    ext.tool(
        Tool::new("stdout_flood", "Write to the guest's stdout").parameters(bytes()),
        |args: Bytes| -> Result<String> {
            flood(args.bytes, b'o', |chunk| {
                // The point of this tool: a guest printing to stdout must
                // never reach the protocol stream.
                #[allow(clippy::print_stdout)]
                {
                    print!("{chunk}");
                }
            });
            std::io::stdout().flush()?;
            Ok(format!("wrote {} bytes to stdout", args.bytes))
        },
    );
    // stderr_flood {bytes} → the same on stderr (`e`)
    ext.tool(
        Tool::new("stderr_flood", "Write to the guest's stderr").parameters(bytes()),
        |args: Bytes| -> Result<String> {
            flood(args.bytes, b'e', |chunk| eprint!("{chunk}"));
            std::io::stderr().flush()?;
            Ok(format!("wrote {} bytes to stderr", args.bytes))
        },
    );
}

fn io_error(action: &str, path: &str, error: std::io::Error) -> Error {
    Error::failed(format!("{action} {path}: {error}"))
}

fn flood(bytes: usize, byte: u8, mut write: impl FnMut(&str)) {
    let chunk = String::from_utf8(vec![byte; FLOOD_CHUNK]).unwrap_or_default();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(FLOOD_CHUNK);
        write(&chunk[..n]);
        left -= n;
    }
}
