//! Unit tests of the frame checker with literal JSON lines.

use super::*;
use serde_json::json;

fn facts_v01() -> ManifestFacts {
    ManifestFacts {
        api_version: ApiVersion::V0_1,
        tools: vec!["word_count".into()],
        commands: vec![],
        ui: vec!["status".into()],
        context: true,
        notifications: true,
        confirmations: true,
    }
}

fn facts_v02(notifications: bool) -> ManifestFacts {
    ManifestFacts {
        api_version: ApiVersion::V0_2,
        notifications,
        ..facts_v01()
    }
}

/// A 0.2 checker with host tool call 12 in flight.
fn ready_v02(features: &[&str]) -> FrameChecker {
    let mut checker = FrameChecker::initialized_with(facts_v02(true), features);
    checker.host_sent_request(12, "tool/call", &json!({}));
    checker
}

fn rule_of(checker: &mut FrameChecker, line: &str) -> Option<Rule> {
    checker.check_line(line.as_bytes()).err().map(|v| v.rule)
}

fn ok(checker: &mut FrameChecker, line: &str) -> Frame {
    match checker.check_line(line.as_bytes()) {
        Ok(Some(frame)) => frame,
        other => panic!("expected a good frame for {line}, got {other:?}"),
    }
}

// ----- framing ----------------------------------------------------------

#[test]
fn accepts_a_response_and_decodes_it() {
    let mut checker = ready_v02(&[]);
    let frame = ok(
        &mut checker,
        r#"{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"hi"}],"is_error":false,"metadata":{}}}"#,
    );
    assert_eq!(frame.response_id(), Some(12));
    assert!(matches!(frame.outcome(), Some(Ok(_))));
}

/// octet parses lines with serde_json, whose recursion limit makes a
/// line nested 128 levels deep unparseable (fatal); the checker uses the
/// same parser, so it refuses exactly what the host would.
#[test]
fn nesting_past_serde_jsons_limit_is_fatal() {
    let mut checker = ready_v02(&[]);
    let line = |levels: usize| {
        // The envelope and `result` are 1 level; the rest is the value.
        let value = format!("{}0{}", "[".repeat(levels - 1), "]".repeat(levels - 1));
        format!(r#"{{"jsonrpc":"2.0","id":12,"result":{value}}}"#)
    };
    ok(&mut checker, &line(127));
    checker.host_sent_request(12, "tool/call", &json!({}));
    let violation = checker.check_line(line(128).as_bytes()).unwrap_err();
    assert_eq!(violation.rule, Rule::NotJson);
    assert!(
        violation.detail.contains("recursion limit exceeded"),
        "{}",
        violation.detail
    );
}

#[test]
fn accepts_crlf_whitespace_and_blank_lines() {
    let mut checker = ready_v02(&[]);
    assert_eq!(checker.check_line(b""), Ok(None));
    assert_eq!(checker.check_line(b"\r"), Ok(None));
    ok(
        &mut checker,
        "{ \"id\" : 12 , \"result\" : {} , \"jsonrpc\" : \"2.0\" }\r",
    );
}

#[test]
fn rejects_invalid_utf8() {
    let mut checker = ready_v02(&[]);
    let violation = checker
        .check_line(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\xff\"}")
        .unwrap_err();
    assert_eq!(violation.rule, Rule::NotUtf8);
}

#[test]
fn rejects_non_json_and_non_objects() {
    let mut checker = ready_v02(&[]);
    assert_eq!(
        rule_of(&mut checker, "hello from the guest"),
        Some(Rule::NotJson)
    );
    assert_eq!(
        rule_of(&mut checker, r#"{"jsonrpc":"2.0""#),
        Some(Rule::NotJson)
    );
    assert_eq!(
        rule_of(&mut checker, r#"[{"jsonrpc":"2.0","id":12,"result":{}}]"#),
        Some(Rule::NotObject)
    );
    assert_eq!(rule_of(&mut checker, "42"), Some(Rule::NotObject));
}

#[test]
fn rejects_a_wrong_or_missing_jsonrpc() {
    let mut checker = ready_v02(&[]);
    assert_eq!(
        rule_of(&mut checker, r#"{"id":12,"result":{}}"#),
        Some(Rule::BadJsonrpc)
    );
    assert_eq!(
        rule_of(&mut checker, r#"{"jsonrpc":"1.0","id":12,"result":{}}"#),
        Some(Rule::BadJsonrpc)
    );
    assert_eq!(
        rule_of(&mut checker, r#"{"jsonrpc":2.0,"id":12,"result":{}}"#),
        Some(Rule::BadJsonrpc)
    );
}

#[test]
fn enforces_the_line_limit_exactly() {
    let mut checker = ready_v02(&[]);
    let frame = |total: usize| {
        let head = r#"{"jsonrpc":"2.0","id":12,"result":{"pad":""#;
        let tail = r#""}}"#;
        let pad = "x".repeat(total - head.len() - tail.len());
        format!("{head}{pad}{tail}")
    };
    let longest = frame(MAX_LINE_BYTES - 1);
    assert_eq!(longest.len(), 1_048_575);
    ok(&mut checker, &longest);
    checker.host_sent_request(12, "tool/call", &json!({}));
    let violation = checker
        .check_line(frame(MAX_LINE_BYTES).as_bytes())
        .unwrap_err();
    assert_eq!(violation.rule, Rule::LineTooLong);
    assert!(
        violation.line.len() < 3_000,
        "the violation keeps a shortened line"
    );
}

#[test]
fn rejects_an_unterminated_last_line() {
    let checker = ready_v02(&[]);
    assert_eq!(checker.check_eof(b""), Ok(()));
    let violation = checker
        .check_eof(br#"{"jsonrpc":"2.0","id":12,"result":{}}"#)
        .unwrap_err();
    assert_eq!(violation.rule, Rule::Unterminated);
}

// ----- responses --------------------------------------------------------

#[test]
fn rejects_non_u64_response_ids() {
    for id in ["null", "\"12\"", "-1", "1.5", "18446744073709551616"] {
        let mut checker = ready_v02(&[]);
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32700,"message":"Parse error"}}}}"#
        );
        assert_eq!(
            rule_of(&mut checker, &line),
            Some(Rule::BadResponseId),
            "{line}"
        );
    }
    let mut checker = ready_v02(&[]);
    assert_eq!(
        rule_of(&mut checker, r#"{"jsonrpc":"2.0","result":{}}"#),
        Some(Rule::BadResponseId)
    );
}

#[test]
fn rejects_responses_without_exactly_one_wellformed_outcome() {
    let lines = [
        r#"{"jsonrpc":"2.0","id":12}"#,
        r#"{"jsonrpc":"2.0","id":12,"result":{},"error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":12,"error":{"code":"-32600","message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":12,"error":{"code":-32600}}"#,
        r#"{"jsonrpc":"2.0","id":12,"error":"bad"}"#,
        r#"{"jsonrpc":"2.0","id":12,"error":{"code":1.5,"message":"x"}}"#,
    ];
    for line in lines {
        let mut checker = ready_v02(&[]);
        assert_eq!(
            rule_of(&mut checker, line),
            Some(Rule::BadResponseBody),
            "{line}"
        );
    }
    let mut checker = ready_v02(&[]);
    let frame = ok(
        &mut checker,
        r#"{"jsonrpc":"2.0","id":12,"error":{"code":-32800,"message":"request cancelled","data":{"reason":"user"}}}"#,
    );
    let Some(Err(error)) = frame.outcome() else {
        panic!("expected an error")
    };
    assert_eq!(error.code, -32800);
    assert_eq!(error.data, Some(json!({"reason": "user"})));
}

#[test]
fn one_response_per_host_request() {
    let mut checker = ready_v02(&[]);
    let line = r#"{"jsonrpc":"2.0","id":12,"result":{}}"#;
    ok(&mut checker, line);
    assert_eq!(rule_of(&mut checker, line), Some(Rule::UnexpectedResponse));
    assert_eq!(
        rule_of(&mut checker, r#"{"jsonrpc":"2.0","id":99,"result":{}}"#),
        Some(Rule::UnexpectedResponse)
    );
    // The same id sent twice (a duplicate-id test) may be answered twice.
    checker.host_sent_request(13, "tool/call", &json!({}));
    checker.host_sent_request(13, "tool/call", &json!({}));
    ok(&mut checker, r#"{"jsonrpc":"2.0","id":13,"result":{}}"#);
    ok(
        &mut checker,
        r#"{"jsonrpc":"2.0","id":13,"error":{"code":-32600,"message":"duplicate active request id"}}"#,
    );
}

#[test]
fn rejects_a_non_string_method() {
    let mut checker = ready_v02(&[]);
    assert_eq!(
        rule_of(&mut checker, r#"{"jsonrpc":"2.0","method":7,"params":{}}"#),
        Some(Rule::BadMethod)
    );
}

// ----- initialize -------------------------------------------------------

fn init_params_v01() -> serde_json::Value {
    json!({"api_version":"0.1","contributes":{"tools":["word_count"],"commands":["stats"],"hooks":[],"ui":[],"context":false,"tool_renderers":[],"notifications":true,"confirmations":false}})
}

const GOOD_INIT_V01: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"api_version":"0.1","tools":[{"name":"word_count","description":"Count words in a file","parameters":{"type":"object"}}],"commands":[{"name":"stats","description":"Show shim statistics","usage":"/stats [module]"}]}}"#;

#[test]
fn nothing_may_precede_the_initialize_response() {
    let mut checker = FrameChecker::new();
    checker.host_sent_request(1, "initialize", &init_params_v01());
    let notification = r#"{"jsonrpc":"2.0","method":"notification","params":{"message":"hi"}}"#;
    assert_eq!(
        rule_of(&mut checker, notification),
        Some(Rule::BeforeInitialize)
    );
    ok(&mut checker, GOOD_INIT_V01);
    assert!(checker.is_initialized());
    assert!(checker.features().is_empty());
    ok(&mut checker, notification);
}

#[test]
fn an_initialize_error_leaves_the_generation_uninitialized() {
    let mut checker = FrameChecker::new();
    checker.host_sent_request(1, "initialize", &init_params_v01());
    ok(
        &mut checker,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"registered tools do not match manifest declarations","data":{"declared":["word_count"],"registered":["word_count","line_count"]}}}"#,
    );
    assert!(!checker.is_initialized());
    assert_eq!(
        rule_of(
            &mut checker,
            r#"{"jsonrpc":"2.0","method":"notification","params":{"message":"hi"}}"#
        ),
        Some(Rule::BeforeInitialize)
    );
}

#[test]
fn rejects_initialize_results_the_host_would_refuse() {
    let bad = [
        // wrong version
        r#"{"jsonrpc":"2.0","id":1,"result":{"api_version":"0.2","tools":[],"commands":[]}}"#,
        // protocol on 0.1
        r#"{"jsonrpc":"2.0","id":1,"result":{"api_version":"0.1","tools":[{"name":"word_count","description":"d","parameters":{}}],"commands":[{"name":"stats","description":"d"}],"protocol":{}}}"#,
        // tool set differs from the manifest
        r#"{"jsonrpc":"2.0","id":1,"result":{"api_version":"0.1","tools":[],"commands":[{"name":"stats","description":"d"}]}}"#,
        // output_schema on 0.1
        r#"{"jsonrpc":"2.0","id":1,"result":{"api_version":"0.1","tools":[{"name":"word_count","description":"d","parameters":{},"output_schema":{}}],"commands":[{"name":"stats","description":"d"}]}}"#,
        // empty command description
        r#"{"jsonrpc":"2.0","id":1,"result":{"api_version":"0.1","tools":[{"name":"word_count","description":"d","parameters":{}}],"commands":[{"name":"stats","description":" "}]}}"#,
    ];
    for line in bad {
        let mut checker = FrameChecker::new();
        checker.host_sent_request(1, "initialize", &init_params_v01());
        assert_eq!(
            rule_of(&mut checker, line),
            Some(Rule::InvalidInitializeResult),
            "{line}"
        );
    }
}

fn init_params_v02() -> serde_json::Value {
    json!({"api_version":"0.2","contributes":{"tools":[],"commands":[],"shortcuts":[],"hooks":[],"ui":[],"context":false,"tool_renderers":[],"notifications":false,"confirmations":false},
           "protocol":{"version":"0.2","required_features":["request_cancellation","content_parts"],"optional_features":["request_progress","lifecycle_events"],"limits":{"max_concurrent_requests":64}}})
}

#[test]
fn negotiates_features_from_a_v02_result() {
    let mut checker = FrameChecker::new();
    checker.host_sent_request(1, "initialize", &init_params_v02());
    ok(
        &mut checker,
        r#"{"jsonrpc":"2.0","id":1,"result":{"api_version":"0.2","tools":[],"commands":[],"protocol":{"version":"0.2","features":["request_cancellation","content_parts","request_progress"],"limits":{"max_concurrent_requests":4}}}}"#,
    );
    assert!(checker.features().contains("request_progress"));
    assert_eq!(checker.manifest().api_version, ApiVersion::V0_2);
}

#[test]
fn rejects_bad_v02_protocol_members() {
    let protocols = [
        r#"{"version":"0.2","features":["request_cancellation"],"limits":{"max_concurrent_requests":4}}"#,
        r#"{"version":"0.2","features":["request_cancellation","content_parts","artifacts"],"limits":{"max_concurrent_requests":4}}"#,
        r#"{"version":"0.2","features":["request_cancellation","content_parts","content_parts"],"limits":{"max_concurrent_requests":4}}"#,
        r#"{"version":"0.2","features":["request_cancellation","content_parts"],"limits":{"max_concurrent_requests":0}}"#,
        r#"{"version":"0.2","features":["request_cancellation","content_parts"],"limits":{"max_concurrent_requests":4,"x":1}}"#,
        r#"{"version":"0.2","features":["request_cancellation","content_parts"],"limits":{"max_concurrent_requests":4},"extra":1}"#,
        r#"{"version":"0.2","features":["request_cancellation","content_parts"],"limits":{"max_concurrent_requests":4},"lifecycle_events":["turn/started"]}"#,
        r#"{"version":"0.2","features":["request_cancellation","content_parts","lifecycle_events"],"limits":{"max_concurrent_requests":4},"lifecycle_events":["turn/begun"]}"#,
    ];
    for protocol in protocols {
        let mut checker = FrameChecker::new();
        checker.host_sent_request(1, "initialize", &init_params_v02());
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"api_version":"0.2","tools":[],"commands":[],"protocol":{protocol}}}}}"#
        );
        assert_eq!(
            rule_of(&mut checker, &line),
            Some(Rule::InvalidInitializeResult),
            "{protocol}"
        );
    }
}

// ----- extension-originated messages -------------------------------------

#[test]
fn notification_needs_the_manifest_declaration_and_strict_params() {
    let line = r#"{"jsonrpc":"2.0","method":"notification","params":{"level":"success","message":"hello_world greeted Ada"}}"#;
    let mut declared = ready_v02(&[]);
    ok(&mut declared, line);
    let mut undeclared = FrameChecker::initialized_with(facts_v02(false), &[]);
    assert_eq!(rule_of(&mut undeclared, line), Some(Rule::Undeclared));
    for bad in [
        r#"{"jsonrpc":"2.0","method":"notification","params":{"message":"x","colour":"red"}}"#,
        r#"{"jsonrpc":"2.0","method":"notification","params":{"level":"loud","message":"x"}}"#,
        r#"{"jsonrpc":"2.0","method":"notification","params":{"level":"info"}}"#,
        r#"{"jsonrpc":"2.0","method":"notification"}"#,
    ] {
        assert_eq!(
            rule_of(&mut declared, bad),
            Some(Rule::InvalidParams),
            "{bad}"
        );
    }
}

#[test]
fn context_and_status_contributions_need_declarations() {
    let mut checker = ready_v02(&[]);
    ok(
        &mut checker,
        r#"{"jsonrpc":"2.0","method":"context/contribution","params":{"label":"l","content":"c","placement":"system_suffix"}}"#,
    );
    ok(
        &mut checker,
        r#"{"jsonrpc":"2.0","method":"status/contribution","params":{"surface":"status","text":"idle","style_role":null,"priority":5}}"#,
    );
    assert_eq!(
        rule_of(
            &mut checker,
            r#"{"jsonrpc":"2.0","method":"status/contribution","params":{"surface":"footer","text":"idle"}}"#
        ),
        Some(Rule::Undeclared)
    );
    assert_eq!(
        rule_of(
            &mut checker,
            r#"{"jsonrpc":"2.0","method":"context/contribution","params":{"label":"l","content":"c","placement":"middle"}}"#
        ),
        Some(Rule::InvalidParams)
    );
    let mut no_context = FrameChecker::initialized_with(
        ManifestFacts {
            context: false,
            ..facts_v01()
        },
        &[],
    );
    assert_eq!(
        rule_of(
            &mut no_context,
            r#"{"jsonrpc":"2.0","method":"context/contribution","params":{"label":"l","content":"c"}}"#
        ),
        Some(Rule::Undeclared)
    );
}

#[test]
fn progress_needs_the_negotiated_features() {
    let status = r#"{"jsonrpc":"2.0","method":"$/progress","params":{"request_id":12,"sequence":1,"event":{"type":"status","message":"reading","current":1,"total":2,"unit":"steps"}}}"#;
    let decoration = r#"{"jsonrpc":"2.0","method":"$/progress","params":{"request_id":12,"sequence":2,"event":{"type":"decoration","label":"wc"}}}"#;
    let mut without = ready_v02(&[]);
    assert_eq!(rule_of(&mut without, status), Some(Rule::NotNegotiated));
    let mut with = ready_v02(&["request_progress"]);
    ok(&mut with, status);
    assert_eq!(rule_of(&mut with, decoration), Some(Rule::NotNegotiated));
    let mut decorated = ready_v02(&["request_progress", "progress_decoration"]);
    ok(&mut decorated, decoration);
    for bad in [
        r#"{"jsonrpc":"2.0","method":"$/progress","params":{"request_id":12,"sequence":3,"event":{"type":"output","stream":"stdout","encoding":"base64","data":"a$=="}}}"#,
        r#"{"jsonrpc":"2.0","method":"$/progress","params":{"request_id":12,"sequence":3,"event":{"type":"status","message":"m","extra":1}}}"#,
        r#"{"jsonrpc":"2.0","method":"$/progress","params":{"request_id":"12","sequence":3,"event":{"type":"status","message":"m"}}}"#,
        r#"{"jsonrpc":"2.0","method":"$/progress","params":{"request_id":12,"sequence":3,"event":{"type":"decoration","label":"a\u001bb"}}}"#,
    ] {
        assert_eq!(
            rule_of(&mut decorated, bad),
            Some(Rule::InvalidParams),
            "{bad}"
        );
    }
    ok(
        &mut decorated,
        r#"{"jsonrpc":"2.0","method":"$/progress","params":{"request_id":12,"sequence":4,"event":{"type":"output","stream":"stderr","encoding":"base64","data":"aGk="}}}"#,
    );
}

#[test]
fn confirmation_rules_per_version() {
    let v02 = r#"{"jsonrpc":"2.0","id":"py:1","method":"confirmation/request","params":{"parent_request_id":12,"prompt":"Overwrite?","destructive":true,"default":false}}"#;
    let mut checker = ready_v02(&[]);
    let frame = ok(&mut checker, v02);
    assert!(
        matches!(frame.kind, FrameKind::Request { id: ChildId::Text(ref id), .. } if id == "py:1")
    );
    let no_parent = r#"{"jsonrpc":"2.0","id":"py:2","method":"confirmation/request","params":{"prompt":"Overwrite?"}}"#;
    assert_eq!(rule_of(&mut checker, no_parent), Some(Rule::InvalidParams));
    let mut v01 = FrameChecker::initialized_with(facts_v01(), &[]);
    ok(
        &mut v01,
        r#"{"jsonrpc":"2.0","id":3,"method":"confirmation/request","params":{"prompt":"Overwrite?","destructive":false,"default":false}}"#,
    );
    assert_eq!(
        rule_of(
            &mut v01,
            r#"{"jsonrpc":"2.0","id":4,"method":"confirmation/request","params":{"parent_request_id":12,"prompt":"x"}}"#
        ),
        Some(Rule::InvalidParams)
    );
    let mut undeclared = FrameChecker::initialized_with(
        ManifestFacts {
            confirmations: false,
            ..facts_v02(true)
        },
        &[],
    );
    assert_eq!(rule_of(&mut undeclared, v02), Some(Rule::Undeclared));
}

#[test]
fn input_request_rules() {
    let mut v01 = FrameChecker::initialized_with(facts_v01(), &[]);
    assert_eq!(
        rule_of(
            &mut v01,
            r#"{"jsonrpc":"2.0","id":1,"method":"input/request","params":{"prompt":"Key:"}}"#
        ),
        Some(Rule::NotNegotiated)
    );
    let mut checker = ready_v02(&[]);
    ok(
        &mut checker,
        r#"{"jsonrpc":"2.0","id":"py:1","method":"input/request","params":{"parent_request_id":12,"prompt":"API key:","secret":true}}"#,
    );
    assert_eq!(
        rule_of(
            &mut checker,
            r#"{"jsonrpc":"2.0","id":"py:2","method":"input/request","params":{"parent_request_id":12,"prompt":"   "}}"#
        ),
        Some(Rule::InvalidParams)
    );
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":"py:3","method":"input/request","params":{{"parent_request_id":12,"prompt":"{}"}}}}"#,
        "p".repeat(16 * 1024 + 1)
    );
    assert_eq!(rule_of(&mut checker, &long), Some(Rule::InvalidParams));
}

#[test]
fn child_ids_are_valid_and_never_reused() {
    let mut checker = ready_v02(&[]);
    let request = |id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"confirmation/request","params":{{"parent_request_id":12,"prompt":"ok?"}}}}"#
        )
    };
    ok(&mut checker, &request("\"py:1\""));
    checker.host_settled_child(&ChildId::Text("py:1".into()));
    assert_eq!(
        rule_of(&mut checker, &request("\"py:1\"")),
        Some(Rule::ChildIdReused)
    );
    assert_eq!(
        rule_of(&mut checker, &request("null")),
        Some(Rule::BadChildId)
    );
    assert_eq!(
        rule_of(&mut checker, &request("true")),
        Some(Rule::BadChildId)
    );
    assert_eq!(
        rule_of(&mut checker, &request("-4")),
        Some(Rule::BadChildId)
    );
    let long = format!("\"{}\"", "i".repeat(257));
    assert_eq!(
        rule_of(&mut checker, &request(&long)),
        Some(Rule::BadChildId)
    );
    ok(&mut checker, &request(&format!("\"{}\"", "i".repeat(256))));
}

#[test]
fn at_most_eight_serviced_operations_under_tool_calls() {
    let mut checker = ready_v02(&[]);
    let request = |n: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"py:{n}","method":"confirmation/request","params":{{"parent_request_id":12,"prompt":"ok?"}}}}"#
        )
    };
    for n in 1..=8 {
        ok(&mut checker, &request(n));
    }
    assert_eq!(
        rule_of(&mut checker, &request(9)),
        Some(Rule::TooManyServicedOperations)
    );
}

#[test]
fn at_most_128_outstanding_child_requests() {
    let mut checker = ready_v02(&[]);
    // Unknown child methods are answered -32601 by the host but still count.
    let request = |n: usize| {
        format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"does/not_exist","params":{{}}}}"#)
    };
    for n in 1..=128 {
        ok(&mut checker, &request(n));
    }
    assert_eq!(
        rule_of(&mut checker, &request(129)),
        Some(Rule::TooManyChildRequests)
    );
    // The extension cancelling one of its own requests frees a slot.
    let mut checker = ready_v02(&[]);
    for n in 1..=128 {
        ok(&mut checker, &request(n));
    }
    ok(
        &mut checker,
        r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":5,"reason":"parent_cancelled"}}"#,
    );
    ok(&mut checker, &request(129));
}

#[test]
fn cancel_request_needs_a_valid_id() {
    let mut checker = ready_v02(&[]);
    assert_eq!(
        rule_of(
            &mut checker,
            r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"reason":"x"}}"#
        ),
        Some(Rule::InvalidParams)
    );
    assert_eq!(
        rule_of(
            &mut checker,
            r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":null}}"#
        ),
        Some(Rule::InvalidParams)
    );
}

#[test]
fn message_type_mismatches_are_rejected() {
    let mut checker = ready_v02(&[]);
    assert_eq!(
        rule_of(
            &mut checker,
            r#"{"jsonrpc":"2.0","id":"n1","method":"notification","params":{"message":"x"}}"#
        ),
        Some(Rule::WrongMessageType)
    );
    assert_eq!(
        rule_of(
            &mut checker,
            r#"{"jsonrpc":"2.0","method":"confirmation/request","params":{"parent_request_id":12,"prompt":"x"}}"#
        ),
        Some(Rule::WrongMessageType)
    );
}

#[test]
fn unknown_notifications_and_requests_are_not_fatal() {
    let mut checker = ready_v02(&[]);
    ok(
        &mut checker,
        r#"{"jsonrpc":"2.0","method":"does/not_exist","params":{}}"#,
    );
    ok(
        &mut checker,
        r#"{"jsonrpc":"2.0","id":"py:9","method":"does/not_exist","params":{}}"#,
    );
}
