//! The compiled-component cache: a second start of the same component loads
//! it from the cache and says so on stderr.

use crate::support::{LOG_TIMEOUT, Shim, stderr_text};
use octet_hostsim::ApiVersion;

/// Starts the probe, initializes it and returns the `source` of its
/// `component loaded` record.
fn load_source() -> String {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    let record = shim
        .stderr()
        .wait_for_message(LOG_TIMEOUT, "component loaded")
        .unwrap_or_else(|| {
            panic!(
                "no `component loaded` record; stderr:\n{}",
                stderr_text(&shim)
            )
        });
    let source = record
        .field("source")
        .and_then(|s| s.as_str())
        .map(str::to_owned);
    shim.shutdown();
    match source {
        Some(source) if source == "cache" || source == "compiled" => source,
        other => panic!("`component loaded` source is {other:?}: {}", record.text),
    }
}

#[test]
fn second_start_loads_from_the_cache() {
    load_source();
    assert_eq!(load_source(), "cache");
}
