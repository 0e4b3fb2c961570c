/*
 * The exports that run handlers with results to build: init, tool/call,
 * command/execute and hook/run.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* What init said. */
static char *g_api_version;
static char **g_features;
static size_t g_n_features;
static char *g_workspace;
static char *g_initialize;

const char *octet_api_version(void) { return g_api_version ? g_api_version : ""; }
const char *octet_guest_workspace(void) { return g_workspace ? g_workspace : ""; }
const char *octet_initialize_params(void) { return g_initialize ? g_initialize : ""; }
bool octet_has_feature(const char *feature)
{
    for (size_t i = 0; i < g_n_features; i++)
        if (strcmp(g_features[i], feature) == 0)
            return true;
    return false;
}

bool exports_octet_extension_guest_init(exports_octet_extension_guest_init_params_t *params,
                                        exports_octet_extension_guest_error_t *err)
{
    octet_ext *e = ext();
    free(g_api_version);
    free(g_workspace);
    free(g_initialize);
    for (size_t i = 0; i < g_n_features; i++)
        free(g_features[i]);
    free(g_features);
    g_features = NULL;
    g_n_features = 0;
    g_api_version = cstr_of(&params->api_version);
    g_workspace = cstr_of(&params->workspace);
    g_initialize = cstr_of(&params->initialize);
    for (size_t i = 0; i < params->features.len; i++)
        *PUSH(g_features, g_n_features) = cstr_of(&params->features.ptr[i]);
    exports_octet_extension_guest_init_params_free(params);
    octet_error_clear();
    return take_outcome(e->init ? e->init() : OCTET_OK, err);
}

/* The handler's view of a call context (strings live in the arena). */
octet_call call_of(const exports_octet_extension_guest_call_context_t *cx)
{
    octet_call c;
    memset(&c, 0, sizeof c);
    c.request_id = cx->request_id;
    c.workspace = arena_cstr(&cx->workspace);
    c.execution_scope = arena_opt(&cx->execution_scope);
    if (cx->resource_owner.is_some) {
        c.session_id = arena_cstr(&cx->resource_owner.val.session_id);
        c.extension_instance_id = arena_cstr(&cx->resource_owner.val.extension_instance_id);
        c.process_generation = cx->resource_owner.val.process_generation;
    }
    c.host_json = arena_cstr(&cx->host);
    return c;
}

/* Starts an export: a clean error slot. */
void begin(void)
{
    octet_error_clear();
}

/* Ends an export: the arena goes. */
bool end(bool ok)
{
    arena_release();
    return ok;
}

int unknown(const char *what, const char *name)
{
    return octet_rpc_error(-32601, NULL, "unknown %s: %s", what, name);
}

/* tool/call ---------------------------------------------------------- */

struct octet_tool_result {
    octet_extension_types_tool_result_t r;
};

static octet_extension_types_content_part_t *add_part(octet_tool_result *res, uint8_t tag)
{
    octet_extension_types_content_part_t *part = PUSH(res->r.content.ptr, res->r.content.len);
    part->tag = tag;
    return part;
}

int octet_tool_text(octet_tool_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = xvformat(fmt, ap);
    va_end(ap);
    add_part(res, OCTET_EXTENSION_TYPES_CONTENT_PART_TEXT)->val.text = wstr_take(text);
    return OCTET_OK;
}

void octet_tool_image(octet_tool_result *res, const char *artifact_id, const char *mime_type,
                      const char *alt)
{
    octet_extension_types_content_part_t *p = add_part(res, OCTET_EXTENSION_TYPES_CONTENT_PART_IMAGE);
    p->val.image.artifact_id = wstr_of(artifact_id);
    p->val.image.mime_type = wstr_of(mime_type);
    p->val.image.alt = wopt_of(alt);
}

void octet_tool_audio(octet_tool_result *res, const char *artifact_id, const char *mime_type,
                      const char *transcript)
{
    octet_extension_types_content_part_t *p = add_part(res, OCTET_EXTENSION_TYPES_CONTENT_PART_AUDIO);
    p->val.audio.artifact_id = wstr_of(artifact_id);
    p->val.audio.mime_type = wstr_of(mime_type);
    p->val.audio.transcript = wopt_of(transcript);
}

static void set_json(octet_extension_types_option_json_t *slot, const char *json)
{
    octet_extension_types_option_json_free(slot);
    memset(slot, 0, sizeof *slot);
    if (json != NULL) {
        slot->is_some = true;
        slot->val = wstr_of(json);
    }
}

void octet_tool_structured(octet_tool_result *res, const char *json)
{
    set_json(&res->r.structured_content, json);
}

void octet_tool_metadata(octet_tool_result *res, const char *json)
{
    set_json(&res->r.metadata, json);
}

void octet_tool_set_error(octet_tool_result *res, bool is_error) { res->r.is_error = is_error; }

bool exports_octet_extension_guest_call_tool(exports_octet_extension_guest_tool_call_t *call,
                                             exports_octet_extension_guest_call_context_t *cx,
                                             exports_octet_extension_guest_tool_result_t *ret,
                                             exports_octet_extension_guest_error_t *err)
{
    octet_ext *e = ext();
    begin();
    const char *name = arena_cstr(&call->name);
    const char *args = arena_cstr(&call->arguments);
    octet_call c = call_of(cx);
    exports_octet_extension_guest_tool_call_free(call);
    exports_octet_extension_guest_call_context_free(cx);

    octet_tool_result res;
    memset(&res, 0, sizeof res);
    /* Dynamic tools are served by name too: the shim only lets through
     * calls of tools in the catalog revision the model saw. */
    struct tool_reg *tool = octet__find_tool(e, name, false);
    if (tool == NULL)
        tool = octet__find_tool(e, name, true);
    int rc = tool ? tool->fn(args, &res, &c) : unknown("tool", name);
    bool ok = take_outcome(rc, err);
    if (ok) {
        bool has_text = false;
        for (size_t i = 0; i < res.r.content.len; i++)
            has_text |= res.r.content.ptr[i].tag == OCTET_EXTENSION_TYPES_CONTENT_PART_TEXT;
        if (!has_text) /* the protocol needs a text part */
            add_part(&res, OCTET_EXTENSION_TYPES_CONTENT_PART_TEXT)->val.text = wstr_of("");
        *ret = res.r;
    } else {
        octet_extension_types_tool_result_free(&res.r);
    }
    return end(ok);
}

/* Shared list builders ------------------------------------------------ */

void add_notification(octet_extension_types_list_notification_t *list,
                             octet_notify_level level, const char *title, const char *message)
{
    octet_extension_types_notification_t *n = PUSH(list->ptr, list->len);
    n->level = (uint8_t)level;
    n->title = wopt_of(title);
    n->message = wstr_of(message);
}

void add_context(octet_extension_types_list_context_item_t *list, const char *label,
                        const char *content, octet_placement placement)
{
    octet_extension_types_context_item_t *c = PUSH(list->ptr, list->len);
    c->label = wstr_of(label);
    c->content = wstr_of(content);
    c->placement = (uint8_t)placement;
}

/* command/execute ------------------------------------------------------ */

struct octet_command_result {
    char *text;
    size_t len;
    octet_extension_types_command_result_t r; /* text filled at the end */
};

void octet_command_text(octet_command_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *more = xvformat(fmt, ap);
    va_end(ap);
    size_t n = strlen(more);
    res->text = xrealloc(res->text, res->len + n + 1);
    memcpy(res->text + res->len, more, n + 1);
    res->len += n;
    free(more);
}

void octet_command_notify(octet_command_result *res, octet_notify_level level, const char *title,
                          const char *message)
{
    add_notification(&res->r.notifications, level, title, message);
}

void octet_command_context(octet_command_result *res, const char *label, const char *content,
                           octet_placement placement)
{
    add_context(&res->r.context, label, content, placement);
}

bool exports_octet_extension_guest_execute_command(
    extension_string_t *name, extension_list_string_t *arguments,
    exports_octet_extension_guest_call_context_t *cx,
    exports_octet_extension_guest_command_result_t *ret, exports_octet_extension_guest_error_t *err)
{
    octet_ext *e = ext();
    begin();
    const char *cname = arena_cstr(name);
    size_t argc = arguments->len;
    const char **argv = xrealloc(NULL, (argc + 1) * sizeof *argv);
    arena_keep((char *)argv);
    for (size_t i = 0; i < argc; i++)
        argv[i] = arena_cstr(&arguments->ptr[i]);
    argv[argc] = NULL;
    octet_call c = call_of(cx);
    extension_string_free(name);
    extension_list_string_free(arguments);
    exports_octet_extension_guest_call_context_free(cx);

    octet_command_result res;
    memset(&res, 0, sizeof res);
    int rc = -1;
    bool found = false;
    for (size_t i = 0; i < e->n_commands && !found; i++) {
        if (strcmp(e->commands[i].name, cname) == 0) {
            found = true;
            rc = e->commands[i].fn(argc, argv, &res, &c);
        }
    }
    if (!found)
        rc = unknown("command", cname);
    bool ok = take_outcome(rc, err);
    res.r.text = wstr_take(res.text);
    if (ok)
        *ret = res.r;
    else
        octet_extension_types_command_result_free(&res.r);
    return end(ok);
}

/* hook/run -------------------------------------------------------------- */

void octet_hook_deny(octet_hook_result *res, const char *reason)
{
    octet_extension_types_disposition_free(&res->r.disposition);
    res->r.disposition.tag = OCTET_EXTENSION_TYPES_DISPOSITION_DENY;
    res->r.disposition.val.deny = wstr_of(reason);
}

void octet_hook_context(octet_hook_result *res, const char *label, const char *content,
                        octet_placement placement)
{
    add_context(&res->r.context, label, content, placement);
}

void octet_hook_notify(octet_hook_result *res, octet_notify_level level, const char *title,
                       const char *message)
{
    add_notification(&res->r.notifications, level, title, message);
}

static void set_retry(octet_hook_result *res, uint8_t tag, uint64_t delay)
{
    res->r.provider_retry.is_some = true;
    res->r.provider_retry.val.tag = tag;
    res->r.provider_retry.val.val.delay = delay;
}

void octet_hook_retry(octet_hook_result *res)
{
    set_retry(res, OCTET_EXTENSION_TYPES_RETRY_DECISION_RETRY, 0);
}
void octet_hook_stop(octet_hook_result *res)
{
    set_retry(res, OCTET_EXTENSION_TYPES_RETRY_DECISION_STOP, 0);
}
void octet_hook_retry_delay(octet_hook_result *res, uint64_t delay_ms)
{
    set_retry(res, OCTET_EXTENSION_TYPES_RETRY_DECISION_DELAY, delay_ms);
}

void octet_hook_persistence(octet_hook_result *res, const char *value_json, bool public_)
{
    octet_extension_types_option_persistence_metadata_free(&res->r.persistence_metadata);
    res->r.persistence_metadata.is_some = true;
    res->r.persistence_metadata.val.value = wstr_of(value_json);
    res->r.persistence_metadata.val.public_ = public_;
}

void octet_hook_rescan(octet_hook_result *res, const char *const *ids, size_t count)
{
    octet_extension_types_option_rescan_decision_free(&res->r.post_mutation);
    memset(&res->r.post_mutation, 0, sizeof res->r.post_mutation);
    res->r.post_mutation.is_some = true;
    if (ids == NULL || count == 0) {
        res->r.post_mutation.val.tag = OCTET_EXTENSION_TYPES_RESCAN_DECISION_NO_RESCAN;
        return;
    }
    res->r.post_mutation.val.tag = OCTET_EXTENSION_TYPES_RESCAN_DECISION_REQUEST_RESCAN;
    res->r.post_mutation.val.val.request_rescan = wlist_of((char *const *)ids, count);
}

bool exports_octet_extension_guest_run_hook(extension_string_t *hook,
                                            exports_octet_extension_guest_json_t *payload,
                                            exports_octet_extension_guest_call_context_t *cx,
                                            exports_octet_extension_guest_hook_result_t *ret,
                                            exports_octet_extension_guest_error_t *err)
{
    octet_ext *e = ext();
    begin();
    const char *name = arena_cstr(hook);
    const char *json = arena_cstr(payload);
    octet_call c = call_of(cx);
    extension_string_free(hook);
    exports_octet_extension_guest_json_free(payload);
    exports_octet_extension_guest_call_context_free(cx);

    octet_hook_result res;
    memset(&res, 0, sizeof res); /* continue, nothing else */
    int rc = OCTET_OK;
    for (size_t i = 0; i < e->n_hooks; i++) {
        if (strcmp(e->hooks[i].name, name) == 0) {
            rc = e->hooks[i].fn(json, &res, &c);
            break;
        }
    }
    bool ok = take_outcome(rc, err);
    if (ok)
        *ret = res.r;
    else
        octet_extension_types_hook_result_free(&res.r);
    return end(ok);
}

