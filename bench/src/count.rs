//! Instructions and syscalls per call: the steadiest figures on a shared
//! machine.
//!
//! Each extension is started under callgrind (user-space instructions of
//! every thread, JIT-compiled guest code included) and under `strace -c
//! -f` (syscalls of every thread), once serving `n` calls and once `10 n`;
//! start-up and shutdown are the same in both, so the difference divided
//! by `9 n` is the cost of one call alone.

use crate::wire::{Ext, Prepared, Target};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// What one call costs, by counter.
pub struct PerCall {
    pub instructions: Option<f64>,
    pub syscalls: Option<f64>,
    /// Syscalls per call by name (only those at 0.05 or more per call).
    pub by_syscall: Vec<(String, f64)>,
}

/// Whether `tool` runs here (`tool --version` succeeds).
pub fn available(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Starts `target` wrapped, serves `calls` fast-driver calls, shuts down.
fn serve(target: &Target, calls: usize) {
    let mut ext = Ext::start(target);
    let mut prepared = Prepared::hello(&ext);
    for _ in 0..calls {
        ext.call_prepared(&mut prepared);
    }
    ext.shutdown();
}

/// Total instructions of one callgrind run (its `totals:` line).
fn callgrind_total(target: &Target, program: &Path, calls: usize, scratch: &Path) -> Option<f64> {
    let out = scratch.join(format!("callgrind.{calls}.out"));
    let _ = std::fs::remove_file(&out);
    serve(
        &target.wrapped(
            vec![
                "valgrind".into(),
                "--tool=callgrind".into(),
                "--quiet".into(),
                format!("--callgrind-out-file={}", out.display()),
            ],
            program,
        ),
        calls,
    );
    let text = std::fs::read_to_string(&out).ok()?;
    let total = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })?
        .split_whitespace()
        .next()?
        .parse()
        .ok();
    // Keep the profile of the longer run for `callgrind_annotate`.
    if let Ok(keep) = std::env::var("OCTET_WASM_BENCH_KEEP") {
        // Named after the program: the shim's and the floor's runs share
        // a scratch directory and call counts.
        let name = program
            .file_name()
            .map_or_else(|| "program".into(), |name| name.to_string_lossy());
        let _ = std::fs::copy(
            &out,
            Path::new(&keep).join(format!("callgrind.{name}.{calls}.out")),
        );
    }
    total
}

/// Syscalls of one `strace -c -f` run, by name (`total` included).
fn strace_counts(target: &Target, calls: usize, scratch: &Path) -> BTreeMap<String, f64> {
    let out = scratch.join(format!("strace.{calls}.txt"));
    let _ = std::fs::remove_file(&out);
    serve(
        &target.wrapped(
            vec![
                "strace".into(),
                "-f".into(),
                "-c".into(),
                "-o".into(),
                out.display().to_string(),
            ],
            target.program(),
        ),
        calls,
    );
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    // Rows: `% time  seconds  usecs/call  calls  [errors]  syscall`; the
    // errors column may be blank, so `calls` is the fourth field and the
    // name the last.
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let name = fields.last()?;
            let calls = fields.get(3)?.parse::<f64>().ok()?;
            fields.first()?.parse::<f64>().ok()?;
            Some(((*name).to_owned(), calls))
        })
        .collect()
}

/// Instructions and syscalls per call of `target` (`n` and `10 n` calls);
/// `callgrind` is the program callgrind runs in its place, if any.
pub fn per_call(target: &Target, n: usize, scratch: &Path, callgrind: Option<&Path>) -> PerCall {
    let spread = 9.0 * n as f64;
    let instructions = if let Some(program) = callgrind {
        // The copy's compiled-cache entry is its own (the key names the
        // shim binary and the CPU features valgrind reports): fill it under
        // callgrind with `compile` (no initialize budget), so no run
        // compiles.
        let _ = Command::new("valgrind")
            .args([
                "--tool=callgrind",
                "--quiet",
                "--callgrind-out-file=/dev/null",
            ])
            .arg(program)
            .arg("compile")
            .arg(target.component())
            .stderr(std::process::Stdio::null())
            .status();
        match (
            callgrind_total(target, program, n, scratch),
            callgrind_total(target, program, 10 * n, scratch),
        ) {
            (Some(few), Some(many)) => Some((many - few) / spread),
            _ => None,
        }
    } else {
        None
    };
    let few = strace_counts(target, n, scratch);
    let many = strace_counts(target, 10 * n, scratch);
    let diff = |name: &str| {
        (many.get(name).copied().unwrap_or(0.0) - few.get(name).copied().unwrap_or(0.0)) / spread
    };
    let syscalls = many.contains_key("total").then(|| diff("total"));
    let mut by_syscall: Vec<(String, f64)> = many
        .keys()
        .filter(|name| name.as_str() != "total")
        .map(|name| (name.clone(), diff(name)))
        .filter(|(_, per)| *per >= 0.05)
        .collect();
    by_syscall.sort_by(|a, b| b.1.total_cmp(&a.1));
    PerCall {
        instructions,
        syscalls,
        by_syscall,
    }
}
