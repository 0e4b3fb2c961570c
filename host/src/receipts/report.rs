//! `octet-wasm receipts [FILE|EXTENSION]`: reads receipts files and prints
//! a table per method (per tool for `tool/call`). A line that is not a
//! record is reported with its file and line number and skipped.

use super::record::{self, Request};
use super::writer::{BELOW_HOME, file_stem};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest file read: the writer's cap, with room to spare.
const MAX_FILE_BYTES: u64 = 2 * super::writer::CAP_BYTES;

/// What `receipts` prints: the table for stdout, problems for stderr.
#[derive(Debug, Default)]
pub struct Report {
    pub table: String,
    pub problems: Vec<String>,
}

/// The files `target` names: a file (a path, or a name ending in
/// `.jsonl`), else the newest file of the extension of that name in the
/// user's receipts directory; every file there without a target.
pub fn files(target: Option<&str>) -> Result<Vec<PathBuf>, String> {
    let dir = crate::user_dirs::home_dir()
        .map(|home| home.join(BELOW_HOME))
        .ok_or("this user has no home directory in the user database")?;
    if let Some(target) = target {
        let path = Path::new(target);
        if target.contains('/') || target.ends_with(".jsonl") || path.is_file() {
            return Ok(vec![path.to_owned()]);
        }
    }
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "there are no receipts yet ({} does not exist); the user turns them on with `receipts = true` in {}",
                dir.display(),
                crate::policy::POLICY_FILE
            ));
        }
        Err(err) => return Err(format!("cannot read {}: {err}", dir.display())),
    };
    let stem = target.map(file_stem);
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(base) = name.strip_suffix(".jsonl") else {
            continue;
        };
        if let Some(stem) = &stem
            && !base
                .strip_prefix(stem.as_str())
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|rest| {
                    !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit() || b == b'-')
                })
        {
            continue;
        }
        let modified = entry
            .metadata()
            .and_then(|meta| meta.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        found.push((modified, entry.path()));
    }
    found.sort();
    match (target, found.pop()) {
        (_, None) => Err(match target {
            Some(name) => format!("no receipts of the extension {name:?} in {}", dir.display()),
            None => format!("no receipts files in {}", dir.display()),
        }),
        (Some(_), Some((_, newest))) => Ok(vec![newest]),
        (None, Some(last)) => {
            found.push(last);
            Ok(found.into_iter().map(|(_, path)| path).collect())
        }
    }
}

/// Reads `paths` and builds the table.
pub fn report(paths: &[PathBuf]) -> Report {
    let mut report = Report::default();
    let mut rows: BTreeMap<(String, String), Row> = BTreeMap::new();
    let mut dropped = 0u64;
    let mut without_summary = 0usize;
    let mut records = 0usize;
    for path in paths {
        let text = match read(path) {
            Ok(text) => text,
            Err(err) => {
                report
                    .problems
                    .push(format!("{}: cannot read it: {err}", path.display()));
                continue;
            }
        };
        let mut extension = String::new();
        let mut summarised = false;
        for (index, line) in text.lines().enumerate() {
            let at = format!("{}:{}", path.display(), index + 1);
            match parse(line) {
                Ok(Line::Start(name)) => extension = name,
                Ok(Line::Summary(value)) => {
                    summarised = true;
                    dropped += value["records_dropped"].as_u64().unwrap_or(0);
                }
                Ok(Line::Request(request)) => {
                    records += 1;
                    let key = match &request.tool {
                        Some(tool) => format!("{} {tool}", request.method),
                        None => request.method.clone(),
                    };
                    rows.entry((extension.clone(), key))
                        .or_default()
                        .add(&request);
                }
                Err(why) => report
                    .problems
                    .push(format!("{at}: malformed record, skipped: {why}")),
            }
        }
        if !summarised {
            without_summary += 1;
        }
    }
    let several = rows
        .keys()
        .map(|(extension, _)| extension)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    report.table = table(&rows, several);
    let _ = writeln!(
        report.table,
        "{records} requests in {} file(s); {dropped} records dropped past a file's cap{}",
        paths.len(),
        if without_summary > 0 {
            format!(
                "; {without_summary} file(s) without a summary (the process is still running, or it was killed)"
            )
        } else {
            String::new()
        }
    );
    report
}

fn read(path: &Path) -> std::io::Result<String> {
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

enum Line {
    Start(String),
    Summary(Value),
    Request(Request),
}

fn parse(line: &str) -> Result<Line, String> {
    let value: Value = serde_json::from_str(line).map_err(|err| format!("not JSON ({err})"))?;
    match value.get("type").and_then(Value::as_str) {
        Some(record::START) => Ok(Line::Start(
            value["extension"].as_str().unwrap_or_default().to_owned(),
        )),
        Some(record::SUMMARY) => Ok(Line::Summary(value)),
        Some(record::REQUEST) => serde_json::from_value(value)
            .map(Line::Request)
            .map_err(|err| format!("not a request record ({err})")),
        Some(other) => Err(format!("unknown record type {other:?}")),
        None => Err("no \"type\"".into()),
    }
}

/// One row of the table.
#[derive(Debug, Default)]
struct Row {
    wall_us: Vec<u64>,
    cpu_us: u64,
    max_memory: u64,
    errors: u64,
    cancelled: u64,
    deadline: u64,
    trap: u64,
}

impl Row {
    fn add(&mut self, request: &Request) {
        self.wall_us.push(request.wall_us);
        self.cpu_us = self.cpu_us.saturating_add(request.cpu_us);
        self.max_memory = self.max_memory.max(request.memory_bytes.unwrap_or(0));
        match request.outcome.as_str() {
            "error" | "tool_error" => self.errors += 1,
            "cancelled" => self.cancelled += 1,
            "deadline" => self.deadline += 1,
            "trap" => self.trap += 1,
            _ => {}
        }
    }
}

/// The nearest-rank percentile `p` (0..=100) of sorted `values`.
fn percentile(sorted: &[u64], p: u64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p as usize * sorted.len()).div_ceil(100).max(1);
    sorted[rank.min(sorted.len()) - 1]
}

fn ms(us: u64) -> String {
    format!("{:.3}", us as f64 / 1_000.0)
}

fn table(rows: &BTreeMap<(String, String), Row>, with_extension: bool) -> String {
    let mut lines: Vec<[String; 10]> = vec![
        [
            "method",
            "count",
            "p50_ms",
            "p99_ms",
            "cpu_ms",
            "max_mem_mib",
            "errors",
            "cancelled",
            "deadline",
            "trap",
        ]
        .map(str::to_owned),
    ];
    for ((extension, method), row) in rows {
        let mut wall = row.wall_us.clone();
        wall.sort_unstable();
        let name = if with_extension {
            format!("{extension}: {method}")
        } else {
            method.clone()
        };
        lines.push([
            name,
            wall.len().to_string(),
            ms(percentile(&wall, 50)),
            ms(percentile(&wall, 99)),
            ms(row.cpu_us),
            format!("{:.1}", row.max_memory as f64 / f64::from(1 << 20)),
            row.errors.to_string(),
            row.cancelled.to_string(),
            row.deadline.to_string(),
            row.trap.to_string(),
        ]);
    }
    let widths: Vec<usize> = (0..10)
        .map(|column| {
            lines
                .iter()
                .map(|line| line[column].len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for line in &lines {
        let mut text = format!("{:<width$}", line[0], width = widths[0]);
        for (cell, width) in line.iter().zip(&widths).skip(1) {
            let _ = write!(text, "  {cell:>width$}");
        }
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: &str, tool: Option<&str>, wall_us: u64, outcome: &str) -> String {
        Request {
            kind: record::REQUEST.into(),
            id: 1,
            method: method.into(),
            tool: tool.map(str::to_owned),
            at_ms: 0,
            wall_us,
            cpu_us: 100,
            fuel: None,
            memory_bytes: Some(2 << 20),
            bytes_in: 1,
            bytes_out: 1,
            outcome: outcome.into(),
            code: (outcome == "error").then_some(-32603),
            fault: None,
            by_shim: false,
        }
        .to_line()
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let values: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&values, 50), 50);
        assert_eq!(percentile(&values, 99), 99);
        assert_eq!(percentile(&[7], 99), 7);
        assert_eq!(percentile(&[], 50), 0);
        assert_eq!(percentile(&[1, 2, 3], 50), 2);
    }

    #[test]
    fn a_file_becomes_one_row_per_method_and_tool() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probe-1.jsonl");
        let mut text = record::start_line("probe", None) + "\n";
        for (wall, outcome) in [(1_000, "result"), (3_000, "error"), (2_000, "trap")] {
            text += &(request("tool/call", Some("echo"), wall, outcome) + "\n");
        }
        text += &(request("command/execute", None, 5_000, "deadline") + "\n");
        text += "{not json\n";
        text += "{\"type\":\"request\",\"id\":1}\n";
        std::fs::write(&path, text).unwrap();
        let report = report(std::slice::from_ref(&path));
        let lines: Vec<&str> = report.table.lines().collect();
        assert!(
            lines[0].starts_with("method") && lines[0].ends_with("trap"),
            "{lines:?}"
        );
        let words = |line: &str| {
            line.split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            words(lines[1]),
            [
                "command/execute",
                "1",
                "5.000",
                "5.000",
                "0.100",
                "2.0",
                "0",
                "0",
                "1",
                "0"
            ]
        );
        assert_eq!(
            words(lines[2]),
            [
                "tool/call",
                "echo",
                "3",
                "2.000",
                "3.000",
                "0.300",
                "2.0",
                "1",
                "0",
                "0",
                "1"
            ]
        );
        assert!(lines[3].starts_with("4 requests in 1 file(s)"), "{lines:?}");
        assert!(
            lines[3].contains("1 file(s) without a summary"),
            "{lines:?}"
        );
        assert_eq!(report.problems.len(), 2, "{:?}", report.problems);
        assert!(report.problems[0].contains("probe-1.jsonl:6: malformed record"));
        assert!(report.problems[1].contains(":7: malformed record, skipped: not a request record"));
    }
}
