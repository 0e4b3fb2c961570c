use super::*;

fn text(t: &str) -> ContentPart {
    ContentPart::Text(t.into())
}

fn result(content: Vec<ContentPart>) -> ToolResult {
    ToolResult {
        content,
        structured_content: None,
        is_error: false,
        metadata: None,
    }
}

const PLAIN: ToolShape<'static> = ToolShape {
    name: "t",
    output_schema: None,
    artifacts: false,
};

#[test]
fn legacy_and_typed_shapes() {
    assert_eq!(
        tool_result(ApiVersion::V0_1, &PLAIN, result(vec![text("Hello, Ada!")]))
            .unwrap()
            .to_string(),
        r#"{"content":"Hello, Ada!","is_error":false,"metadata":{}}"#
    );
    assert_eq!(
        tool_result(ApiVersion::V0_2, &PLAIN, result(vec![text("hi")]))
            .unwrap()
            .to_string(),
        r#"{"content":[{"type":"text","text":"hi"}],"is_error":false,"metadata":{}}"#
    );
}

#[test]
fn part_bounds_are_named() {
    let at_limit = result((0..MAX_PARTS).map(|_| text("x")).collect());
    assert!(tool_result(ApiVersion::V0_2, &PLAIN, at_limit).is_ok());
    let over = result((0..=MAX_PARTS).map(|_| text("x")).collect());
    assert!(
        tool_result(ApiVersion::V0_2, &PLAIN, over)
            .unwrap_err()
            .0
            .contains("limit is 256")
    );
    let err = tool_result(ApiVersion::V0_2, &PLAIN, result(vec![]))
        .unwrap_err()
        .0;
    assert!(err.contains("content is empty"), "{err}");
    let image = ContentPart::Image(ImagePart {
        artifact_id: "a".into(),
        mime_type: "image/png".into(),
        alt: None,
    });
    let err = tool_result(ApiVersion::V0_2, &PLAIN, result(vec![image]))
        .unwrap_err()
        .0;
    assert!(err.contains("has no text part"), "{err}");
}

#[test]
fn structured_content_follows_the_schema() {
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let validator = jsonschema::validator_for(&schema).unwrap();
    let shape = ToolShape {
        name: "t",
        output_schema: Some(&validator),
        artifacts: false,
    };
    let mut good = result(vec![text("x")]);
    good.structured_content = Some(r#"{"n":1}"#.into());
    assert!(
        tool_result(ApiVersion::V0_2, &shape, good).unwrap()["structured_content"]
            == json!({"n": 1})
    );
    let mut bad = result(vec![text("x")]);
    bad.structured_content = Some(r#"{"n":"one"}"#.into());
    let err = tool_result(ApiVersion::V0_2, &shape, bad).unwrap_err().0;
    assert!(err.contains("does not match the output_schema"), "{err}");
    let err = tool_result(ApiVersion::V0_2, &shape, result(vec![text("x")]))
        .unwrap_err()
        .0;
    assert!(err.contains("returned no structured_content"), "{err}");
    let mut stray = result(vec![text("x")]);
    stray.structured_content = Some("{}".into());
    let err = tool_result(ApiVersion::V0_2, &PLAIN, stray).unwrap_err().0;
    assert!(err.contains("declares no output_schema"), "{err}");
}

#[test]
fn segments_are_checked() {
    let seg = |t: &str| Segment {
        text: t.into(),
        style_role: None,
    };
    assert_eq!(
        segments(&[seg("a\tb\n")]).unwrap().to_string(),
        r#"{"segments":[{"text":"a\tb\n","style_role":null}]}"#
    );
    let err = segments(&[seg("\u{1b}[31m")]).unwrap_err().0;
    assert!(err.contains("contains a control character"), "{err}");
    let err = segments(&vec![seg("x"); MAX_SEGMENTS + 1]).unwrap_err().0;
    assert!(err.contains("the limit is 128"), "{err}");
}

#[test]
fn notifications_in_the_sdks_shapes() {
    let titled = Notification {
        level: NotifyLevel::Success,
        title: Some("t".into()),
        message: "m".into(),
    };
    let plain = Notification {
        level: NotifyLevel::Info,
        title: None,
        message: "m".into(),
    };
    // A `notification` frame: level, message, then a title if any.
    assert_eq!(
        notification(&titled).to_string(),
        r#"{"level":"success","message":"m","title":"t"}"#
    );
    assert_eq!(
        notification(&plain).to_string(),
        r#"{"level":"info","message":"m"}"#
    );
    // Inside a command result the title is kept, null included.
    let result = CommandResult {
        text: "x".into(),
        notifications: vec![plain, titled],
        context: vec![],
    };
    assert_eq!(
        command_result(&result).to_string(),
        r#"{"text":"x","notifications":[{"level":"info","title":null,"message":"m"},{"level":"success","title":"t","message":"m"}],"context":[]}"#
    );
}

fn nested(levels: usize) -> String {
    format!("{}0{}", "{\"n\":".repeat(levels), "}".repeat(levels))
}

/// Guest JSON with no protocol bound of its own is held to the
/// guest-wide 64 levels before it is parsed (the e2e `hostile_json`
/// covers the places with their own bounds).
#[test]
fn guest_json_in_results_is_depth_bounded() {
    assert!(menu(&nested(64)).is_ok());
    assert!(
        menu(&nested(65))
            .unwrap_err()
            .0
            .starts_with("the menu is nested deeper than 64 levels")
    );
    assert!(error_data(&nested(64)).is_ok());
    assert!(
        error_data(&nested(200))
            .unwrap_err()
            .0
            .starts_with("the error data is nested deeper than 64 levels")
    );
    assert!(
        error_data("{\"n\":1e400}")
            .unwrap_err()
            .0
            .contains("not valid JSON")
    );
}

#[test]
fn guest_errors_read_as_sentences() {
    assert_eq!(
        guest_error_text(&GuestError::Failed("disk full".into())),
        "disk full"
    );
    assert_eq!(
        guest_error_text(&GuestError::InvalidParams("no name".into())),
        "invalid parameters: no name"
    );
    let rpc = GuestError::Rpc(GuestRpcError {
        code: -32000,
        message: "busy".into(),
        data: Some("{}".into()),
    });
    assert_eq!(guest_error_text(&rpc), "error -32000: busy");
}

#[test]
fn hook_extras_only_for_their_hook() {
    let result = HookResult {
        disposition: Disposition::Deny("no".into()),
        provider_retry: Some(RetryDecision::Stop),
        ..HookResult::default()
    };
    assert_eq!(
        hook_result("before_tool_call", result.clone())
            .unwrap()
            .to_string(),
        r#"{"disposition":{"action":"deny","reason":"no"},"context":[],"notifications":[]}"#
    );
    assert_eq!(
        hook_result("provider_retry", result).unwrap()["provider_retry"],
        json!("stop")
    );
}
