use super::*;

fn request() -> Arc<RequestState> {
    Arc::new(RequestState::detached())
}

const SMALL: u64 = 100;

fn admit(
    budget: &NoticeBudget,
    method: &'static str,
    request: Option<&Arc<RequestState>>,
    bytes: u64,
    now: Instant,
) -> Decision {
    budget.admit_at(method, request, bytes, now, Charge::Take)
}

fn sent(budget: &NoticeBudget, request: &Arc<RequestState>) -> Sent {
    lock(&budget.state).sent_by(request)
}

#[test]
fn one_request_stops_at_its_count() {
    let mut now = Instant::now();
    let budget = NoticeBudget::new(now);
    let first = request();
    for _ in 0..MAX_NOTICES_PER_REQUEST {
        now += Duration::from_millis(10);
        assert!(admit(&budget, "notification", Some(&first), SMALL, now).send);
    }
    now += Duration::from_secs(1);
    let dropped = admit(&budget, "notification", Some(&first), SMALL, now);
    assert!(!dropped.send);
    assert_eq!(dropped.report.unwrap().bound, Bound::RequestCount);
    assert!(
        admit(&budget, "notification", Some(&request()), SMALL, now).send,
        "another request (even with the same id) has its own count"
    );
}

#[test]
fn one_request_stops_at_its_bytes() {
    let mut now = Instant::now();
    let budget = NoticeBudget::new(now);
    let first = request();
    let frame = NOTICE_BURST_BYTES;
    for _ in 0..MAX_NOTICE_BYTES_PER_REQUEST / frame {
        assert!(admit(&budget, "$/progress", Some(&first), frame, now).send);
        now += Duration::from_secs(5);
    }
    let dropped = admit(&budget, "$/progress", Some(&first), 1, now);
    assert!(!dropped.send, "4 MiB sent: not one byte more");
    assert_eq!(dropped.report.unwrap().bound, Bound::RequestBytes);
    assert_eq!(sent(&budget, &first).bytes, MAX_NOTICE_BYTES_PER_REQUEST);
    assert!(admit(&budget, "$/progress", None, frame, now).send);
}

#[test]
fn the_count_rate_holds_across_requests() {
    let now = Instant::now();
    let budget = NoticeBudget::new(now);
    for _ in 0..NOTICES_PER_SECOND {
        assert!(admit(&budget, "notification", Some(&request()), SMALL, now).send);
    }
    let dropped = admit(&budget, "status/contribution", None, SMALL, now);
    assert!(!dropped.send);
    let report = dropped.report.unwrap();
    assert_eq!(
        (report.bound, report.method),
        (Bound::RateCount, "status/contribution")
    );
    assert!(
        admit(
            &budget,
            "notification",
            None,
            SMALL,
            now + Duration::from_millis(10)
        )
        .send,
        "10 ms at 200/s refill two"
    );
}

/// 1,000 notifications of about 1 MB in one burst: the first fits the
/// burst, then the byte rate lets one through about every 4 s.
#[test]
fn the_byte_rate_holds_a_burst_of_large_frames() {
    let start = Instant::now();
    let budget = NoticeBudget::new(start);
    let one = request();
    let frame = 1_000_100;
    let mut now = start;
    let mut written = 0;
    for _ in 0..1_000 {
        now += Duration::from_millis(2);
        if admit(&budget, "notification", Some(&one), frame, now).send {
            written += frame;
        }
    }
    let elapsed = now.duration_since(start).as_secs_f64();
    assert!(
        written as f64 <= NOTICE_BURST_BYTES as f64 + elapsed * NOTICE_BYTES_PER_SECOND as f64,
        "{written} bytes in {elapsed} s"
    );
    assert_eq!(
        written, frame,
        "2 s at 256 KiB/s refill less than one frame"
    );
    let state = lock(&budget.state);
    assert_eq!(state.total.notices, 999);
    assert_eq!(state.total.bytes, 999 * frame);
    assert_eq!(state.latest.unwrap().0, Bound::RateBytes);
}

#[test]
fn a_drop_takes_nothing_from_any_bucket() {
    let now = Instant::now();
    let budget = NoticeBudget::new(now);
    let one = request();
    // Too large for the byte bucket: it must not cost a count token.
    assert!(!admit(&budget, "notification", None, NOTICE_BURST_BYTES + 1, now).send);
    for _ in 0..NOTICES_PER_SECOND {
        assert!(admit(&budget, "notification", Some(&one), SMALL, now).send);
    }
    for _ in 0..10 {
        assert!(!admit(&budget, "notification", Some(&one), SMALL, now).send);
    }
    let sent = sent(&budget, &one);
    assert_eq!(sent.notices, NOTICES_PER_SECOND as u32);
    assert_eq!(sent.bytes, NOTICES_PER_SECOND * SMALL);
}

/// The first drop is reported at once; later ones inside the interval
/// are held and arm one flush, which reports them all.
#[test]
fn drops_are_reported_at_most_once_per_interval() {
    let start = Instant::now();
    let budget = NoticeBudget::new(start);
    for _ in 0..NOTICES_PER_SECOND {
        admit(&budget, "notification", None, SMALL, start);
    }
    let first = admit(&budget, "notification", None, SMALL, start);
    let report = first.report.expect("the first drop is reported");
    assert_eq!(
        report.dropped,
        Drops {
            notices: 1,
            bytes: SMALL
        }
    );
    assert_eq!(first.flush_at, None);
    let second = admit(&budget, "notification", None, SMALL, start);
    assert_eq!(second.report, None);
    assert_eq!(second.flush_at, Some(start + DROP_REPORT_INTERVAL));
    for _ in 0..5 {
        let held = admit(&budget, "notification", None, 7, start);
        assert_eq!(
            (held.report, held.flush_at),
            (None, None),
            "one flush armed"
        );
    }
    let flushed = budget.flush_at(start + DROP_REPORT_INTERVAL).unwrap();
    assert_eq!(
        flushed.dropped,
        Drops {
            notices: 6,
            bytes: SMALL + 35
        }
    );
    assert_eq!(
        flushed.total,
        Drops {
            notices: 7,
            bytes: 2 * SMALL + 35
        }
    );
    assert_eq!(
        budget.flush_at(start + DROP_REPORT_INTERVAL),
        None,
        "nothing held: nothing to say"
    );
    // After the interval a drop is reported at once again.
    let later = start + DROP_REPORT_INTERVAL * 2;
    for _ in 0..NOTICES_PER_SECOND {
        admit(&budget, "notification", None, SMALL, later);
    }
    let next = admit(&budget, "$/progress", None, SMALL, later);
    assert!(!next.send);
    let report = next.report.unwrap();
    assert_eq!(report.dropped.notices, 1);
    assert_eq!(report.total.notices, 8);
    assert_eq!(report.method, "$/progress");
}

#[test]
fn finished_requests_are_forgotten() {
    let now = Instant::now();
    let budget = NoticeBudget::new(now);
    for second in 0..(TRACKED_REQUESTS as u64 * 3) {
        let later = now + Duration::from_secs(second);
        assert!(admit(&budget, "notification", Some(&request()), SMALL, later).send);
    }
    assert!(lock(&budget.state).per_request.len() <= TRACKED_REQUESTS);
}

/// Screening takes nothing when the floor fits, and drops and counts
/// when even the floor cannot.
#[test]
fn screening_only_looks_unless_it_drops() {
    let now = Instant::now();
    let budget = NoticeBudget::new(now);
    let one = request();
    for _ in 0..3 {
        let looked = budget.admit_at(
            "notification",
            Some(&one),
            NOTICE_BURST_BYTES,
            now,
            Charge::Screen,
        );
        assert!(looked.send);
    }
    assert_eq!(sent(&budget, &one).notices, 0, "nothing taken");
    assert!(admit(&budget, "notification", Some(&one), NOTICE_BURST_BYTES, now).send);
    let screened = budget.admit_at("notification", Some(&one), 1_000, now, Charge::Screen);
    assert!(!screened.send, "the burst is spent");
    let report = screened.report.unwrap();
    assert_eq!(report.bound, Bound::RateBytes);
    assert_eq!(
        report.dropped,
        Drops {
            notices: 1,
            bytes: 1_000
        }
    );
    assert_eq!(sent(&budget, &one).notices, 1);
}
