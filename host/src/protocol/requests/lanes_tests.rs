use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn a_tool_past_its_deadline_gets_an_error_result_naming_the_deadline() {
    let answer = deadline_answer(ApiVersion::V0_2, Kind::Tool, Duration::from_millis(1500))
        .expect("a tool call is answered with a result");
    assert_eq!(answer["is_error"], json!(true));
    let text = answer["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("deadline of 1500 ms"), "{text}");
}

#[test]
fn other_requests_past_their_deadline_get_an_error_naming_the_policy_key() {
    let error = deadline_answer(ApiVersion::V0_2, Kind::Command, Duration::from_millis(250))
        .expect_err("a command is answered with an error");
    assert_eq!(error.code, crate::wire::message::code::SERVER_ERROR);
    assert_eq!(error.message, "request deadline exceeded");
    let data = error.data.expect("the error says which deadline");
    assert_eq!(data["deadline_ms"], json!(250));
    assert_eq!(data["raise_with"], json!(Deadlines::flag(Kind::Command)));
}

#[test]
fn the_blocking_pool_never_runs_more_than_its_cap() {
    let mut builder = tokio::runtime::Builder::new_current_thread();
    cap_blocking_threads(&mut builder, "test", 0);
    let runtime = builder.enable_all().build().unwrap();
    let running = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    runtime.block_on(async {
        let calls: Vec<_> = (0..3 * MAX_BLOCKING_THREADS)
            .map(|_| {
                let (running, most) = (running.clone(), most.clone());
                tokio::task::spawn_blocking(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    running.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for call in calls {
            call.await.unwrap();
        }
    });
    let most = most.load(Ordering::SeqCst);
    assert!(
        most <= MAX_BLOCKING_THREADS,
        "{most} blocking calls at once"
    );
    assert!(most > 1, "the pool ran the calls one at a time");
}
