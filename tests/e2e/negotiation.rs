//! API 0.2 `initialize` negotiation (docs/protocol.md#negotiation,
//! docs/protocol.md#initialize-answer, docs/protocol.md#initialize-failure,
//! docs/protocol.md#concurrency) with the probe, which declares concurrency
//! 4, `request_progress`, `progress_decoration` and handlers for all six
//! lifecycle events.

use crate::support::{Shim, expect_error, expect_result, protocol, raws};
use octet_hostsim::{ApiVersion, HOST_OPTIONAL_FEATURES, REQUIRED_FEATURES};
use serde_json::{Value, json};

const ALL_LIFECYCLE: [&str; 6] = [
    "session/settled",
    "session/started",
    "tool/settled",
    "tool/started",
    "turn/settled",
    "turn/started",
];

fn probe() -> Shim {
    Shim::probe(ApiVersion::V0_2)
}

#[test]
fn the_full_host_offer_yields_what_the_probe_uses() {
    assert_eq!(HOST_OPTIONAL_FEATURES.len(), 21);
    let mut shim = probe();
    let params = shim.init_params();
    let reply = shim.initialize_with(params);
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    let result = expect_result(&reply);
    // A shim should emit only these four members
    // (docs/protocol.md#initialize-answer).
    let mut keys: Vec<&str> = result
        .as_object()
        .map(|object| object.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["api_version", "commands", "protocol", "tools"],
        "{result}"
    );
    assert_eq!(result["api_version"], "0.2");
    let protocol = protocol(result);
    let mut members: Vec<&str> = protocol
        .as_object()
        .map(|object| object.keys().map(String::as_str).collect())
        .unwrap_or_default();
    members.sort_unstable();
    // The host decodes `protocol` strictly (docs/protocol.md#initialize-answer).
    assert_eq!(
        members,
        ["features", "lifecycle_events", "limits", "version"],
        "{result}"
    );
    assert_eq!(protocol["version"], "0.2");
    assert_eq!(protocol["limits"], json!({"max_concurrent_requests": 4}));
    assert_eq!(protocol["lifecycle_events"], json!(ALL_LIFECYCLE));
    let features: Vec<&str> = protocol["features"]
        .as_array()
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Required first, then optional ones in the host's order, each once.
    assert_eq!(features[..2], REQUIRED_FEATURES, "{result}");
    let mut offered = HOST_OPTIONAL_FEATURES.iter();
    for feature in &features[2..] {
        assert!(
            offered.any(|f| f == feature),
            "{feature} is not offered, repeated or out of the host's order: {features:?}"
        );
    }
    // What the probe uses is negotiated ...
    for feature in [
        "request_progress",
        "progress_decoration",
        "artifacts",
        "lifecycle_events",
        "policy_intents",
        "dynamic_tools",
    ] {
        assert!(
            features.contains(&feature),
            "{feature} missing: {features:?}"
        );
    }
    // ... and nothing whose host traffic the shim cannot serve.
    for feature in HOST_OPTIONAL_FEATURES[6..].iter() {
        assert!(
            !features.contains(feature),
            "{feature} negotiated: {features:?}"
        );
    }
    shim.shutdown();
}

#[test]
fn a_required_feature_we_lack_is_refused_and_a_retry_works() {
    let mut shim = probe();
    let mut params = shim.init_params();
    params["protocol"]["required_features"] = json!([
        "request_cancellation",
        "content_parts",
        "delegation_telemetry_v1"
    ]);
    let reply = shim.initialize_with(params);
    let error = expect_error(&reply);
    assert_eq!(error.code, -32000, "{}", reply.frame.raw);
    assert_eq!(
        error.message, "required API 0.2 features are unsupported",
        "{}",
        reply.frame.raw
    );
    assert_eq!(
        error.data,
        Some(json!({"unsupported_features": ["delegation_telemetry_v1"]})),
        "{}",
        reply.frame.raw
    );
    // The shim stays uninitialized (docs/protocol.md#initialize-failure):
    // other requests are refused, and
    // a correct initialize still succeeds.
    let context = shim.context();
    let reply = shim.call(
        "tool/call",
        json!({"name": "echo", "arguments": {"text": "x"}, "context": context}),
    );
    assert_eq!(expect_error(&reply).code, -32600, "{}", reply.frame.raw);
    let result = shim.initialize();
    assert_eq!(protocol(&result)["limits"]["max_concurrent_requests"], 4);
    shim.assert_alive_and_silent("a refused initialize");
    shim.shutdown();
}

#[test]
fn duplicate_features_are_invalid_params() {
    for key in ["optional_features", "required_features"] {
        let mut shim = probe();
        let mut params = shim.init_params();
        let list = params["protocol"][key].clone();
        let mut doubled = list.as_array().cloned().unwrap_or_default();
        doubled.push(doubled[0].clone());
        params["protocol"][key] = Value::Array(doubled);
        let reply = shim.initialize_with(params);
        let error = expect_error(&reply);
        assert_eq!(error.code, -32602, "{key}: {}", reply.frame.raw);
        assert!(
            error.message.contains("duplicate"),
            "{key}: {}",
            reply.frame.raw
        );
    }
}

#[test]
fn bad_limits_are_invalid_params() {
    for limit in [json!(0), json!(-1), json!(true), json!("4"), json!(1.5)] {
        let mut shim = probe();
        let mut params = shim.init_params();
        params["protocol"]["limits"] = json!({"max_concurrent_requests": limit});
        let reply = shim.initialize_with(params);
        assert_eq!(
            expect_error(&reply).code,
            -32602,
            "limit {limit}: {}",
            reply.frame.raw
        );
    }
}

#[test]
fn missing_limits_mean_one_request_at_a_time() {
    for remove in ["limits", "max_concurrent_requests"] {
        let mut shim = probe();
        let mut params = shim.init_params();
        match remove {
            "limits" => params["protocol"]
                .as_object_mut()
                .map(|protocol| protocol.remove("limits")),
            _ => params["protocol"]["limits"]
                .as_object_mut()
                .map(|limits| limits.remove("max_concurrent_requests")),
        };
        let result = expect_result(&shim.initialize_with(params)).clone();
        assert_eq!(
            protocol(&result)["limits"],
            json!({"max_concurrent_requests": 1}),
            "without {remove}: {result}"
        );
        shim.assert_alive_and_silent("initialize without limits");
        shim.shutdown();
    }
}

#[test]
fn concurrency_is_the_smaller_of_offer_and_guest() {
    for (offered, expected) in [
        (64, 4),
        (5, 4),
        (4, 4),
        (3, 3),
        (2, 2),
        (1, 1),
        (u64::MAX, 4),
    ] {
        let mut shim = probe();
        let params = shim.offer().max_concurrent_requests(offered).to_json();
        let result = expect_result(&shim.initialize_with(params)).clone();
        assert_eq!(
            protocol(&result)["limits"]["max_concurrent_requests"],
            expected,
            "offer {offered}: {result}"
        );
        shim.shutdown();
    }
}

#[test]
fn only_offered_features_are_negotiated() {
    let mut shim = probe();
    let params = shim
        .offer()
        .optional_features(&["lifecycle_events"])
        .to_json();
    let result = expect_result(&shim.initialize_with(params)).clone();
    assert_eq!(
        protocol(&result)["features"],
        json!(["request_cancellation", "content_parts", "lifecycle_events"]),
        "{result}"
    );
    shim.shutdown();

    // progress_decoration needs request_progress: offered alone, it is not
    // negotiated.
    let mut shim = probe();
    let params = shim
        .offer()
        .optional_features(&["progress_decoration", "semantic_ui"])
        .to_json();
    let result = expect_result(&shim.initialize_with(params)).clone();
    assert_eq!(
        *protocol(&result),
        json!({
            "version": "0.2",
            "features": ["request_cancellation", "content_parts"],
            "limits": {"max_concurrent_requests": 4},
        }),
        "{result}"
    );
    shim.shutdown();
}
