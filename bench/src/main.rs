//! `octet-wasm-bench`: starts octet-wasm the way octet does and measures it
//! against a native floor extension in the same run.
//!
//! The harness speaks the wire with a plain blocking reader and writer on
//! the child's pipes (no checker, no threads), so its own cost per call is a
//! few microseconds of JSON work; the native floor's round trip includes the
//! same harness cost and bounds it from above.
//!
//! Usage: octet-wasm-bench [--runs N] [--calls N] [--inflight K] [--burn N]
//! (run from the repository root after `scripts/bench` built everything).

mod inprocess;
mod stats;
mod wire;

use serde_json::json;
use stats::Summary;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use wire::{Ext, Target};

struct Config {
    runs: usize,
    calls: usize,
    inflight: usize,
    burn: u64,
    burn_calls: usize,
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
        burn_calls: 8,
        shim: root.join("target/x86_64-unknown-linux-gnu/release/octet-wasm"),
        floor: root.join("target/x86_64-unknown-linux-gnu/release/native-floor"),
        root,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
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

fn main() {
    let config = parse_args();
    let hello = config.root.join("examples/hello-world");
    let burn_dir = config.root.join("bench/guest");
    let scratch = std::env::temp_dir().join(format!("octet-wasm-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&scratch);
    let shim = |warm: bool| Target::shim(&config.shim, &hello, "hello-world.wasm", warm, &scratch);
    let floor = Target::native(&config.floor, &hello, &scratch);

    // Fill the warm cache once.
    Ext::start(&shim(true)).shutdown();

    let mut rows: Vec<(String, Summary, Option<Summary>, &str)> = Vec::new();
    let runs = config.runs;

    let cold = Summary::of((0..runs).map(|_| {
        let (ext, took) = Ext::start_timed(&shim(false));
        ext.shutdown();
        ms(took)
    }));
    let warm = Summary::of((0..runs).map(|_| {
        let (ext, took) = Ext::start_timed(&shim(true));
        ext.shutdown();
        ms(took)
    }));
    let floor_start = Summary::of((0..runs).map(|_| {
        let (ext, took) = Ext::start_timed(&floor);
        ext.shutdown();
        ms(took)
    }));
    rows.push((
        "spawn → initialize reply, first start (compiles), ms".into(),
        cold,
        Some(floor_start.clone()),
        "lower",
    ));
    rows.push((
        "spawn → initialize reply, warm (compiled cache), ms".into(),
        warm,
        Some(floor_start),
        "lower",
    ));

    let sequential = |target: &Target| {
        let mut rates = Vec::new();
        let mut p50s = Vec::new();
        let mut p99s = Vec::new();
        let mut rss = Vec::new();
        let mut exits = Vec::new();
        for _ in 0..runs {
            let mut ext = Ext::start(target);
            let mut latencies = Vec::with_capacity(config.calls);
            let started = Instant::now();
            for _ in 0..config.calls {
                let t = Instant::now();
                ext.call("tool/call", json!({"name": "hello_world", "arguments": {"name": "Ada"}, "context": ext.context()}));
                latencies.push(t.elapsed());
            }
            rates.push(config.calls as f64 / started.elapsed().as_secs_f64());
            latencies.sort_unstable();
            p50s.push(us(latencies[latencies.len() / 2]));
            p99s.push(us(latencies[latencies.len() * 99 / 100]));
            rss.push(ext.peak_rss_kib() as f64 / 1024.0);
            exits.push(ms(ext.shutdown()));
        }
        (
            Summary::of(rates),
            Summary::of(p50s),
            Summary::of(p99s),
            Summary::of(rss),
            Summary::of(exits),
        )
    };
    let (s_rate, s_p50, s_p99, s_rss, s_exit) = sequential(&shim(true));
    let (f_rate, f_p50, f_p99, f_rss, f_exit) = sequential(&floor);
    rows.push((
        "sequential hello_world calls/s".into(),
        s_rate,
        Some(f_rate),
        "higher",
    ));
    rows.push((
        "sequential call latency p50, µs".into(),
        s_p50,
        Some(f_p50),
        "lower",
    ));
    rows.push((
        "sequential call latency p99, µs".into(),
        s_p99,
        Some(f_p99),
        "lower",
    ));
    rows.push((
        "peak RSS after the calls, MiB".into(),
        s_rss,
        Some(f_rss),
        "lower",
    ));
    rows.push((
        "shutdown ack → process exit, ms".into(),
        s_exit,
        Some(f_exit),
        "lower",
    ));

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
    rows.push((
        format!(
            "{} calls in flight (API 0.1 queues them), calls/s",
            config.inflight
        ),
        pipelined(&shim(true)),
        Some(pipelined(&floor)),
        "higher",
    ));

    let burn_target = Target::shim(&config.shim, &burn_dir, "bench-guest.wasm", true, &scratch);
    let burn_rate = |inflight: usize| {
        Summary::of((0..runs).map(|_| {
            let mut ext = Ext::start(&burn_target);
            let context = ext.context();
            let n = config.burn;
            ext.call(
                "tool/call",
                json!({"name": "burn", "arguments": {"n": 1000}, "context": context}),
            );
            ext.call(
                "tool/call",
                json!({"name": "burn", "arguments": {"n": 1000}, "context": context}),
            );
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
    rows.push((
        "CPU-bound burn, 1 in flight, calls/s".into(),
        one,
        None,
        "higher",
    ));
    rows.push((
        "CPU-bound burn, 2 in flight, calls/s".into(),
        two,
        None,
        "higher",
    ));
    rows.push((
        "CPU-bound speed-up, 2 vs 1 in flight (×)".into(),
        speedup,
        None,
        "higher",
    ));

    let overhead = inprocess::measure(
        &config.root.join("bench/guest/bench-guest.wasm"),
        config.burn,
        runs,
    );

    out(&format!(
        "octet-wasm-bench: {} runs, {} sequential calls, {} in flight, burn n = {} × {} calls; {}",
        runs,
        config.calls,
        config.inflight,
        config.burn,
        config.burn_calls,
        stats::machine()
    ));
    out("");
    out(
        "| measurement | octet-wasm median [min–max] | native floor median [min–max] | ratio (shim / floor) |",
    );
    out("|---|---|---|---|");
    for (name, shim, floor, _better) in &rows {
        match floor {
            Some(floor) => out(&format!(
                "| {name} | {shim} | {floor} | {:.2} |",
                shim.median / floor.median
            )),
            None => out(&format!("| {name} | {shim} | – | – |")),
        }
    }
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
    let _ = std::fs::remove_dir_all(&scratch);
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000_000.0
}
