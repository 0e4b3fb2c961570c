//! Constructors for the small protocol values handlers build: notifications,
//! context items, status lines, render segments, command results,
//! confirmations and progress reports.
//!
//! These are the WIT records themselves (so nothing is converted twice) with
//! builder methods that fill in the protocol's defaults.

use crate::bindings::octet::extension::types as wit;

pub use wit::{
    CommandResult, Confirmation, ContextItem, LifecycleEvent, LifecycleKind, Notification,
    NotifyLevel, OutputStream, Placement, ProgressDecoration, ProgressEvent, ProgressOutput,
    ProgressStatus, Segment, StatusItem,
};

impl Notification {
    /// A notification of any level, without a title.
    pub fn new(level: NotifyLevel, message: impl Into<String>) -> Self {
        Self {
            level,
            title: None,
            message: message.into(),
        }
    }

    /// An `info` notification.
    pub fn info(message: impl Into<String>) -> Self {
        Self::new(NotifyLevel::Info, message)
    }

    /// A `success` notification.
    pub fn success(message: impl Into<String>) -> Self {
        Self::new(NotifyLevel::Success, message)
    }

    /// A `warning` notification.
    pub fn warning(message: impl Into<String>) -> Self {
        Self::new(NotifyLevel::Warning, message)
    }

    /// An `error` notification.
    pub fn error(message: impl Into<String>) -> Self {
        Self::new(NotifyLevel::Error, message)
    }

    /// Adds a title shown above the message.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

impl ContextItem {
    /// Context placed at the protocol's default, the end of the prompt
    /// (`prompt_suffix`).
    pub fn new(label: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            content: content.into(),
            placement: Placement::PromptSuffix,
        }
    }

    /// Moves the item elsewhere in the model's prompt.
    pub fn placement(mut self, placement: Placement) -> Self {
        self.placement = placement;
        self
    }
}

impl StatusItem {
    /// A status line for `surface` (`status`, `header` or `footer`) with no
    /// style and priority 0.
    pub fn new(surface: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            surface: surface.into(),
            text: text.into(),
            style_role: None,
            priority: 0,
        }
    }

    /// The frontend's style role, e.g. `extension.<name>.status`.
    pub fn style_role(mut self, role: impl Into<String>) -> Self {
        self.style_role = Some(role.into());
        self
    }

    /// Higher priorities are kept first when a surface is crowded.
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }
}

impl Segment {
    /// An unstyled piece of a tool rendering.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            style_role: None,
        }
    }

    /// Styles the segment with a frontend style role.
    pub fn style_role(mut self, role: impl Into<String>) -> Self {
        self.style_role = Some(role.into());
        self
    }
}

impl CommandResult {
    /// A command result showing `text` to the user.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            notifications: Vec::new(),
            context: Vec::new(),
        }
    }

    /// Adds a notification shown with the result.
    pub fn notify(mut self, notification: Notification) -> Self {
        self.notifications.push(notification);
        self
    }

    /// Adds context for the model's next prompt.
    pub fn context(mut self, item: ContextItem) -> Self {
        self.context.push(item);
        self
    }
}

impl Confirmation {
    /// A yes/no question whose default answer is "no" and which is not
    /// marked destructive.
    pub fn new(prompt: impl Into<String>) -> Self {
        Self {
            prompt: prompt.into(),
            detail: None,
            destructive: false,
            default: false,
        }
    }

    /// Longer text shown below the question.
    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Marks the action as destructive so the frontend can warn.
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.destructive = destructive;
        self
    }

    /// The answer preselected in the frontend.
    pub fn default_answer(mut self, answer: bool) -> Self {
        self.default = answer;
        self
    }
}

impl From<&str> for Confirmation {
    fn from(prompt: &str) -> Self {
        Self::new(prompt)
    }
}

impl From<String> for Confirmation {
    fn from(prompt: String) -> Self {
        Self::new(prompt)
    }
}

impl ProgressStatus {
    /// A progress message without counts.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            current: None,
            total: None,
            unit: None,
        }
    }

    /// How far along the work is, shown as `current/total`.
    pub fn step(mut self, current: u64, total: u64) -> Self {
        self.current = Some(current);
        self.total = Some(total);
        self
    }

    /// The unit of the counts (`files`, `bytes`...).
    pub fn unit(mut self, unit: impl Into<String>) -> Self {
        self.unit = Some(unit.into());
        self
    }
}

impl From<ProgressStatus> for ProgressEvent {
    fn from(status: ProgressStatus) -> Self {
        ProgressEvent::Status(status)
    }
}

impl From<&str> for ProgressEvent {
    fn from(message: &str) -> Self {
        ProgressEvent::Status(ProgressStatus::new(message))
    }
}

impl From<String> for ProgressEvent {
    fn from(message: String) -> Self {
        ProgressEvent::Status(ProgressStatus::new(message))
    }
}

impl LifecycleKind {
    /// All six lifecycle observations, for a handler that wants every one.
    pub const ALL: [LifecycleKind; 6] = [
        LifecycleKind::SessionStarted,
        LifecycleKind::SessionSettled,
        LifecycleKind::TurnStarted,
        LifecycleKind::TurnSettled,
        LifecycleKind::ToolStarted,
        LifecycleKind::ToolSettled,
    ];

    /// The protocol's method name, e.g. `turn/settled`.
    pub fn method(self) -> &'static str {
        match self {
            LifecycleKind::SessionStarted => "session/started",
            LifecycleKind::SessionSettled => "session/settled",
            LifecycleKind::TurnStarted => "turn/started",
            LifecycleKind::TurnSettled => "turn/settled",
            LifecycleKind::ToolStarted => "tool/started",
            LifecycleKind::ToolSettled => "tool/settled",
        }
    }
}
