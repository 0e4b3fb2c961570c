/*
 * octet.h: octet extensions in C, run sandboxed by octet-wasm.
 *
 * An extension is one function you write, octet_setup(), that registers
 * handlers by function pointer:
 *
 *     #include "octet.h"
 *
 *     static int hello(const char *args, octet_tool_result *res, const octet_call *cx)
 *     {
 *         const char *name = octet_arg_string(args, "name");
 *         if (name == NULL) return octet_invalid_params("name must be a string");
 *         return octet_tool_text(res, "Hello, %s!", name);
 *     }
 *
 *     void octet_setup(octet_ext *ext) { octet_tool(ext, "hello", "Greet someone", NULL, hello); }
 *
 * The sources in src/ implement every export of the WIT world `extension`
 * (octet:extension@0.2.0) and dispatch to the registered handlers, on C
 * bindings that the build generates from wit/ with the pinned wit-bindgen
 * (so they always match it). Names follow the Rust SDK's
 * (guest-sdk/VOCABULARY.md): a Rust `agents::spawn` is octet_agents_spawn.
 * Build: see README.md.
 *
 * Conventions
 * - Strings are UTF-8 and NUL-terminated. Everything a handler receives is
 *   borrowed for the duration of the call (copy what you keep). Everything
 *   the SDK hands you to keep (char ** out-parameters) is malloc'd: free() it.
 * - Functions taking a `fmt` are printf-style.
 * - Handlers return OCTET_OK (0) or an error. The error helpers
 *   (octet_invalid_params, octet_failed, octet_cancelled, octet_rpc_error)
 *   record the error and return OCTET_ERROR, so `return octet_failed(...)`.
 *   Host calls that fail record the host's error the same way and return
 *   OCTET_ERROR, so `if (octet_notify(...)) return OCTET_ERROR;` propagates
 *   it unchanged. A handler returning non-zero with no recorded error fails
 *   with "handler failed".
 * - Registration copies its strings; registering a name twice aborts (a
 *   trap: the shim reports it).
 * - The instance serves one request at a time: plain static variables are
 *   the extension's state. They last as long as the instance (across
 *   requests, not across a trap, and not shared between the instances of a
 *   pool when octet_max_concurrency() is above 1).
 */
#ifndef OCTET_H
#define OCTET_H

/* The C SDK's version (semver; README "Versions and compatibility"), also
 * in octet-guest.pc for pkg-config. */
#define OCTET_SDK_VERSION "0.2.0"
#define OCTET_SDK_VERSION_MAJOR 0
#define OCTET_SDK_VERSION_MINOR 2
#define OCTET_SDK_VERSION_PATCH 0

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define OCTET_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define OCTET_PRINTF(f, a)
#endif

/* ------------------------------------------------------------------ */
/* Results and errors                                                   */
/* ------------------------------------------------------------------ */

#define OCTET_OK 0
#define OCTET_ERROR (-1)

/* The arguments or parameters were not acceptable: answered -32602. */
int octet_invalid_params(const char *fmt, ...) OCTET_PRINTF(1, 2);
/* The handler failed. A tool call becomes a result with is_error: true
 * carrying the text (what the model reads); any other request is answered
 * -32603. */
int octet_failed(const char *fmt, ...) OCTET_PRINTF(1, 2);
/* The handler stopped because its request was cancelled: -32800. */
int octet_cancelled(void);
/* An explicit JSON-RPC error; data_json is NULL or any JSON text. The shim
 * passes -32602, -32601, -32603, -32800 and -32099..=-32000 through and
 * turns any other code into -32603. */
int octet_rpc_error(int32_t code, const char *data_json, const char *fmt, ...)
    OCTET_PRINTF(3, 4);

/* The recorded error, if any: its message ("" for cancelled), and whether it
 * is a cancellation. octet_error_clear() forgets it (to recover from a
 * failed host call instead of propagating it). */
bool octet_has_error(void);
const char *octet_error_message(void);
bool octet_error_is_cancelled(void);
void octet_error_clear(void);

/* ------------------------------------------------------------------ */
/* The call context                                                     */
/* ------------------------------------------------------------------ */

/* Where a host request comes from; borrowed for the call. Optional members
 * are NULL when absent. Key per-session state by session_id,
 * extension_instance_id and process_generation together. */
typedef struct octet_call {
    uint64_t request_id;
    const char *workspace;          /* the host's path of the workspace */
    const char *execution_scope;    /* or NULL */
    const char *session_id;         /* resource owner (API 0.2), or NULL */
    const char *extension_instance_id; /* or NULL */
    uint64_t process_generation;    /* 0 without a resource owner */
    const char *host_json;          /* ExtensionHostState as JSON */
} octet_call;

/* ------------------------------------------------------------------ */
/* Handlers and what they fill in                                       */
/* ------------------------------------------------------------------ */

typedef enum octet_notify_level {
    OCTET_INFO,
    OCTET_SUCCESS,
    OCTET_WARNING,
    OCTET_ERROR_LEVEL,
} octet_notify_level;

typedef enum octet_placement {
    OCTET_SYSTEM_PREFIX,
    OCTET_SYSTEM_SUFFIX,
    OCTET_PROMPT_PREFIX,
    OCTET_PROMPT_SUFFIX,
} octet_placement;

/* Opaque builders, valid only during the handler that receives them. */
typedef struct octet_tool_result octet_tool_result;
typedef struct octet_command_result octet_command_result;
typedef struct octet_hook_result octet_hook_result;
typedef struct octet_context_list octet_context_list;
typedef struct octet_status_item octet_status_item;
typedef struct octet_segments octet_segments;
typedef struct octet_menu_out octet_menu_out;

/* tool/call: args_json is the arguments object as JSON text (read it with
 * octet_arg_* or the octet_json_* functions). Add at least one text part. */
typedef int (*octet_tool_fn)(const char *args_json, octet_tool_result *res,
                             const octet_call *cx);
/* Appends a text part; returns OCTET_OK, so a handler may end with
 * `return octet_tool_text(res, ...);`. */
int octet_tool_text(octet_tool_result *res, const char *fmt, ...) OCTET_PRINTF(2, 3);
void octet_tool_image(octet_tool_result *res, const char *artifact_id,
                      const char *mime_type, const char *alt /* or NULL */);
void octet_tool_audio(octet_tool_result *res, const char *artifact_id,
                      const char *mime_type, const char *transcript /* or NULL */);
/* Structured content (required when the tool has an output schema). */
void octet_tool_structured(octet_tool_result *res, const char *json);
/* JSON kept by the host, never shown to the model (API 0.2). */
void octet_tool_metadata(octet_tool_result *res, const char *json);
/* Marks the result as an error the model reads (like octet_failed, but
 * with every part you added). */
void octet_tool_set_error(octet_tool_result *res, bool is_error);

/* command/execute: argv[0..argc) are the arguments (the name has no '/'). */
typedef int (*octet_command_fn)(size_t argc, const char *const *argv,
                                octet_command_result *res, const octet_call *cx);
/* Appends to the command's text. */
void octet_command_text(octet_command_result *res, const char *fmt, ...) OCTET_PRINTF(2, 3);
void octet_command_notify(octet_command_result *res, octet_notify_level level,
                          const char *title /* or NULL */, const char *message);
void octet_command_context(octet_command_result *res, const char *label,
                           const char *content, octet_placement placement);

/* hook/run: payload_json is the hook's JSON object. The result starts as
 * "continue" with no context and no notifications. */
typedef int (*octet_hook_fn)(const char *payload_json, octet_hook_result *res,
                             const octet_call *cx);
/* Honoured only for before_prompt and before_tool_call. */
void octet_hook_deny(octet_hook_result *res, const char *reason);
void octet_hook_context(octet_hook_result *res, const char *label,
                        const char *content, octet_placement placement);
void octet_hook_notify(octet_hook_result *res, octet_notify_level level,
                       const char *title /* or NULL */, const char *message);
/* provider_retry advice. */
void octet_hook_retry(octet_hook_result *res);
void octet_hook_stop(octet_hook_result *res);
void octet_hook_retry_delay(octet_hook_result *res, uint64_t delay_ms);
/* before_persistence metadata. */
void octet_hook_persistence(octet_hook_result *res, const char *value_json, bool public_);
/* post_mutation advice: ids NULL / count 0 means "no rescan". */
void octet_hook_rescan(octet_hook_result *res, const char *const *ids, size_t count);
/* The results of the API 0.4 hooks (docs/api-0.4.md#v04-hook-results),
 * each sent only for its own hook; the shim checks every bound (32 frames
 * of 512 KiB, a payload of 768 KiB, 256 headers and 64 KiB, header names
 * and values) before anything reaches octet. They need a build for an API
 * 0.4 manifest: in a 0.2.0 build they print why on stderr and abort. */
typedef enum octet_cache_warming {
    OCTET_CACHE_WARM,
    OCTET_CACHE_STOP,
} octet_cache_warming;
/* cache_warming_decision advice (unset: no opinion, the host keeps its). */
void octet_hook_cache_warming(octet_hook_result *res, octet_cache_warming action);
/* compaction_strategy: adds a PNG image of the text to compact (copied). */
void octet_hook_compaction_frame(octet_hook_result *res, const void *png, size_t len);
/* before_provider_request: the payload to send instead (a JSON object or
 * array as text). */
void octet_hook_provider_payload(octet_hook_result *res, const char *payload_json);
/* before_provider_headers: set a header to one or several values, or
 * remove it. */
void octet_hook_set_header(octet_hook_result *res, const char *name, const char *value);
void octet_hook_set_header_values(octet_hook_result *res, const char *name,
                                  const char *const *values, size_t count);
void octet_hook_remove_header(octet_hook_result *res, const char *name);

/* context/collect: prompt is NULL when the host sent none. */
typedef int (*octet_context_fn)(const char *prompt, octet_context_list *out,
                                const octet_call *cx);
void octet_context_add(octet_context_list *out, const char *label, const char *content,
                       octet_placement placement);

/* status/collect for a registered surface. Leave the item untouched to show
 * nothing (null); octet_status_show() sets it, for the requested surface. */
typedef int (*octet_status_fn)(const char *surface, octet_status_item *out,
                               const octet_call *cx);
void octet_status_show(octet_status_item *out, const char *text,
                       const char *style_role /* or NULL */, int32_t priority);
/* Overrides the surface the item is for (default: the requested one). */
void octet_status_surface(octet_status_item *out, const char *surface);

/* tool/render for a registered tool. */
typedef struct octet_render {
    const char *name;
    const char *arguments_json;
    const char *output; /* NULL while the tool has no output yet */
    bool is_error;
} octet_render;
typedef int (*octet_render_fn)(const octet_render *req, octet_segments *out,
                               const octet_call *cx);
void octet_segment(octet_segments *out, const char *style_role /* or NULL */,
                   const char *fmt, ...) OCTET_PRINTF(3, 4);

/* menu/collect: set the complete menu as JSON, or leave it unset to let the
 * host generate one entry per command. */
typedef int (*octet_menu_fn)(octet_menu_out *out, const octet_call *cx);
void octet_menu_set(octet_menu_out *out, const char *json);

/* Lifecycle kinds, as bits so one handler can take several. */
typedef enum octet_lifecycle_kind {
    OCTET_SESSION_STARTED = 1 << 0,
    OCTET_SESSION_SETTLED = 1 << 1,
    OCTET_TURN_STARTED = 1 << 2,
    OCTET_TURN_SETTLED = 1 << 3,
    OCTET_TOOL_STARTED = 1 << 4,
    OCTET_TOOL_SETTLED = 1 << 5,
} octet_lifecycle_kind;

/* One lifecycle observation; fields a kind does not carry are NULL. */
typedef struct octet_lifecycle_event {
    octet_lifecycle_kind kind; /* exactly one bit */
    const char *session_id;
    const char *run_id;
    const char *turn_id;
    const char *tool_call_id;
    const char *tool_name;
    const char *outcome;
    bool has_duration;
    uint64_t duration_ms;
    const char *reason;
} octet_lifecycle_event;
/* Lifecycle events are never answered: a non-zero return is logged. */
typedef int (*octet_lifecycle_fn)(const octet_lifecycle_event *event);

/* init (after the first describe, before the first request) and graceful
 * shutdown. */
typedef int (*octet_void_fn)(void);

/* ------------------------------------------------------------------ */
/* Registration (call from octet_setup)                                 */
/* ------------------------------------------------------------------ */

typedef struct octet_ext octet_ext;

/* Written by the extension's author; runs once per instance. */
void octet_setup(octet_ext *ext);

/* The extension's name (normally the manifest's name). Default "extension". */
void octet_name(octet_ext *ext, const char *name);
/* parameters_json: the JSON Schema of the arguments, shown to the model
 * verbatim; NULL means {"type":"object"}. The SDK does not validate
 * arguments against it: the handler does. */
void octet_tool(octet_ext *ext, const char *name, const char *description,
                const char *parameters_json, octet_tool_fn fn);
/* The JSON Schema of a registered tool's structured content (API 0.2); for
 * initial and dynamic tools alike. */
void octet_tool_output_schema(octet_ext *ext, const char *tool, const char *schema_json);
/* Tool prompt metadata (API 0.4, tool_prompt_metadata_v1), for initial and
 * dynamic tools alike: a line the host may show in the system prompt's
 * list of tools (NULL removes it), and usage guidelines for the model
 * (each call adds one; at most OCTET_PROMPT_GUIDELINES_MAX). Each text is
 * at most OCTET_PROMPT_TEXT_MAX bytes of UTF-8, with LF and TAB the only
 * control characters. A tool with metadata declares the feature. Needs a
 * build for an API 0.4 manifest (bindings of octet:extension@0.4.0); out of
 * bounds, or in a 0.2.0 build, the SDK prints why on stderr and aborts at
 * the first describe, as for a duplicate registration. On a wire that
 * cannot carry the metadata (a 0.1 or 0.2 manifest, a host that does not
 * offer the feature) the shim leaves it out, with a warning. */
#define OCTET_PROMPT_TEXT_MAX 1024
#define OCTET_PROMPT_GUIDELINES_MAX 16
void octet_tool_prompt_snippet(octet_ext *ext, const char *tool, const char *snippet);
void octet_tool_prompt_guideline(octet_ext *ext, const char *tool, const char *guideline);
/* A tool that is not in the initial catalog: its handler serves calls once
 * octet_tools_catalog_register_dynamic() adds it at run time (API 0.2,
 * declare octet_uses_dynamic_tools()). */
void octet_dynamic_tool(octet_ext *ext, const char *name, const char *description,
                        const char *parameters_json, octet_tool_fn fn);
void octet_command(octet_ext *ext, const char *name, const char *description,
                   const char *usage /* or NULL */, octet_command_fn fn);
void octet_hook(octet_ext *ext, const char *hook, octet_hook_fn fn);
void octet_context(octet_ext *ext, octet_context_fn fn);
void octet_status(octet_ext *ext, const char *surface, octet_status_fn fn);
void octet_renderer(octet_ext *ext, const char *tool, octet_render_fn fn);
void octet_menu(octet_ext *ext, octet_menu_fn fn);
/* kinds: OR of octet_lifecycle_kind. Adds the lifecycle_events feature. */
void octet_on_lifecycle(octet_ext *ext, unsigned kinds, octet_lifecycle_fn fn);
void octet_on_init(octet_ext *ext, octet_void_fn fn);
void octet_on_shutdown(octet_ext *ext, octet_void_fn fn);
/* How many requests may run at once (default 1; above 1 the shim runs a
 * pool of instances, each with its own memory and statics). */
void octet_max_concurrency(octet_ext *ext, uint32_t n);
/* Declares an optional API 0.2 feature the extension uses (for example
 * "request_progress"). request_cancellation and content_parts are always
 * spoken; lifecycle_events is added by octet_on_lifecycle. */
void octet_uses_feature(octet_ext *ext, const char *feature);
/* The features the services below need, by name (as in the Rust SDK). */
void octet_uses_progress(octet_ext *ext);            /* request_progress */
void octet_uses_progress_decoration(octet_ext *ext); /* + progress_decoration */
void octet_uses_artifacts(octet_ext *ext);           /* artifacts */
void octet_uses_dynamic_tools(octet_ext *ext);       /* dynamic_tools */
void octet_uses_secrets(octet_ext *ext);             /* secrets */
void octet_uses_policy(octet_ext *ext);              /* policy_intents */
void octet_uses_approvals(octet_ext *ext);           /* + approvals */
void octet_uses_agents(octet_ext *ext);              /* agent_sessions */
void octet_uses_agent_model_selection(octet_ext *ext); /* + agent_model_selection_v1 */

/* ------------------------------------------------------------------ */
/* Host services (from a handler)                                       */
/* ------------------------------------------------------------------ */

/* Each returns OCTET_OK, or OCTET_ERROR with the host's error recorded. */
int octet_notify(octet_notify_level level, const char *fmt, ...) OCTET_PRINTF(2, 3);
int octet_notify_titled(octet_notify_level level, const char *title, const char *fmt, ...)
    OCTET_PRINTF(3, 4);
/* Asks the user yes/no; *answer is false when the frontend cannot ask. */
int octet_confirm(const char *prompt, const char *detail /* or NULL */, bool destructive,
                  bool default_answer, bool *answer);
/* Asks for text; *answer is malloc'd (free it), or NULL when cancelled,
 * unavailable or headless. Never log or return secret answers. */
int octet_request_input(const char *prompt, bool secret, char **answer);
/* Progress (needs octet_uses_feature(ext, "request_progress")). */
int octet_progress(const char *fmt, ...) OCTET_PRINTF(1, 2);
int octet_progress_step(uint64_t current, uint64_t total, const char *unit /* or NULL */,
                        const char *fmt, ...) OCTET_PRINTF(4, 5);
typedef enum octet_output_stream {
    OCTET_STDOUT,
    OCTET_STDERR,
} octet_output_stream;
/* Streams output for the current request (bytes; valid UTF-8 travels as
 * text). */
int octet_progress_output(octet_output_stream stream, const void *data, size_t len);
/* Needs "progress_decoration" too. */
int octet_progress_decoration(const char *label, const char *detail /* or NULL */);
int octet_contribute_context(const char *label, const char *content, octet_placement placement);
int octet_contribute_status(const char *surface, const char *text,
                            const char *style_role /* or NULL */, int32_t priority);

typedef enum octet_log_level {
    OCTET_LOG_DEBUG,
    OCTET_LOG_INFO,
    OCTET_LOG_WARNING,
    OCTET_LOG_ERROR,
} octet_log_level;
/* A structured record on the shim's stderr (never the protocol stream). */
void octet_log(octet_log_level level, const char *fmt, ...) OCTET_PRINTF(2, 3);
/* Same, with fields_json (a JSON object, or NULL) merged into the record. */
void octet_log_fields(octet_log_level level, const char *fields_json, const char *fmt, ...)
    OCTET_PRINTF(3, 4);

/* Cancellation of the request being served. */
bool octet_is_cancelled(void);
/* The reason (user, timeout, shutdown, ...), malloc'd, or NULL. */
char *octet_cancellation_reason(void);
/* Waits up to ms milliseconds; true as soon as the request is cancelled,
 * false when the time ran out. */
bool octet_sleep(uint64_t ms);
/* C SDK 0.1's name of octet_sleep: deprecated since 0.2.0, goes in 1.0. */
__attribute__((deprecated("octet_sleep_ms is deprecated since C SDK 0.2.0 and goes in 1.0: use octet_sleep")))
static inline bool octet_sleep_ms(uint64_t ms) { return octet_sleep(ms); }
/* OCTET_ERROR with a cancellation recorded once the request is cancelled,
 * for loops: `if (octet_check_cancelled()) return OCTET_ERROR;`. */
int octet_check_cancelled(void);

/* What init told the instance (valid after init; "" / false before). */
const char *octet_api_version(void);     /* "0.1" or "0.2" */
bool octet_has_feature(const char *feature);
const char *octet_guest_workspace(void); /* the workspace as the guest sees it */
const char *octet_initialize_params(void); /* the host's initialize params, JSON */

/* ------------------------------------------------------------------ */
/* API 0.2 services (from a tool call or a command unless noted)        */
/* ------------------------------------------------------------------ */

/* Each returns OCTET_OK, or OCTET_ERROR with the shim's or the host's error
 * recorded (the shim checks every bound before anything reaches the host;
 * a refusal names the bound). Out-parameters are malloc'd: free() them. */

/* Artifacts (octet_uses_artifacts): publishes data as mime_type (one of
 * image/png, image/jpeg, image/gif, image/webp, audio/wav, audio/mpeg,
 * audio/flac, audio/opus, audio/aac, audio/mp4, and the bytes must start
 * with its signature; at most 20 MiB, 64 artifacts and 64 MiB per process
 * generation). *artifact_id is the id for octet_tool_image/_audio. */
int octet_artifacts_publish(const char *mime_type, const void *data, size_t len,
                            char **artifact_id);

/* The dynamic tool catalog (octet_uses_dynamic_tools; from any handler).
 * The revision and every active tool name of the extension, sorted. */
typedef struct octet_catalog_update {
    uint64_t revision;
    size_t n_tools;
    char **tools;
} octet_catalog_update;
void octet_catalog_update_free(octet_catalog_update *update);
/* Adds the tools registered with octet_dynamic_tool() named in
 * names[0..count) (1..=256), with their definitions. A name with no such
 * registration fails with invalid params and nothing is sent. out may be
 * NULL. */
int octet_tools_catalog_register_dynamic(const char *const *names, size_t count,
                                         octet_catalog_update *out);
/* Removes 1..=256 tools by name (names not in the catalog are ignored). */
int octet_tools_catalog_unregister(const char *const *names, size_t count,
                                   octet_catalog_update *out);
/* The committed catalog. */
void octet_tools_catalog_current(octet_catalog_update *out);

/* Secrets (octet_uses_secrets; names allowlisted under [capabilities]
 * secrets): *value is the secret (never log it or put it in results). */
int octet_secrets_get(const char *name, char **value);

/* Policy intents (octet_uses_policy; tokens need octet_uses_approvals). */
typedef enum octet_decision {
    OCTET_ALLOW,
    OCTET_ASK,
    OCTET_DENY,
} octet_decision;
/* A hint that is absent, false or true. */
typedef enum octet_hint {
    OCTET_UNSET,
    OCTET_NO,
    OCTET_YES,
} octet_hint;
typedef struct octet_intent {
    const char *kind;        /* e.g. "external_side_effect" */
    const char *operation;   /* a stable dotted name, e.g. "issues.create" */
    const char *target_json; /* a JSON object (display and audit); NULL: {} */
    const char *const *data_classes;
    size_t n_data_classes;
    octet_hint read_only, destructive; /* hints can only raise caution */
} octet_intent;
/* Asks the host to classify intent; approval_token (or NULL) redeems an
 * approval. *token_out (may be NULL) is the single-use token that comes
 * with OCTET_ASK when a frontend approved, else NULL. */
int octet_policy_evaluate(const octet_intent *intent, const char *approval_token,
                          octet_decision *decision, char **token_out);

/* Presentation snapshots (manifest `[contributes] presentation = true`;
 * from any handler): a complete replacement (JSON: revision, status,
 * activities, collection, actions). Inside a request the host derives the
 * owner from it; outside one the snapshot is process-scoped. */
int octet_presentation_update(const char *snapshot_json);
/* The host-derived owner of session-scoped work (an octet_call's
 * session_id, extension_instance_id and process_generation). */
typedef struct octet_resource_owner {
    const char *session_id;
    const char *extension_instance_id;
    uint64_t process_generation;
} octet_resource_owner;
/* For an owner the host gave this process in a call context (a background
 * publisher keeps it). */
int octet_presentation_update_for(const octet_resource_owner *owner, const char *snapshot_json);

/* Child agent sessions (octet_uses_agents; model selection and
 * octet_agents_list_models need octet_uses_agent_model_selection). Results
 * are the host's objects as malloc'd JSON text with the protocol's member
 * names (read them with octet_json_*):
 *   spawn        {"agent_id","agent_path","status":{"state","output","error"},"details":{...}}
 *   send         {"delivered_to","delivery":"steering"|"queued"}
 *   follow_up    {"agent_id","agent_path","delivery":"follow_up"|"new_run"}
 *   list         {"principal","resource_owner","persistence_error","agents":[
 *                  {"agent_id","agent_path","status":{...},"details":{...}}]}
 *   wait         {"timed_out":bool,"snapshot":<list's object>}
 *   interrupt    {"agent_id","agent_path","previous_status","interrupt_requested"}
 *   list_models  {"models":[{"model","provider","display_name","reasoning":[...],
 *                  "context_window","max_output_tokens"}],"truncated":bool}
 * The host's refusals arrive as JSON-RPC errors: -32002 (not bound, limits,
 * idempotency conflicts, unknown targets), -32000 (worker slots busy),
 * -32800 (the parent settled). */
typedef enum octet_agent_tool {
    OCTET_AGENT_READ = 1 << 0,
    OCTET_AGENT_SEARCH = 1 << 1,
    OCTET_AGENT_EDIT = 1 << 2,
    OCTET_AGENT_WRITE = 1 << 3,
    OCTET_AGENT_BASH = 1 << 4,
} octet_agent_tool;
/* A child's ceilings, as the Rust SDK's Policy. 0 (or NULL) means the
 * default: 1 concurrent child, 4096 bytes of summary, and the parent's
 * value for the others. */
typedef struct octet_agent_policy {
    unsigned tools;                   /* OR of octet_agent_tool, non-empty */
    uint32_t max_concurrent_children; /* 1..=8 */
    uint32_t max_turns;               /* 1..=256 */
    uint32_t max_tokens;              /* 1000..=64000 */
    uint64_t max_cost_microdollars;   /* 1..=50,000,000 */
    uint32_t max_output_bytes;        /* 512..=16384 */
    uint64_t timeout_ms;              /* 5000..=86,400,000 */
    const char *provider, *model, *reasoning; /* model selection */
} octet_agent_policy;
typedef struct octet_spawn {
    const char *task_name;       /* 1..=48 of [a-z0-9_-] */
    const char *message;         /* the task, at most 128 KiB */
    const char *idempotency_key; /* 1..=256 bytes: same key, same input, same child */
    const char *profile;         /* or NULL */
    const char *fingerprint;     /* 64 lowercase hex, or NULL */
    octet_agent_policy policy;
} octet_spawn;
int octet_agents_spawn(const octet_spawn *request, char **result_json);
/* Steers a running child (target: an agent id or path). */
int octet_agents_send(const char *target, const char *message, char **result_json);
/* Queues a follow-up, or resumes a settled child as a new run. */
int octet_agents_follow_up(const char *target, const char *message, char **result_json);
/* The children of this extension and owner. */
int octet_agents_list(char **result_json);
/* Waits until no child is pending or running, or timeout_ms (1..=60,000;
 * 0: the host's 30,000) passed. */
int octet_agents_wait(uint32_t timeout_ms, char **result_json);
/* Interrupts a child and its descendants. */
int octet_agents_interrupt(const char *target, char **result_json);
/* The models a child may select: query (or NULL) is a case-insensitive
 * substring, limit 1..=100 (0: 50). */
int octet_agents_list_models(const char *query, uint32_t limit, char **result_json);
/* Whether a status state ("pending", "running", ...) is active (unknown
 * states count as settled). */
bool octet_agents_is_active(const char *state);

/* ------------------------------------------------------------------ */
/* Tool composition (API 0.4)                                           */
/* ------------------------------------------------------------------ */

/* From inside a model tool call (declare octet_uses_composition), call the
 * session's other tools through octet and commit the composition store.
 * Values are JSON text as octet has them; results are malloc'd. The shim
 * refuses composition from any other handler, enforces octet's bounds
 * (256 calls per tool call, arguments of 128 KiB, one store commit, 4
 * calls in flight) and reads octet's sidecar files for large values. Needs
 * a build for an API 0.4 manifest: in a 0.2.0 build each call fails with
 * the fix. */
void octet_uses_composition(octet_ext *ext); /* tool_composition_v1 */
/* {"tools": [...], "store": {...}, "limits": {"timeout_ms", "max_calls"}}. */
int octet_composition_context(char **context_json);
/* Runs tool `name` with the arguments (a JSON object; NULL: {}); the value,
 * or with _outcome the whole outcome (content, is_error, value). */
int octet_composition_call(const char *name, const char *arguments_json, char **value_json);
int octet_composition_call_outcome(const char *name, const char *arguments_json,
                                   char **outcome_json);
/* Sets keys[i] to values_json[i] and deletes delete_keys, as the one commit
 * of this tool call. */
int octet_composition_store(const char *const *keys, const char *const *values_json,
                            size_t n_set, const char *const *delete_keys, size_t n_delete);
/* A call whose partial results arrive as it runs (`updates: true`):
 * octet_streaming_call_next waits for the next one (false once none will
 * come), then octet_streaming_call_finish gives the final value. finish and
 * abandon both end the call and free it. */
typedef struct octet_streaming_call octet_streaming_call;
int octet_composition_call_streaming(const char *name, const char *arguments_json,
                                     octet_streaming_call **call);
int octet_composition_call_outcome_streaming(const char *name, const char *arguments_json,
                                             octet_streaming_call **call);
bool octet_streaming_call_next(octet_streaming_call *call, uint64_t *sequence,
                               char **result_json);
int octet_streaming_call_finish(octet_streaming_call *call, char **value_json);
void octet_streaming_call_abandon(octet_streaming_call *call);

/* ------------------------------------------------------------------ */
/* Strings and JSON                                                     */
/* ------------------------------------------------------------------ */

/* printf into a malloc'd string (NULL only when out of memory). */
char *octet_format(const char *fmt, ...) OCTET_PRINTF(1, 2);
char *octet_vformat(const char *fmt, va_list ap);
/* s as a JSON string literal with quotes, malloc'd. */
char *octet_json_quote(const char *s);
/* Number of Unicode scalar values in UTF-8 text s. */
size_t octet_utf8_chars(const char *s);

/*
 * A small JSON reader for arguments and payloads. Every function first
 * checks that `json` is one complete, valid JSON document (RFC 8259, at most
 * OCTET_JSON_MAX_DEPTH levels of nesting), then looks `key` up among the
 * members of the top-level object (the last one wins if a key repeats, as
 * with most parsers). Keys are compared after unescaping. Linear in the
 * length of the text; no allocation except for the returned string.
 */
#define OCTET_JSON_MAX_DEPTH 64

typedef enum octet_json_status {
    OCTET_JSON_OK = 0,
    OCTET_JSON_MISSING,     /* no such member */
    OCTET_JSON_NULL,        /* the member is null */
    OCTET_JSON_WRONG_TYPE,  /* the member has another type */
    OCTET_JSON_RANGE,       /* a number that is not an integer in int64 */
    OCTET_JSON_NOT_OBJECT,  /* valid JSON, but not an object */
    OCTET_JSON_INVALID,     /* not valid JSON, or nested too deep */
    OCTET_JSON_NO_MEMORY,
} octet_json_status;

/* A short English description of a status, for error messages. */
const char *octet_json_status_text(octet_json_status status);

/* Whether json is one valid JSON document; whether it is an object. */
bool octet_json_valid(const char *json);
bool octet_json_is_object(const char *json);

/* A string member, unescaped into a malloc'd NUL-terminated UTF-8 string
 * (free it). A string containing \u0000 is OCTET_JSON_WRONG_TYPE. */
octet_json_status octet_json_get_string(const char *json, const char *key, char **out);
/* An integer member: digits with an optional '-', no fraction or exponent,
 * within int64 (otherwise OCTET_JSON_RANGE). */
octet_json_status octet_json_get_int(const char *json, const char *key, int64_t *out);
octet_json_status octet_json_get_bool(const char *json, const char *key, bool *out);
/* The handler's shortcuts: a member of the arguments (or payload) object,
 * borrowed until the handler returns (nothing to free). NULL, or false for
 * the int and bool readers, when the member is missing, null or of another
 * type; *out is left alone then. */
const char *octet_arg_string(const char *json, const char *key);
bool octet_arg_int(const char *json, const char *key, int64_t *out);
bool octet_arg_bool(const char *json, const char *key, bool *out);
/* Any member's JSON text, malloc'd (feed it back to these functions to
 * read nested objects). */
octet_json_status octet_json_get_raw(const char *json, const char *key, char **out);
/* Checks that every member key of the top-level object is one of
 * allowed[0..count). On OCTET_JSON_WRONG_TYPE, *unknown (when not NULL) is
 * the first unexpected key, malloc'd. */
octet_json_status octet_json_only_keys(const char *json, const char *const *allowed,
                                       size_t count, char **unknown);

#ifdef __cplusplus
}
#endif

#endif /* OCTET_H */
