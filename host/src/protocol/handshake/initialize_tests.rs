//! Unit tests of `initialize`: checks, negotiation and the answer.

use super::*;

fn description(tools: &[&str], features: &[&str], lifecycle: Vec<LifecycleKind>) -> Description {
    Description {
        name: "t".into(),
        tools: tools
            .iter()
            .map(|name| ToolDefinition {
                name: (*name).into(),
                description: "d".into(),
                parameters: "{\"type\":\"object\"}".into(),
                ..Default::default()
            })
            .collect(),
        lifecycle,
        max_concurrency: 4,
        features: features.iter().map(|s| (*s).into()).collect(),
        ..Default::default()
    }
}

fn offer_v02(optional: &[&str], limit: Option<u64>) -> Value {
    let mut protocol = json!({
        "version": "0.2",
        "required_features": ["request_cancellation", "content_parts"],
        "optional_features": optional,
    });
    if let Some(limit) = limit {
        protocol["limits"] = json!({ "max_concurrent_requests": limit });
    }
    json!({"api_version": "0.2", "contributes": {"tools": ["a"], "commands": []}, "protocol": protocol})
}

#[test]
fn negotiates_only_what_the_guest_uses() {
    let offer = check_params(
        &offer_v02(
            &[
                "artifacts",
                "request_progress",
                "lifecycle_events",
                "dynamic_tools",
            ],
            Some(64),
        ),
        None,
    )
    .unwrap();
    let plain = negotiate(&offer, &description(&["a"], &[], vec![]));
    assert_eq!(
        plain.features,
        vec!["request_cancellation", "content_parts"]
    );
    assert_eq!(plain.max_concurrent, 4);
    let rich = negotiate(
        &offer,
        &description(
            &["a"],
            &["request_progress", "dynamic_tools", "bogus"],
            vec![LifecycleKind::TurnStarted, LifecycleKind::SessionSettled],
        ),
    );
    assert_eq!(
        rich.features,
        vec![
            "request_cancellation",
            "content_parts",
            "request_progress",
            "lifecycle_events",
            "dynamic_tools"
        ]
    );
    assert_eq!(rich.lifecycle, vec!["session/settled", "turn/started"]);
}

#[test]
fn agent_model_selection_needs_agent_sessions() {
    let wants = ["agent_sessions", "agent_model_selection_v1"];
    let both = check_params(&offer_v02(&wants, Some(8)), None).unwrap();
    assert_eq!(
        negotiate(&both, &description(&["a"], &wants, vec![])).features[2..],
        wants
    );
    // Offered only with the service bound: selection alone is dropped.
    let alone = check_params(&offer_v02(&wants[1..], Some(8)), None).unwrap();
    assert_eq!(
        negotiate(&alone, &description(&["a"], &wants, vec![])).features,
        vec!["request_cancellation", "content_parts"]
    );
    // The guest must declare it: offered but undeclared is not negotiated.
    assert_eq!(
        negotiate(&both, &description(&["a"], &[], vec![])).features,
        vec!["request_cancellation", "content_parts"]
    );
}

fn offer_v04(optional: &[&str], hooks: &[&str]) -> Value {
    let mut params = offer_v02(optional, Some(64));
    params["api_version"] = json!("0.4");
    params["protocol"]["version"] = json!("0.4");
    params["protocol"]["limits"]["resource_refs_v1"] =
        json!({"max_records": 256, "max_registrations_per_parent": 32});
    params["protocol"]["bulk_objects_v1"] = json!({"profile": "local-file.v1"});
    params["contributes"]["hooks"] = json!(hooks);
    params
}

#[test]
fn api_0_4_answers_in_its_own_version() {
    let offer = check_params(
        &offer_v04(&["request_progress", "tool_prompt_metadata_v1"], &[]),
        Some("0.4"),
    )
    .unwrap();
    assert_eq!(offer.api, ApiVersion::V0_4);
    let d = description(
        &["a"],
        &["request_progress", "tool_prompt_metadata_v1"],
        vec![],
    );
    let negotiated = negotiate(&offer, &d);
    assert_eq!(
        negotiated.features,
        vec![
            "request_cancellation",
            "content_parts",
            "request_progress",
            "tool_prompt_metadata_v1"
        ]
    );
    let result = reply(offer.api, &d, &negotiated).unwrap();
    assert_eq!(result["api_version"], "0.4");
    assert_eq!(result["protocol"]["version"], "0.4");
    // Only the concurrency limit is answered: echoing the resource
    // limits is allowed but pointless, anything else kills the process.
    assert_eq!(
        result["protocol"]["limits"],
        json!({"max_concurrent_requests": 4})
    );
}

#[test]
fn the_0_4_features_stay_off_the_0_2_wire() {
    // A 0.2 host that (wrongly) offers a 0.4 name still does not get it.
    let offer = check_params(&offer_v02(&["tool_prompt_metadata_v1"], None), None).unwrap();
    let d = description(&["a"], &["tool_prompt_metadata_v1"], vec![]);
    assert_eq!(
        negotiate(&offer, &d).features,
        vec!["request_cancellation", "content_parts"]
    );
}

#[test]
fn declared_0_4_hooks_select_their_features() {
    let params = offer_v04(
        &[
            "cache_warming_decision",
            "pipeline_hooks_v1",
            "compaction_strategy",
        ],
        &["cache_warming_decision", "before_provider_request"],
    );
    let offer = check_params(&params, None).unwrap();
    // The guest handles neither hook: the features are still selected,
    // or the host refuses the answer.
    assert_eq!(
        negotiate(&offer, &description(&["a"], &[], vec![])).features[2..],
        ["cache_warming_decision", "pipeline_hooks_v1"]
    );
    // Not offered: refused before the guest is even started.
    let params = offer_v04(&[], &["compaction_strategy"]);
    let err = check_params(&params, None).unwrap_err();
    assert_eq!(err.code, -32000);
    assert!(err.message.contains("did not offer"), "{}", err.message);
}

#[test]
fn version_strings_must_agree() {
    let mut params = offer_v04(&[], &[]);
    params["protocol"]["version"] = json!("0.2");
    let err = check_params(&params, None).unwrap_err();
    assert_eq!(err.code, -32000);
    assert_eq!(
        err.message,
        "unsupported executable-extension protocol version"
    );
    let mut params = offer_v04(&[], &[]);
    params["contract"] = json!({"version": "0.3"});
    assert_eq!(check_params(&params, None).unwrap_err().code, -32000);
    let err = check_params(&offer_v04(&[], &[]), Some("0.2")).unwrap_err();
    assert_eq!(err.code, -32000);
    let mut params = offer_v02(&[], None);
    params["contributes"]["hooks"] = json!(["cache_warming_decision"]);
    let err = check_params(&params, None).unwrap_err();
    assert_eq!(err.code, -32602);
    assert!(err.message.contains("only on API 0.4"), "{}", err.message);
}

#[test]
fn missing_limits_mean_one() {
    let offer = check_params(&offer_v02(&[], None), None).unwrap();
    assert_eq!(
        negotiate(&offer, &description(&["a"], &[], vec![])).max_concurrent,
        1
    );
}

#[test]
fn rejects_bad_offers_with_sdk_texts() {
    let mut params = offer_v02(&[], None);
    params["protocol"]["required_features"] =
        json!(["request_cancellation", "content_parts", "telepathy"]);
    let err = check_params(&params, None).unwrap_err();
    assert_eq!(err.code, -32000);
    assert_eq!(
        err.data,
        Some(json!({"unsupported_features": ["telepathy"]}))
    );
    let mut params = offer_v02(&["a", "a"], None);
    assert!(
        check_params(&params, None)
            .unwrap_err()
            .message
            .contains("duplicate")
    );
    params = offer_v02(&[], Some(0));
    assert_eq!(check_params(&params, None).unwrap_err().code, -32602);
    params = offer_v02(&[], None);
    params["protocol"]["limits"] = json!({"max_concurrent_requests": true});
    assert_eq!(check_params(&params, None).unwrap_err().code, -32602);
    assert_eq!(
        check_params(&json!({"api_version": "0.2"}), None)
            .unwrap_err()
            .code,
        -32602
    );
    assert_eq!(
        check_params(&json!({"api_version": "0.1"}), Some("0.2"))
            .unwrap_err()
            .code,
        -32000
    );
}

#[test]
fn registration_mismatch_names_both_sides() {
    let offer = check_params(
        &json!({"api_version": "0.1", "contributes": {"tools": ["a", "b"], "commands": []}}),
        None,
    )
    .unwrap();
    let err = check_registration(&offer, &description(&["a"], &[], vec![])).unwrap_err();
    assert_eq!(
        err.message,
        "registered tools do not match manifest declarations"
    );
    assert_eq!(
        err.data,
        Some(json!({"declared": ["a", "b"], "registered": ["a"]}))
    );
    assert!(check_registration(&offer, &description(&["a", "b", "b"], &[], vec![])).is_err());
}

/// docs/protocol.md §3.3/§4.3 and docs/services.md §9 once said API 0.4 was
/// not implemented; the refusal the docs quote must be the one answered.
#[test]
fn the_docs_quote_the_version_refusal_and_no_longer_deny_api_0_4() {
    let protocol_md = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md"));
    let services_md = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/services.md"));
    let err = check_params(&json!({"api_version": "0.3"}), None).unwrap_err();
    let (_, implemented) = err.message.split_once("\"0.3\"").unwrap();
    assert!(
        protocol_md.contains(&format!("host requested \"...\"{implemented}")),
        "docs/protocol.md#initialize-checks does not quote {:?}",
        err.message
    );
    assert!(protocol_md.contains("(`0.1`, `0.2` or `0.4`)"));
    assert!(!services_md.contains("API 0.4 is not implemented"));
}
