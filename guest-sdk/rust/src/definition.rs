//! [`Tool`] and [`Command`]: how the model and the user see what the
//! extension offers.

use serde_json::{Value, json};

use crate::bindings::octet::extension::types as wit;

/// A tool definition: name, description and JSON Schemas.
///
/// ```
/// # use octet_guest::Tool;
/// # use serde_json::json;
/// let tool = Tool::new("word_count", "Count words in a file").parameters(json!({
///     "type": "object",
///     "properties": {"path": {"type": "string"}},
///     "required": ["path"],
/// }));
/// ```
#[derive(Debug, Clone)]
pub struct Tool {
    name: String,
    description: String,
    parameters: Value,
    output_schema: Option<Value>,
    prompt_snippet: Option<String>,
    prompt_guidelines: Vec<String>,
}

impl Tool {
    /// A tool whose arguments may be any object (`{"type":"object"}`) until
    /// [`Tool::parameters`] says more. `name` is 1..=64 bytes of
    /// `[A-Za-z_][A-Za-z0-9_.-]*`; the shim checks it.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters: json!({"type": "object"}),
            output_schema: None,
            prompt_snippet: None,
            prompt_guidelines: Vec::new(),
        }
    }

    /// The JSON Schema of the arguments, shown to the model. The SDK does not
    /// validate arguments against it: deserialising into the handler's type
    /// is the check (and the handler may check more).
    pub fn parameters(mut self, schema: Value) -> Self {
        self.parameters = schema;
        self
    }

    /// The JSON Schema of the structured content (API 0.2). Every successful
    /// result must then carry [`ToolResult::structured`](crate::ToolResult::structured)
    /// content matching it; the shim validates.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// A short line the host may put in the system prompt's list of tools
    /// (API 0.4, `tool_prompt_metadata_v1`). At most 1,024 bytes; LF and TAB
    /// are the only control characters allowed (the shim checks both).
    ///
    /// Registering a tool with prompt metadata declares the feature. On a
    /// wire that cannot carry it (an API 0.1 or 0.2 manifest, or a host that
    /// does not offer it) the shim leaves the metadata out, with a warning,
    /// and the tool works as before.
    ///
    /// ```
    /// # use octet_guest::Tool;
    /// let tool = Tool::new("grep", "Search files")
    ///     .prompt_snippet("grep: search the workspace by regular expression")
    ///     .prompt_guideline("Prefer grep over reading whole files");
    /// ```
    pub fn prompt_snippet(mut self, snippet: impl Into<String>) -> Self {
        self.prompt_snippet = Some(snippet.into());
        self
    }

    /// Adds a usage guideline for the model (API 0.4, at most 16 per tool,
    /// each within the bounds of [`Tool::prompt_snippet`]).
    pub fn prompt_guideline(mut self, guideline: impl Into<String>) -> Self {
        self.prompt_guidelines.push(guideline.into());
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the tool carries prompt metadata.
    pub(crate) fn has_prompt_metadata(&self) -> bool {
        self.prompt_snippet.is_some() || !self.prompt_guidelines.is_empty()
    }

    pub(crate) fn to_wit(&self) -> wit::ToolDefinition {
        wit::ToolDefinition {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters: self.parameters.to_string(),
            output_schema: self.output_schema.as_ref().map(Value::to_string),
            prompt_snippet: self.prompt_snippet.clone(),
            prompt_guidelines: self.prompt_guidelines.clone(),
        }
    }
}

/// A slash command definition.
#[derive(Debug, Clone)]
pub struct Command {
    name: String,
    description: String,
    usage: Option<String>,
}

impl Command {
    /// A command named without its leading `/`.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            usage: None,
        }
    }

    /// How to call it, e.g. `/hello [name]`.
    pub fn usage(mut self, usage: impl Into<String>) -> Self {
        self.usage = Some(usage.into());
        self
    }

    /// The command's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn to_wit(&self) -> wit::CommandDefinition {
        wit::CommandDefinition {
            name: self.name.clone(),
            description: self.description.clone(),
            usage: self.usage.clone(),
        }
    }
}

/// A request to render a tool call, as a renderer receives it.
#[derive(Debug, Clone)]
pub struct Render {
    /// The tool's name.
    pub name: String,
    /// The call's arguments (`Value::Null` if the shim sent unreadable JSON).
    pub arguments: Value,
    /// The tool's output; `None` while it has none yet.
    pub output: Option<String>,
    /// Whether the output is an error.
    pub is_error: bool,
}

impl Render {
    pub(crate) fn from_wit(request: wit::RenderRequest) -> Self {
        Self {
            name: request.name,
            arguments: serde_json::from_str(&request.arguments).unwrap_or(Value::Null),
            output: request.output,
            is_error: request.is_error,
        }
    }
}
