//! End-to-end tests: the real `octet-wasm` binary driven through
//! `octet_hostsim`, which plays octet's side of the wire and fails a
//! test on any stdout line the real host would die of.
//!
//! Components come from `scripts/build-guests` (`target/components/*.wasm`,
//! copied beside the examples' manifests). Every test gets its own workspace
//! and scratch directory. They run with a private home (`scripts/test` runs
//! them inside `scripts/private-home`, and `support` refuses to run them
//! anywhere else): all share that home's compiled-component cache
//! (`~/.cache/octet-wasm`, which `scripts/test` fills with `octet-wasm
//! compile`), so each component compiles once; tests that write a policy or
//! change the cache's key or directory use a `PrivateHome` of their own.

mod adversarial;
mod agents;
mod api_04;
mod api_04_author;
mod api_04_composition;
mod api_04_examples;
mod api_04_services;
mod author;
mod bad_input;
mod build_command;
mod cache;
mod cancellation;
mod concurrency;
mod deadlines;
mod demo;
mod denied_filesystem;
mod fuzz_corpus;
mod handler_failures;
mod hello_delay;
mod hello_world;
mod hostile_bundle;
mod hostile_cache;
mod hostile_cache_reach;
mod hostile_flood;
mod hostile_json;
mod hostile_limits;
mod hostile_links;
mod hostile_output;
mod hostile_start;
mod hostile_streams;
mod hostile_threads;
mod install;
mod installers;
mod isolation;
mod manifest_mismatch;
mod negotiation;
mod no_code_loading;
mod old_scaffolds;
mod policy_fail_closed;
mod progress;
mod python_agents;
mod python_api_04;
mod python_api_04_examples;
mod python_compat;
mod python_seeds;
mod python_services;
mod receipts;
mod sdk_api_04;
mod sdk_services;
mod services;
mod showcase;
mod shutdown;
mod signatures;
mod support;
mod traps;
mod turn_tracker;
mod word_count;
