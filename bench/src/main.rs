//! `octet-wasm-bench`: starts octet-wasm the way octet does and measures it
//! against a native floor extension in the same run.
//!
//! The fast driver (see [`wire::Ext::call_prepared`]) is one thread doing
//! blocking pipe I/O with pre-encoded frames, so its own CPU per call (it
//! is printed) is a few microseconds and does not hide the shim's cost.
//! The floor sends the same frames as the hello-world guest (the
//! notification, then the result); the harness checks both send the same
//! number of lines per call. Every figure is taken idle and, with
//! `--load busy|both`, again while a second process keeps one core busy.
//! Instructions and syscalls per call come from callgrind and `strace -c`
//! (n and 10 n calls, the difference): see [`count`].
//!
//! `octet-wasm-bench --piece parse|plan|guest|result --iterations N` runs
//! one piece of a call in process (see [`pieces`]), for callgrind.
//!
//! Usage: octet-wasm-bench [--runs N] [--calls N] [--inflight K] [--burn N]
//!   [--burn-calls N] [--load idle|busy|both] [--count-calls N] [--no-count]
//!   [--no-burn] [--guest DIR:COMPONENT] [--shim PATH] [--floor PATH]
//! (run from the repository root after `scripts/bench` built everything).

mod count;
mod cpu;
mod inprocess;
mod pieces;
mod stats;
mod wire;

use serde_json::json;
use stats::Summary;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use wire::{Ext, Prepared, Target};

/// The regression budget of issue 15: user-space instructions per
/// hello_world call of the Rust guest.
const INSTRUCTION_BUDGET: f64 = 25_000.0;
/// The syscall target per call.
const SYSCALL_BUDGET: f64 = 4.0;

struct Config {
    runs: usize,
    calls: usize,
    inflight: usize,
    burn: u64,
    burn_calls: usize,
    load: Vec<bool>,
    count_calls: usize,
    count: bool,
    burn_on: bool,
    guest_dir: PathBuf,
    guest_component: String,
    shim: PathBuf,
    floor: PathBuf,
    root: PathBuf,
}

fn parse_args() -> Config {
    let root = std::env::current_dir().unwrap_or_default();
    let mut config = Config {
        runs: 5,
        calls: 20_000,
        inflight: 8,
        burn: 30_000_000,
        burn_calls: 32,
        load: vec![false, true],
        count_calls: 200,
        count: true,
        burn_on: true,
        guest_dir: root.join("bench/hello"),
        guest_component: "bench-guest.wasm".into(),
        shim: root.join("target/x86_64-unknown-linux-musl/release/octet-wasm"),
        floor: root.join("target/x86_64-unknown-linux-musl/release/native-floor"),
        root,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match flag.as_str() {
            "--spin" => cpu::spin(),
            "--no-count" => {
                config.count = false;
                continue;
            }
            "--no-burn" => {
                config.burn_on = false;
                continue;
            }
            _ => {}
        }
        let value = args.next().unwrap_or_default();
        let number = || {
            value
                .parse::<u64>()
                .unwrap_or_else(|_| panic!("{flag} needs a number"))
        };
        match flag.as_str() {
            "--runs" => config.runs = number() as usize,
            "--calls" => config.calls = number() as usize,
            "--inflight" => config.inflight = number() as usize,
            "--burn" => config.burn = number(),
            "--burn-calls" => config.burn_calls = number() as usize,
            "--count-calls" => config.count_calls = number() as usize,
            "--load" => {
                config.load = match value.as_str() {
                    "idle" => vec![false],
                    "busy" => vec![true],
                    "both" => vec![false, true],
                    other => panic!("--load idle|busy|both, not {other}"),
                }
            }
            "--guest" => {
                let (dir, component) = value
                    .split_once(':')
                    .unwrap_or_else(|| panic!("--guest DIR:COMPONENT"));
                config.guest_dir = config.root.join(dir);
                config.guest_component = component.to_owned();
            }
            "--shim" => config.shim = PathBuf::from(&value),
            "--floor" => config.floor = PathBuf::from(&value),
            other => panic!("unknown flag {other}"),
        }
    }
    config
}

#[allow(clippy::print_stdout, reason = "the report is the program's output")]
fn out(line: &str) {
    println!("{line}");
}

/// One table row: a measurement of the shim, and of the floor when it has one.
struct Row {
    name: String,
    shim: Summary,
    floor: Option<Summary>,
}

fn row(name: impl Into<String>, shim: Summary, floor: Option<Summary>) -> Row {
    Row {
        name: name.into(),
        shim,
        floor,
    }
}

/// The figures of one sequential run of the fast driver.
struct Sequential {
    rate: f64,
    p50: f64,
    p99: f64,
    child_cpu_us: f64,
    driver_cpu_us: f64,
    lines_per_call: f64,
    refused_share: f64,
    rss_mib: f64,
    exit_ms: f64,
}

fn sequential(target: &Target, calls: usize) -> Sequential {
    let mut ext = Ext::start(target);
    let mut prepared = Prepared::hello(&ext);
    // Warm both processes' caches and allocators first.
    for _ in 0..calls.min(500) {
        ext.call_prepared(&mut prepared);
    }
    let mut latencies = Vec::with_capacity(calls);
    let mut lines = 0;
    let mut refused = 0;
    let child_before = cpu::process_seconds(ext.pid());
    let driver_before = cpu::thread_seconds();
    let started = Instant::now();
    for _ in 0..calls {
        let t = Instant::now();
        let (read, bound) = ext.call_prepared(&mut prepared);
        lines += read;
        refused += usize::from(bound);
        latencies.push(t.elapsed());
    }
    let elapsed = started.elapsed().as_secs_f64();
    let driver = cpu::thread_seconds() - driver_before;
    let child = cpu::process_seconds(ext.pid()) - child_before;
    latencies.sort_unstable();
    let rss_mib = ext.peak_rss_kib() as f64 / 1024.0;
    Sequential {
        rate: calls as f64 / elapsed,
        p50: us(latencies[latencies.len() / 2]),
        p99: us(latencies[latencies.len() * 99 / 100]),
        child_cpu_us: child * 1e6 / calls as f64,
        driver_cpu_us: driver * 1e6 / calls as f64,
        lines_per_call: lines as f64 / calls as f64,
        refused_share: refused as f64 * 100.0 / calls as f64,
        rss_mib,
        exit_ms: ms(ext.shutdown()),
    }
}

/// The shim-vs-floor rows of one machine state, runs interleaved so drift
/// spreads over both.
fn compare(config: &Config, shim: &Target, floor: &Target, label: &str) -> Vec<Row> {
    let runs = config.runs;
    let mut warm = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let (ext, took) = Ext::start_timed(shim);
        ext.shutdown();
        warm.0.push(ms(took));
        let (ext, took) = Ext::start_timed(floor);
        ext.shutdown();
        warm.1.push(ms(took));
    }
    let mut s = Vec::new();
    let mut f = Vec::new();
    for _ in 0..runs {
        s.push(sequential(shim, config.calls));
        f.push(sequential(floor, config.calls));
    }
    let pick = |runs: &[Sequential], get: fn(&Sequential) -> f64| Summary::of(runs.iter().map(get));
    let both = |name: &str, get: fn(&Sequential) -> f64| {
        row(
            format!("{label}: {name}"),
            pick(&s, get),
            Some(pick(&f, get)),
        )
    };
    vec![
        row(
            format!("{label}: spawn → initialize reply, warm (compiled cache), ms"),
            Summary::of(warm.0),
            Some(Summary::of(warm.1)),
        ),
        both("sequential calls/s (fast driver)", |r| r.rate),
        both("call latency p50, µs", |r| r.p50),
        both("call latency p99, µs", |r| r.p99),
        both("extension CPU per call, µs", |r| r.child_cpu_us),
        both("driver's own CPU per call, µs", |r| r.driver_cpu_us),
        both("frames written per call", |r| r.lines_per_call),
        both("answers that were the notification-bound error, %", |r| {
            r.refused_share
        }),
        both("peak RSS after the calls, MiB", |r| r.rss_mib),
        both("shutdown ack → process exit, ms", |r| r.exit_ms),
    ]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, piece, count, iterations] = &args[..]
        && flag == "--piece"
        && count == "--iterations"
    {
        let root = std::env::current_dir().unwrap_or_default();
        let n = iterations.parse().expect("--iterations N");
        pieces::run(piece, n, &root.join("bench/hello/bench-guest.wasm"));
        return;
    }
    let config = parse_args();
    let burn_dir = config.root.join("bench/guest");
    let scratch = std::env::temp_dir().join(format!("octet-wasm-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&scratch);
    let shim = |warm: bool| {
        Target::shim(
            &config.shim,
            &config.guest_dir,
            &config.guest_component,
            warm,
            &scratch,
        )
    };
    // The floor sends what the guest sends: bench/hello's tool sends no
    // notification, the examples' hello_world one.
    let quiet = config.guest_dir.ends_with("bench/hello");
    let floor = Target::native(&config.floor, &config.guest_dir, &scratch, quiet);
    let runs = config.runs;
    let started = Instant::now();
    let load_before = stats::load();

    // Fill the warm cache once (`compile`, as at install time: under heavy
    // load a first start may not compile within initialize's budget).
    for (dir, component) in [
        (&config.guest_dir, config.guest_component.as_str()),
        (&burn_dir, "bench-guest.wasm"),
    ] {
        let _ = std::process::Command::new(&config.shim)
            .arg("compile")
            .arg(dir.join(component))
            .stderr(std::process::Stdio::null())
            .status();
    }
    Ext::start(&shim(true)).shutdown();

    let mut rows: Vec<Row> = Vec::new();
    let cold = Summary::of((0..runs.min(3)).map(|_| {
        let (ext, took) = Ext::start_timed(&shim(false));
        ext.shutdown();
        ms(took)
    }));
    rows.push(row(
        "idle: spawn → initialize reply, first start (compiles), ms",
        cold,
        None,
    ));
    for &busy in &config.load {
        let _spinner = busy.then(cpu::Spinner::start);
        let label = if busy { "busy" } else { "idle" };
        rows.extend(compare(&config, &shim(true), &floor, label));
    }

    let pipelined = |target: &Target| {
        Summary::of((0..runs).map(|_| {
            let mut ext = Ext::start(target);
            let started = Instant::now();
            let context = ext.context();
            ext.pipeline(config.calls, config.inflight, || {
                ("tool/call", json!({"name": "hello_world", "arguments": {"name": "Ada"}, "context": context}))
            });
            let rate = config.calls as f64 / started.elapsed().as_secs_f64();
            ext.shutdown();
            rate
        }))
    };
    rows.push(row(
        format!(
            "idle: {} calls in flight (API 0.1 queues them), calls/s",
            config.inflight
        ),
        pipelined(&shim(true)),
        Some(pipelined(&floor)),
    ));

    let mut overhead = Vec::new();
    if config.burn_on {
        let burn_target = Target::shim(&config.shim, &burn_dir, "bench-guest.wasm", true, &scratch);
        let burn_rate = |inflight: usize| {
            Summary::of((0..runs).map(|_| {
                let mut ext = Ext::start(&burn_target);
                let context = ext.context();
                let n = config.burn;
                // Two calls in flight first, whatever `inflight` is: the pool
                // makes its instances on first use, and the second instance's
                // start (instantiate + init) would otherwise be timed as part
                // of the first concurrent call.
                ext.pipeline(4, 2, || {
                    (
                        "tool/call",
                        json!({"name": "burn", "arguments": {"n": 1_000_000}, "context": context}),
                    )
                });
                let started = Instant::now();
                ext.pipeline(config.burn_calls, inflight, || {
                    (
                        "tool/call",
                        json!({"name": "burn", "arguments": {"n": n}, "context": context}),
                    )
                });
                let rate = config.burn_calls as f64 / started.elapsed().as_secs_f64();
                ext.shutdown();
                rate
            }))
        };
        let one = burn_rate(1);
        let two = burn_rate(2);
        let speedup = Summary::of(one.values.iter().zip(&two.values).map(|(a, b)| b / a));
        rows.push(row("idle: CPU-bound burn, 1 in flight, calls/s", one, None));
        rows.push(row("idle: CPU-bound burn, 2 in flight, calls/s", two, None));
        rows.push(row(
            "idle: CPU-bound speed-up, 2 vs 1 in flight (×)",
            speedup,
            None,
        ));
        overhead = inprocess::measure(
            &config.root.join("bench/guest/bench-guest.wasm"),
            config.burn,
            runs,
        );
    }

    let counts = config.count.then(|| {
        let n = config.count_calls;
        // The shim keeps only `OCTET_*` of its environment and never
        // executes itself again, so valgrind's `LD_*` variables leave it
        // alone: callgrind runs the real binary.
        let copy: Result<PathBuf, String> = if count::available("valgrind") {
            Ok(config.shim.clone())
        } else {
            Err("valgrind is not installed".into())
        };
        let callgrind = copy.as_ref().err().cloned();
        let shim_counts = count::per_call(&shim(true), n, &scratch, copy.as_deref().ok());
        let floor_counts = count::per_call(
            &floor,
            n,
            &scratch,
            copy.is_ok().then_some(config.floor.as_path()),
        );
        (callgrind, shim_counts, floor_counts)
    });

    out(&format!(
        "octet-wasm-bench: {} runs × {} sequential calls (fast driver), {} in flight, burn n = {} × {} calls, guest {}; {}; load average before {}, after {}; {:.0} s",
        runs,
        config.calls,
        config.inflight,
        config.burn,
        config.burn_calls,
        config.guest_component,
        stats::machine(),
        load_before,
        stats::load(),
        started.elapsed().as_secs_f64(),
    ));
    out("");
    out(
        "| measurement | octet-wasm median [min–max] | native floor median [min–max] | ratio (shim / floor) |",
    );
    out("|---|---|---|---|");
    for Row { name, shim, floor } in &rows {
        match floor {
            Some(floor) => out(&format!(
                "| {name} | {shim} | {floor} | {:.2} |",
                shim.median / floor.median
            )),
            None => out(&format!("| {name} | {shim} | – | – |")),
        }
    }
    if let Some((callgrind, shim, floor)) = &counts {
        out("");
        out(&format!(
            "Per call ({} and {} calls, the difference; instructions: {}; syscalls: strace -c -f):",
            config.count_calls,
            10 * config.count_calls,
            match callgrind {
                None => "callgrind, user space, all threads".to_owned(),
                Some(why) => format!("not counted: {why}"),
            }
        ));
        out("");
        out("| counter | octet-wasm | native floor | ratio | budget |");
        out("|---|---|---|---|---|");
        let fmt = |v: Option<f64>| v.map_or("–".to_owned(), |v| format!("{v:.0}"));
        let fmt2 = |v: Option<f64>| v.map_or("–".to_owned(), |v| format!("{v:.2}"));
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
            _ => "–".into(),
        };
        let verdict = |v: Option<f64>, budget: f64| match v {
            // Counts are differences of two runs: read to two decimals.
            Some(v) if (v * 100.0).round() / 100.0 <= budget => format!("≤ {budget} — within"),
            Some(_) => format!("≤ {budget} — **over**"),
            None => format!("≤ {budget} — not measured"),
        };
        out(&format!(
            "| user-space instructions per call | {} | {} | {} | {} |",
            fmt(shim.instructions.map(f64::round)),
            fmt(floor.instructions.map(f64::round)),
            ratio(shim.instructions, floor.instructions),
            verdict(shim.instructions, INSTRUCTION_BUDGET)
        ));
        out(&format!(
            "| syscalls per call | {} | {} | {} | {} |",
            fmt2(shim.syscalls),
            fmt2(floor.syscalls),
            ratio(shim.syscalls, floor.syscalls),
            verdict(shim.syscalls, SYSCALL_BUDGET)
        ));
        let list = |p: &count::PerCall| {
            p.by_syscall
                .iter()
                .map(|(name, n)| format!("{name} {n:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out("");
        out(&format!("octet-wasm syscalls per call: {}", list(shim)));
        out(&format!("native floor syscalls per call: {}", list(floor)));
    }
    if !overhead.is_empty() {
        out("");
        out("In-process burn (same guest, same engine settings otherwise), ms per call:");
        out("");
        out("| engine | median [min–max] | ratio to plain |");
        out("|---|---|---|");
        for (name, summary) in &overhead {
            out(&format!(
                "| {name} | {summary} | {:.3} |",
                summary.median / overhead[0].1.median
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000_000.0
}
