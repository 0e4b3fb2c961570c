//! turn-tracker (API 0.2): tracks which turns are active from lifecycle
//! events, shows `awake` while any is, and answers `/turns`.
//!
//! A sandboxed variant of a keep-awake extension: the native original starts
//! an operating-system helper while turns run; a wasm guest cannot start
//! processes, so it only keeps the state.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use octet_guest::prelude::*;

/// The active turns, as `(session_id, turn_id)` pairs.
#[derive(Debug, Default)]
struct Turns {
    active: BTreeSet<(String, String)>,
}

impl Turns {
    fn observe(&mut self, event: &LifecycleEvent) {
        let session = event.session_id.clone();
        match (event.kind, &event.turn_id) {
            (LifecycleKind::TurnStarted, Some(turn)) => {
                self.active.insert((session, turn.clone()));
            }
            (LifecycleKind::TurnSettled, Some(turn)) => {
                self.active.remove(&(session, turn.clone()));
            }
            (LifecycleKind::SessionSettled, _) => self.active.retain(|(s, _)| *s != session),
            _ => {}
        }
    }

    fn summary(&self) -> String {
        match self.active.len() {
            0 => "No turn is active.".to_owned(),
            1 => "1 turn active.".to_owned(),
            n => format!("{n} turns active."),
        }
    }
}

fn setup(ext: &mut Extension) {
    let turns = Rc::new(RefCell::new(Turns::default()));

    let state = Rc::clone(&turns);
    ext.on_lifecycle(
        [
            LifecycleKind::SessionSettled,
            LifecycleKind::TurnSettled,
            LifecycleKind::TurnStarted,
        ],
        move |event| state.borrow_mut().observe(event),
    );

    let state = Rc::clone(&turns);
    ext.command(
        Command::new("turns", "Show how many turns are active").usage("/turns"),
        move |args: Vec<String>| {
            if args.is_empty() {
                state.borrow().summary()
            } else {
                "Usage: /turns".to_owned()
            }
        },
    );

    let state = Rc::clone(&turns);
    ext.status("status", move |surface: String| {
        (!state.borrow().active.is_empty()).then(|| {
            StatusItem::new(surface, "awake")
                .style_role("extension.turn_tracker.active")
                .priority(10)
        })
    });

    ext.on_shutdown(move || turns.borrow_mut().active.clear());
}

octet_guest::extension!(setup);

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: LifecycleKind, session: &str, turn: Option<&str>) -> LifecycleEvent {
        LifecycleEvent {
            kind,
            session_id: session.to_owned(),
            run_id: None,
            turn_id: turn.map(str::to_owned),
            tool_call_id: None,
            tool_name: None,
            outcome: None,
            duration_ms: None,
            reason: None,
        }
    }

    #[test]
    fn turns_come_and_go() {
        let mut turns = Turns::default();
        assert_eq!(turns.summary(), "No turn is active.");
        turns.observe(&event(LifecycleKind::TurnStarted, "s1", Some("t1")));
        assert_eq!(turns.summary(), "1 turn active.");
        turns.observe(&event(LifecycleKind::TurnStarted, "s2", Some("t1")));
        assert_eq!(turns.summary(), "2 turns active.");
        turns.observe(&event(LifecycleKind::TurnSettled, "s1", Some("t1")));
        assert_eq!(turns.summary(), "1 turn active.");
        turns.observe(&event(LifecycleKind::SessionSettled, "s2", None));
        assert_eq!(turns.summary(), "No turn is active.");
    }
}
