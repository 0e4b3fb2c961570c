//! One finding of `check`: what is wrong, where, and the fix.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Problem,
    Warning,
    Note,
}

/// One finding, naming the file, the field and the fix.
#[derive(Debug, Clone)]
pub struct Finding {
    pub severity: Severity,
    pub file: PathBuf,
    pub field: String,
    pub message: String,
    pub fix: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self.severity {
            Severity::Problem => "problem",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        write!(
            f,
            "{label}: {}: {}: {}\n  fix: {}",
            self.file.display(),
            self.field,
            self.message,
            self.fix
        )
    }
}
