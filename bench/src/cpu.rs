//! CPU time of the extension process and of the driver itself.
//!
//! The child's figure is the sum of `/proc/<pid>/task/*/schedstat` (run
//! time in nanoseconds of every live thread). A thread that exits between
//! the two readings would be lost, so the measured loop is short and
//! starts well after start-up; `/proc/<pid>/stat` (which keeps dead
//! threads) is only tick-precise, too coarse for the floor's 1–2 µs a
//! call. The driver's own figure is its thread's `schedstat`: the driver
//! is one thread.

/// CPU time of process `pid`'s live threads so far, in seconds; 0 when it
/// cannot be read.
pub fn process_seconds(pid: u32) -> f64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0.0;
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|text| text.split_whitespace().next()?.parse::<f64>().ok())
        .sum::<f64>()
        / 1e9
}

/// CPU time of the calling thread so far, in seconds.
pub fn thread_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e9)
}

/// A second process keeping one core busy (the harness re-executed with
/// `--spin`), for the figures "under load". Killed on drop.
pub struct Spinner(std::process::Child);

impl Spinner {
    pub fn start() -> Spinner {
        let exe = std::env::current_exe().expect("the harness's own path");
        let child = std::process::Command::new(exe)
            .arg("--spin")
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("start the spinner");
        // Let it get onto a core before anything is measured.
        std::thread::sleep(std::time::Duration::from_millis(200));
        Spinner(child)
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The spinner's body: burns one core until killed.
pub fn spin() -> ! {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    loop {
        for _ in 0..1_000_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        std::hint::black_box(x);
    }
}
