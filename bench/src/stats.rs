//! Medians with min–max over runs.

use std::fmt;

#[derive(Clone)]
pub struct Summary {
    pub values: Vec<f64>,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    pub fn of(values: impl IntoIterator<Item = f64>) -> Summary {
        let values: Vec<f64> = values.into_iter().collect();
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let median = if sorted.is_empty() {
            f64::NAN
        } else if sorted.len() % 2 == 1 {
            sorted[sorted.len() / 2]
        } else {
            (sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2]) / 2.0
        };
        Summary {
            median,
            min: sorted.first().copied().unwrap_or(f64::NAN),
            max: sorted.last().copied().unwrap_or(f64::NAN),
            values,
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = if self.median.abs() >= 100.0 {
            0
        } else if self.median.abs() >= 10.0 {
            1
        } else {
            2
        };
        write!(
            f,
            "{:.*} [{:.*}–{:.*}]",
            digits, self.median, digits, self.min, digits, self.max
        )
    }
}

/// One line about the machine, for the report.
pub fn machine() -> String {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{cpus} CPUs ({model})")
}

/// The 1, 5 and 15 minute load averages.
pub fn load() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}
