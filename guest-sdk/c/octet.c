/*
 * octet.c: the C guest SDK's library. Implements every export of the WIT
 * world `extension` (octet:extension@0.2.0) on top of the bindings that
 * `wit-bindgen c` generated in gen/, and dispatches to the handlers that
 * octet_setup() registered. See octet.h for the API and its conventions.
 *
 * Memory follows wit-bindgen C's rules:
 * - an export's arguments belong to the export: they are copied into
 *   NUL-terminated strings for the handler and freed with the generated
 *   *_free functions before returning;
 * - what an export returns is allocated with malloc (the allocator behind
 *   cabi_realloc) and freed by the generated post-return functions, which
 *   free a string or list only when its length is non-zero, so empty ones
 *   are returned as {NULL, 0} and never allocated;
 * - an import's arguments are borrowed; what it returns belongs to the
 *   caller and is freed here.
 */
#include "octet.h"

#include <stdio.h>
#include <string.h>

#include "extension.h"

typedef extension_string_t wstr;
typedef octet_extension_types_error_t werror;

/* ------------------------------------------------------------------ */
/* Allocation                                                           */
/* ------------------------------------------------------------------ */

/* Out of memory is a trap: the shim answers the request and replaces the
 * instance. */
static void *xrealloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size ? size : 1);
    if (p == NULL)
        abort();
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = xrealloc(NULL, n);
    memcpy(p, s, n);
    return p;
}

static char *xstrdup_opt(const char *s) { return s ? xstrdup(s) : NULL; }

/* Grows *arr by one element of `size` bytes and returns the new element,
 * zeroed. */
static void *push(void *arr_ptr, size_t *len, size_t size)
{
    void **arr = arr_ptr;
    *arr = xrealloc(*arr, (*len + 1) * size);
    void *item = (char *)*arr + *len * size;
    memset(item, 0, size);
    (*len)++;
    return item;
}
#define PUSH(arr, len) ((__typeof__(&(arr)[0]))push(&(arr), &(len), sizeof *(arr)))

/* A WIT string to return: a malloc'd copy, or {NULL, 0} when empty. */
static wstr wstr_of(const char *s)
{
    wstr w = {NULL, 0};
    size_t n = s ? strlen(s) : 0;
    if (n > 0) {
        w.ptr = xrealloc(NULL, n);
        memcpy(w.ptr, s, n);
        w.len = n;
    }
    return w;
}

/* Same, taking over a malloc'd C string (whose NUL is simply not sent). */
static wstr wstr_take(char *s)
{
    wstr w = {NULL, 0};
    if (s != NULL && *s != '\0') {
        w.ptr = (uint8_t *)s;
        w.len = strlen(s);
    } else {
        free(s);
    }
    return w;
}

static extension_option_string_t wopt_of(const char *s)
{
    extension_option_string_t o;
    memset(&o, 0, sizeof o);
    if (s != NULL) {
        o.is_some = true;
        o.val = wstr_of(s);
    }
    return o;
}

/* A borrowed WIT view of a C string, for import arguments. */
static wstr wstr_borrow(const char *s)
{
    wstr w = {(uint8_t *)s, s ? strlen(s) : 0};
    return w;
}

/* A malloc'd NUL-terminated copy of a WIT string. */
static char *cstr_of(const wstr *w)
{
    char *s = xrealloc(NULL, w->len + 1);
    if (w->len > 0)
        memcpy(s, w->ptr, w->len);
    s[w->len] = '\0';
    return s;
}

/* Per-call arena: the C strings handed to a handler live until the export
 * returns. */
static void **g_arena;
static size_t g_arena_len;

static const char *arena_keep(char *s)
{
    *PUSH(g_arena, g_arena_len) = s;
    return s;
}

static const char *arena_cstr(const wstr *w) { return arena_keep(cstr_of(w)); }

static const char *arena_opt(const extension_option_string_t *o)
{
    return o->is_some ? arena_cstr(&o->val) : NULL;
}

static void arena_release(void)
{
    for (size_t i = 0; i < g_arena_len; i++)
        free(g_arena[i]);
    free(g_arena);
    g_arena = NULL;
    g_arena_len = 0;
}

/* ------------------------------------------------------------------ */
/* Strings                                                              */
/* ------------------------------------------------------------------ */

char *octet_vformat(const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s == NULL)
        return NULL;
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *octet_format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = octet_vformat(fmt, ap);
    va_end(ap);
    return s;
}

/* vformat that traps instead of returning NULL. */
static char *xvformat(const char *fmt, va_list ap)
{
    char *s = octet_vformat(fmt, ap);
    if (s == NULL)
        abort();
    return s;
}

char *octet_json_quote(const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 2;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p < 0x20) ? 6 : (*p == '"' || *p == '\\') ? 2 : 1;
    char *out = malloc(n + 1);
    if (out == NULL)
        return NULL;
    char *o = out;
    *o++ = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = (char)c;
        } else if (c < 0x20) {
            *o++ = '\\';
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        } else {
            *o++ = (char)c;
        }
    }
    *o++ = '"';
    *o = '\0';
    return out;
}

size_t octet_utf8_chars(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80)
            n++;
    return n;
}

/* ------------------------------------------------------------------ */
/* Errors                                                               */
/* ------------------------------------------------------------------ */

/* The recorded error (owned), and its message as C text. */
static bool g_has_error;
static werror g_error;
static char *g_error_text;

void octet_error_clear(void)
{
    if (g_has_error)
        octet_extension_types_error_free(&g_error);
    memset(&g_error, 0, sizeof g_error);
    free(g_error_text);
    g_error_text = NULL;
    g_has_error = false;
}

/* Records err (taking it over); text is its message (taken over). */
static int record(werror err, char *text)
{
    octet_error_clear();
    g_error = err;
    g_error_text = text ? text : xstrdup("");
    g_has_error = true;
    return OCTET_ERROR;
}

static int record_text(uint8_t tag, char *text)
{
    werror err;
    memset(&err, 0, sizeof err);
    err.tag = tag;
    if (tag == OCTET_EXTENSION_TYPES_ERROR_INVALID_PARAMS)
        err.val.invalid_params = wstr_of(text);
    else
        err.val.failed = wstr_of(text);
    return record(err, text);
}

int octet_invalid_params(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = xvformat(fmt, ap);
    va_end(ap);
    return record_text(OCTET_EXTENSION_TYPES_ERROR_INVALID_PARAMS, text);
}

int octet_failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = xvformat(fmt, ap);
    va_end(ap);
    return record_text(OCTET_EXTENSION_TYPES_ERROR_FAILED, text);
}

int octet_cancelled(void)
{
    werror err;
    memset(&err, 0, sizeof err);
    err.tag = OCTET_EXTENSION_TYPES_ERROR_CANCELLED;
    return record(err, NULL);
}

int octet_rpc_error(int32_t code, const char *data_json, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = xvformat(fmt, ap);
    va_end(ap);
    werror err;
    memset(&err, 0, sizeof err);
    err.tag = OCTET_EXTENSION_TYPES_ERROR_RPC;
    err.val.rpc.code = code;
    err.val.rpc.message = wstr_of(text);
    if (data_json != NULL) {
        err.val.rpc.data.is_some = true;
        err.val.rpc.data.val = wstr_of(data_json);
    }
    return record(err, text);
}

bool octet_has_error(void) { return g_has_error; }
const char *octet_error_message(void) { return g_error_text ? g_error_text : ""; }
bool octet_error_is_cancelled(void)
{
    return g_has_error && g_error.tag == OCTET_EXTENSION_TYPES_ERROR_CANCELLED;
}

/* Records an error a host import returned (taking it over). */
static int record_host(werror *err)
{
    char *text = NULL;
    switch (err->tag) {
    case OCTET_EXTENSION_TYPES_ERROR_INVALID_PARAMS:
        text = cstr_of(&err->val.invalid_params);
        break;
    case OCTET_EXTENSION_TYPES_ERROR_FAILED:
        text = cstr_of(&err->val.failed);
        break;
    case OCTET_EXTENSION_TYPES_ERROR_RPC:
        text = cstr_of(&err->val.rpc.message);
        break;
    default:
        break;
    }
    /* Empty strings from the host carry a non-heap pointer; every free of
     * WIT values checks the length first, so keeping them is safe. */
    return record(*err, text);
}

/* The outcome of a handler: false with *out filled when it failed. */
static bool take_outcome(int rc, werror *out)
{
    if (rc == OCTET_OK) {
        octet_error_clear();
        return true;
    }
    if (!g_has_error)
        record_text(OCTET_EXTENSION_TYPES_ERROR_FAILED, xstrdup("handler failed"));
    *out = g_error;
    g_has_error = false;
    memset(&g_error, 0, sizeof g_error);
    free(g_error_text);
    g_error_text = NULL;
    return false;
}

/* ------------------------------------------------------------------ */
/* The registry                                                         */
/* ------------------------------------------------------------------ */

struct tool_reg {
    char *name, *description, *parameters, *output_schema;
    octet_tool_fn fn;
};
struct command_reg {
    char *name, *description, *usage;
    octet_command_fn fn;
};
struct hook_reg {
    char *name;
    octet_hook_fn fn;
};
struct status_reg {
    char *surface;
    octet_status_fn fn;
};
struct render_reg {
    char *tool;
    octet_render_fn fn;
};
struct lifecycle_reg {
    unsigned kinds;
    octet_lifecycle_fn fn;
};

struct octet_ext {
    char *name;
    struct tool_reg *tools;
    size_t n_tools;
    struct command_reg *commands;
    size_t n_commands;
    struct hook_reg *hooks;
    size_t n_hooks;
    struct status_reg *status;
    size_t n_status;
    struct render_reg *renderers;
    size_t n_renderers;
    struct lifecycle_reg *lifecycle;
    size_t n_lifecycle;
    char **features;
    size_t n_features;
    octet_context_fn context;
    octet_menu_fn menu;
    octet_void_fn init, shutdown;
    uint32_t max_concurrency;
};

static octet_ext g_ext;
static bool g_ready;

/* Builds the registry on first use (the first export call, normally
 * describe). */
static octet_ext *ext(void)
{
    if (!g_ready) {
        g_ready = true;
        g_ext.name = xstrdup("extension");
        g_ext.max_concurrency = 1;
        octet_setup(&g_ext);
    }
    return &g_ext;
}

static void duplicate(const char *what, const char *name)
{
    fprintf(stderr, "octet: %s `%s` is registered twice\n", what, name);
    abort();
}

void octet_name(octet_ext *e, const char *name)
{
    free(e->name);
    e->name = xstrdup(name);
}

void octet_tool(octet_ext *e, const char *name, const char *description,
                const char *parameters_json, octet_tool_fn fn)
{
    for (size_t i = 0; i < e->n_tools; i++)
        if (strcmp(e->tools[i].name, name) == 0)
            duplicate("tool", name);
    struct tool_reg *t = PUSH(e->tools, e->n_tools);
    t->name = xstrdup(name);
    t->description = xstrdup(description);
    t->parameters = xstrdup(parameters_json ? parameters_json : "{\"type\":\"object\"}");
    t->fn = fn;
}

void octet_tool_output_schema(octet_ext *e, const char *tool, const char *schema_json)
{
    for (size_t i = 0; i < e->n_tools; i++) {
        if (strcmp(e->tools[i].name, tool) == 0) {
            free(e->tools[i].output_schema);
            e->tools[i].output_schema = xstrdup_opt(schema_json);
            return;
        }
    }
    fprintf(stderr, "octet: octet_tool_output_schema: no tool `%s`\n", tool);
    abort();
}

void octet_command(octet_ext *e, const char *name, const char *description, const char *usage,
                   octet_command_fn fn)
{
    for (size_t i = 0; i < e->n_commands; i++)
        if (strcmp(e->commands[i].name, name) == 0)
            duplicate("command", name);
    struct command_reg *c = PUSH(e->commands, e->n_commands);
    c->name = xstrdup(name);
    c->description = xstrdup(description);
    c->usage = xstrdup_opt(usage);
    c->fn = fn;
}

void octet_hook(octet_ext *e, const char *hook, octet_hook_fn fn)
{
    for (size_t i = 0; i < e->n_hooks; i++)
        if (strcmp(e->hooks[i].name, hook) == 0)
            duplicate("hook", hook);
    struct hook_reg *h = PUSH(e->hooks, e->n_hooks);
    h->name = xstrdup(hook);
    h->fn = fn;
}

void octet_context(octet_ext *e, octet_context_fn fn)
{
    if (e->context != NULL)
        duplicate("context handler", "context");
    e->context = fn;
}

void octet_status(octet_ext *e, const char *surface, octet_status_fn fn)
{
    for (size_t i = 0; i < e->n_status; i++)
        if (strcmp(e->status[i].surface, surface) == 0)
            duplicate("status surface", surface);
    struct status_reg *s = PUSH(e->status, e->n_status);
    s->surface = xstrdup(surface);
    s->fn = fn;
}

void octet_renderer(octet_ext *e, const char *tool, octet_render_fn fn)
{
    for (size_t i = 0; i < e->n_renderers; i++)
        if (strcmp(e->renderers[i].tool, tool) == 0)
            duplicate("renderer", tool);
    struct render_reg *r = PUSH(e->renderers, e->n_renderers);
    r->tool = xstrdup(tool);
    r->fn = fn;
}

void octet_menu(octet_ext *e, octet_menu_fn fn)
{
    if (e->menu != NULL)
        duplicate("menu handler", "menu");
    e->menu = fn;
}

void octet_on_lifecycle(octet_ext *e, unsigned kinds, octet_lifecycle_fn fn)
{
    struct lifecycle_reg *l = PUSH(e->lifecycle, e->n_lifecycle);
    l->kinds = kinds & 0x3Fu;
    l->fn = fn;
}

void octet_on_init(octet_ext *e, octet_void_fn fn) { e->init = fn; }
void octet_on_shutdown(octet_ext *e, octet_void_fn fn) { e->shutdown = fn; }
void octet_max_concurrency(octet_ext *e, uint32_t n) { e->max_concurrency = n ? n : 1; }

void octet_uses_feature(octet_ext *e, const char *feature)
{
    for (size_t i = 0; i < e->n_features; i++)
        if (strcmp(e->features[i], feature) == 0)
            return;
    *PUSH(e->features, e->n_features) = xstrdup(feature);
}

/* ------------------------------------------------------------------ */
/* Exports                                                              */
/* ------------------------------------------------------------------ */

static extension_list_string_t wlist_of(char *const *items, size_t n)
{
    extension_list_string_t l = {NULL, 0};
    for (size_t i = 0; i < n; i++)
        *PUSH(l.ptr, l.len) = wstr_of(items[i]);
    return l;
}

void exports_octet_extension_guest_describe(exports_octet_extension_guest_description_t *ret)
{
    octet_ext *e = ext();
    memset(ret, 0, sizeof *ret);
    ret->name = wstr_of(e->name);
    for (size_t i = 0; i < e->n_tools; i++) {
        octet_extension_types_tool_definition_t *t = PUSH(ret->tools.ptr, ret->tools.len);
        t->name = wstr_of(e->tools[i].name);
        t->description = wstr_of(e->tools[i].description);
        t->parameters = wstr_of(e->tools[i].parameters);
        if (e->tools[i].output_schema != NULL) {
            t->output_schema.is_some = true;
            t->output_schema.val = wstr_of(e->tools[i].output_schema);
        }
    }
    for (size_t i = 0; i < e->n_commands; i++) {
        octet_extension_types_command_definition_t *c =
            PUSH(ret->commands.ptr, ret->commands.len);
        c->name = wstr_of(e->commands[i].name);
        c->description = wstr_of(e->commands[i].description);
        c->usage = wopt_of(e->commands[i].usage);
    }
    for (size_t i = 0; i < e->n_hooks; i++)
        *PUSH(ret->hooks.ptr, ret->hooks.len) = wstr_of(e->hooks[i].name);
    ret->context = e->context != NULL;
    for (size_t i = 0; i < e->n_status; i++)
        *PUSH(ret->status_surfaces.ptr, ret->status_surfaces.len) = wstr_of(e->status[i].surface);
    for (size_t i = 0; i < e->n_renderers; i++)
        *PUSH(ret->renderers.ptr, ret->renderers.len) = wstr_of(e->renderers[i].tool);
    ret->menu = e->menu != NULL;
    /* Kinds in the order they were first registered. */
    unsigned seen = 0;
    for (size_t i = 0; i < e->n_lifecycle; i++) {
        for (uint8_t k = 0; k < 6; k++) {
            unsigned bit = 1u << k;
            if ((e->lifecycle[i].kinds & bit) && !(seen & bit)) {
                seen |= bit;
                *PUSH(ret->lifecycle.ptr, ret->lifecycle.len) = k;
            }
        }
    }
    ret->max_concurrency = e->max_concurrency;
    ret->features = wlist_of(e->features, e->n_features);
    if (seen != 0) {
        bool listed = false;
        for (size_t i = 0; i < e->n_features; i++)
            listed |= strcmp(e->features[i], "lifecycle_events") == 0;
        if (!listed)
            *PUSH(ret->features.ptr, ret->features.len) = wstr_of("lifecycle_events");
    }
}

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
static octet_call call_of(const exports_octet_extension_guest_call_context_t *cx)
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
static void begin(void)
{
    octet_error_clear();
}

/* Ends an export: the arena goes. */
static bool end(bool ok)
{
    arena_release();
    return ok;
}

static int unknown(const char *what, const char *name)
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

void octet_tool_text(octet_tool_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = xvformat(fmt, ap);
    va_end(ap);
    add_part(res, OCTET_EXTENSION_TYPES_CONTENT_PART_TEXT)->val.text = wstr_take(text);
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
    int rc = -1;
    bool found = false;
    for (size_t i = 0; i < e->n_tools && !found; i++) {
        if (strcmp(e->tools[i].name, name) == 0) {
            found = true;
            rc = e->tools[i].fn(args, &res, &c);
        }
    }
    if (!found)
        rc = unknown("tool", name);
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

static void add_notification(octet_extension_types_list_notification_t *list,
                             octet_notify_level level, const char *title, const char *message)
{
    octet_extension_types_notification_t *n = PUSH(list->ptr, list->len);
    n->level = (uint8_t)level;
    n->title = wopt_of(title);
    n->message = wstr_of(message);
}

static void add_context(octet_extension_types_list_context_item_t *list, const char *label,
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

struct octet_hook_result {
    octet_extension_types_hook_result_t r;
};

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

/* context/collect --------------------------------------------------------- */

struct octet_context_list {
    octet_extension_types_list_context_item_t list;
};

void octet_context_add(octet_context_list *out, const char *label, const char *content,
                       octet_placement placement)
{
    add_context(&out->list, label, content, placement);
}

bool exports_octet_extension_guest_collect_context(
    extension_string_t *maybe_prompt, exports_octet_extension_guest_call_context_t *cx,
    exports_octet_extension_guest_list_context_item_t *ret,
    exports_octet_extension_guest_error_t *err)
{
    octet_ext *e = ext();
    begin();
    const char *prompt = maybe_prompt ? arena_cstr(maybe_prompt) : NULL;
    octet_call c = call_of(cx);
    if (maybe_prompt)
        extension_string_free(maybe_prompt);
    exports_octet_extension_guest_call_context_free(cx);

    octet_context_list out;
    memset(&out, 0, sizeof out);
    int rc = e->context ? e->context(prompt, &out, &c) : OCTET_OK;
    bool ok = take_outcome(rc, err);
    if (ok) {
        ret->ptr = out.list.ptr;
        ret->len = out.list.len;
    } else {
        octet_extension_types_list_context_item_free(&out.list);
    }
    return end(ok);
}

/* status/collect ------------------------------------------------------------ */

struct octet_status_item {
    bool set;
    char *surface, *text, *style_role;
    int32_t priority;
};

void octet_status_show(octet_status_item *out, const char *text, const char *style_role,
                       int32_t priority)
{
    free(out->text);
    free(out->style_role);
    out->set = true;
    out->text = xstrdup(text);
    out->style_role = xstrdup_opt(style_role);
    out->priority = priority;
}

void octet_status_surface(octet_status_item *out, const char *surface)
{
    free(out->surface);
    out->surface = xstrdup(surface);
}

bool exports_octet_extension_guest_collect_status(
    extension_string_t *surface, exports_octet_extension_guest_call_context_t *cx,
    exports_octet_extension_guest_option_status_item_t *ret,
    exports_octet_extension_guest_error_t *err)
{
    octet_ext *e = ext();
    begin();
    const char *name = arena_cstr(surface);
    octet_call c = call_of(cx);
    extension_string_free(surface);
    exports_octet_extension_guest_call_context_free(cx);

    octet_status_item out;
    memset(&out, 0, sizeof out);
    int rc = OCTET_OK;
    for (size_t i = 0; i < e->n_status; i++) {
        if (strcmp(e->status[i].surface, name) == 0) {
            rc = e->status[i].fn(name, &out, &c);
            break;
        }
    }
    bool ok = take_outcome(rc, err);
    memset(ret, 0, sizeof *ret);
    if (ok && out.set) {
        ret->is_some = true;
        ret->val.surface = wstr_of(out.surface ? out.surface : name);
        ret->val.text = wstr_of(out.text);
        ret->val.style_role = wopt_of(out.style_role);
        ret->val.priority = out.priority;
    }
    free(out.surface);
    free(out.text);
    free(out.style_role);
    return end(ok);
}

/* tool/render ------------------------------------------------------------- */

struct octet_segments {
    exports_octet_extension_guest_list_segment_t list;
};

void octet_segment(octet_segments *out, const char *style_role, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = xvformat(fmt, ap);
    va_end(ap);
    octet_extension_types_segment_t *s = PUSH(out->list.ptr, out->list.len);
    s->text = wstr_take(text);
    s->style_role = wopt_of(style_role);
}

bool exports_octet_extension_guest_render_tool(
    exports_octet_extension_guest_render_request_t *request,
    exports_octet_extension_guest_call_context_t *cx, exports_octet_extension_guest_list_segment_t *ret,
    exports_octet_extension_guest_error_t *err)
{
    octet_ext *e = ext();
    begin();
    octet_render req;
    req.name = arena_cstr(&request->name);
    req.arguments_json = arena_cstr(&request->arguments);
    req.output = arena_opt(&request->output);
    req.is_error = request->is_error;
    octet_call c = call_of(cx);
    exports_octet_extension_guest_render_request_free(request);
    exports_octet_extension_guest_call_context_free(cx);

    octet_segments out;
    memset(&out, 0, sizeof out);
    int rc = -1;
    bool found = false;
    for (size_t i = 0; i < e->n_renderers && !found; i++) {
        if (strcmp(e->renderers[i].tool, req.name) == 0) {
            found = true;
            rc = e->renderers[i].fn(&req, &out, &c);
        }
    }
    if (!found)
        rc = unknown("renderer", req.name);
    bool ok = take_outcome(rc, err);
    if (ok)
        *ret = out.list;
    else
        exports_octet_extension_guest_list_segment_free(&out.list);
    return end(ok);
}

/* menu/collect ------------------------------------------------------------ */

struct octet_menu_out {
    char *json;
};

void octet_menu_set(octet_menu_out *out, const char *json)
{
    free(out->json);
    out->json = xstrdup_opt(json);
}

bool exports_octet_extension_guest_collect_menu(exports_octet_extension_guest_call_context_t *cx,
                                                exports_octet_extension_guest_option_json_t *ret,
                                                exports_octet_extension_guest_error_t *err)
{
    octet_ext *e = ext();
    begin();
    octet_call c = call_of(cx);
    exports_octet_extension_guest_call_context_free(cx);

    octet_menu_out out = {NULL};
    int rc = e->menu ? e->menu(&out, &c) : OCTET_OK;
    bool ok = take_outcome(rc, err);
    memset(ret, 0, sizeof *ret);
    if (ok && out.json != NULL) {
        ret->is_some = true;
        ret->val = wstr_of(out.json);
    }
    free(out.json);
    return end(ok);
}

/* Lifecycle and shutdown ----------------------------------------------------- */

static const char *const lifecycle_methods[6] = {
    "session/started", "session/settled", "turn/started",
    "turn/settled",    "tool/started",    "tool/settled",
};

void exports_octet_extension_guest_on_lifecycle(exports_octet_extension_guest_lifecycle_event_t *event)
{
    octet_ext *e = ext();
    begin();
    unsigned k = event->kind < 6 ? event->kind : 0;
    octet_lifecycle_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = (octet_lifecycle_kind)(1u << k);
    ev.session_id = arena_cstr(&event->session_id);
    ev.run_id = arena_opt(&event->run_id);
    ev.turn_id = arena_opt(&event->turn_id);
    ev.tool_call_id = arena_opt(&event->tool_call_id);
    ev.tool_name = arena_opt(&event->tool_name);
    ev.outcome = arena_opt(&event->outcome);
    ev.has_duration = event->duration_ms.is_some;
    ev.duration_ms = event->duration_ms.is_some ? event->duration_ms.val : 0;
    ev.reason = arena_opt(&event->reason);
    exports_octet_extension_guest_lifecycle_event_free(event);

    for (size_t i = 0; i < e->n_lifecycle; i++) {
        if (!(e->lifecycle[i].kinds & ev.kind))
            continue;
        if (e->lifecycle[i].fn(&ev) != OCTET_OK) {
            const char *why = g_has_error ? octet_error_message() : "failed";
            octet_log(OCTET_LOG_WARNING, "%s handler failed: %s", lifecycle_methods[k], why);
        }
        octet_error_clear();
    }
    end(true);
}

bool exports_octet_extension_guest_on_shutdown(exports_octet_extension_guest_error_t *err)
{
    octet_ext *e = ext();
    begin();
    return end(take_outcome(e->shutdown ? e->shutdown() : OCTET_OK, err));
}

/* ------------------------------------------------------------------ */
/* Host services                                                        */
/* ------------------------------------------------------------------ */

/* Finishes a host call: false means err holds the host's error. */
static int host_result(bool ok, werror *err)
{
    return ok ? OCTET_OK : record_host(err);
}

static int notify(octet_notify_level level, const char *title, char *message)
{
    octet_extension_host_notification_t n;
    memset(&n, 0, sizeof n);
    n.level = (uint8_t)level;
    if (title != NULL) {
        n.title.is_some = true;
        n.title.val = wstr_borrow(title);
    }
    n.message = wstr_borrow(message);
    werror err;
    bool ok = octet_extension_host_notify(&n, &err);
    free(message);
    return host_result(ok, &err);
}

int octet_notify(octet_notify_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *message = xvformat(fmt, ap);
    va_end(ap);
    return notify(level, NULL, message);
}

int octet_notify_titled(octet_notify_level level, const char *title, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *message = xvformat(fmt, ap);
    va_end(ap);
    return notify(level, title, message);
}

int octet_confirm(const char *prompt, const char *detail, bool destructive, bool default_answer,
                  bool *answer)
{
    octet_extension_host_confirmation_t c;
    memset(&c, 0, sizeof c);
    c.prompt = wstr_borrow(prompt);
    if (detail != NULL) {
        c.detail.is_some = true;
        c.detail.val = wstr_borrow(detail);
    }
    c.destructive = destructive;
    c.default_ = default_answer;
    werror err;
    bool value = false;
    bool ok = octet_extension_host_confirm(&c, &value, &err);
    if (ok && answer != NULL)
        *answer = value;
    return host_result(ok, &err);
}

int octet_request_input(const char *prompt, bool secret, char **answer)
{
    wstr p = wstr_borrow(prompt);
    extension_option_string_t value;
    memset(&value, 0, sizeof value);
    werror err;
    bool ok = octet_extension_host_request_input(&p, secret, &value, &err);
    if (answer != NULL)
        *answer = NULL;
    if (ok && value.is_some) {
        if (answer != NULL)
            *answer = cstr_of(&value.val);
        extension_string_free(&value.val);
    }
    return host_result(ok, &err);
}

static int progress(octet_extension_host_progress_event_t *event)
{
    werror err;
    bool ok = octet_extension_host_progress(event, &err);
    return host_result(ok, &err);
}

static int progress_status(bool step, uint64_t current, uint64_t total, const char *unit,
                           char *message)
{
    octet_extension_host_progress_event_t ev;
    memset(&ev, 0, sizeof ev);
    ev.tag = OCTET_EXTENSION_TYPES_PROGRESS_EVENT_STATUS;
    ev.val.status.message = wstr_borrow(message);
    if (step) {
        ev.val.status.current.is_some = true;
        ev.val.status.current.val = current;
        ev.val.status.total.is_some = true;
        ev.val.status.total.val = total;
    }
    if (unit != NULL) {
        ev.val.status.unit.is_some = true;
        ev.val.status.unit.val = wstr_borrow(unit);
    }
    int rc = progress(&ev);
    free(message);
    return rc;
}

int octet_progress(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *message = xvformat(fmt, ap);
    va_end(ap);
    return progress_status(false, 0, 0, NULL, message);
}

int octet_progress_step(uint64_t current, uint64_t total, const char *unit, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *message = xvformat(fmt, ap);
    va_end(ap);
    return progress_status(true, current, total, unit, message);
}

int octet_progress_output(bool to_stderr, const void *data, size_t len)
{
    octet_extension_host_progress_event_t ev;
    memset(&ev, 0, sizeof ev);
    ev.tag = OCTET_EXTENSION_TYPES_PROGRESS_EVENT_OUTPUT;
    ev.val.output.stream = to_stderr ? OCTET_EXTENSION_TYPES_OUTPUT_STREAM_STDERR
                                     : OCTET_EXTENSION_TYPES_OUTPUT_STREAM_STDOUT;
    ev.val.output.data.ptr = (uint8_t *)data;
    ev.val.output.data.len = len;
    return progress(&ev);
}

int octet_progress_decoration(const char *label, const char *detail)
{
    octet_extension_host_progress_event_t ev;
    memset(&ev, 0, sizeof ev);
    ev.tag = OCTET_EXTENSION_TYPES_PROGRESS_EVENT_DECORATION;
    ev.val.decoration.label = wstr_borrow(label);
    if (detail != NULL) {
        ev.val.decoration.detail.is_some = true;
        ev.val.decoration.detail.val = wstr_borrow(detail);
    }
    return progress(&ev);
}

int octet_contribute_context(const char *label, const char *content, octet_placement placement)
{
    octet_extension_host_context_item_t item;
    memset(&item, 0, sizeof item);
    item.label = wstr_borrow(label);
    item.content = wstr_borrow(content);
    item.placement = (uint8_t)placement;
    werror err;
    bool ok = octet_extension_host_contribute_context(&item, &err);
    return host_result(ok, &err);
}

int octet_contribute_status(const char *surface, const char *text, const char *style_role,
                            int32_t priority)
{
    octet_extension_host_status_item_t item;
    memset(&item, 0, sizeof item);
    item.surface = wstr_borrow(surface);
    item.text = wstr_borrow(text);
    if (style_role != NULL) {
        item.style_role.is_some = true;
        item.style_role.val = wstr_borrow(style_role);
    }
    item.priority = priority;
    werror err;
    bool ok = octet_extension_host_contribute_status(&item, &err);
    return host_result(ok, &err);
}

static void vlog(octet_log_level level, const char *fields_json, const char *fmt, va_list ap)
{
    char *message = xvformat(fmt, ap);
    wstr m = wstr_borrow(message);
    wstr f = wstr_borrow(fields_json);
    octet_extension_host_log((uint8_t)level, &m, fields_json ? &f : NULL);
    free(message);
}

void octet_log(octet_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, NULL, fmt, ap);
    va_end(ap);
}

void octet_log_fields(octet_log_level level, const char *fields_json, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fields_json, fmt, ap);
    va_end(ap);
}

bool octet_is_cancelled(void) { return octet_extension_cancellation_is_cancelled(); }

char *octet_cancellation_reason(void)
{
    wstr reason;
    if (!octet_extension_cancellation_reason(&reason))
        return NULL;
    char *text = cstr_of(&reason);
    extension_string_free(&reason);
    return text;
}

bool octet_sleep_ms(uint64_t ms) { return octet_extension_cancellation_sleep(ms); }
/* ------------------------------------------------------------------ */
/* JSON reader                                                          */
/* ------------------------------------------------------------------ */

/* A recursive-descent validator over NUL-terminated text. Every scan_*
 * function advances *p past one token and returns false on invalid input. */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool read_hex4(const char *p, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(p[i]);
        if (d < 0)
            return false;
        v = (v << 4) | (uint32_t)d;
    }
    *out = v;
    return true;
}

static size_t utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decodes one character of a string literal body at *p (not the closing
 * quote) into out, advancing *p. Returns the number of bytes written, or 0
 * when the text is invalid (bad escape, lone surrogate, control character). */
static size_t string_char(const char **p, char out[4])
{
    const char *s = *p;
    unsigned char c = (unsigned char)*s;
    if (c == '\0' || c < 0x20)
        return 0;
    if (c != '\\') {
        out[0] = (char)c;
        *p = s + 1;
        return 1;
    }
    s++;
    char e = *s++;
    switch (e) {
    case '"': out[0] = '"'; break;
    case '\\': out[0] = '\\'; break;
    case '/': out[0] = '/'; break;
    case 'b': out[0] = '\b'; break;
    case 'f': out[0] = '\f'; break;
    case 'n': out[0] = '\n'; break;
    case 'r': out[0] = '\r'; break;
    case 't': out[0] = '\t'; break;
    case 'u': {
        uint32_t cp;
        if (!read_hex4(s, &cp))
            return 0;
        s += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            return 0; /* a lone low surrogate */
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo;
            if (s[0] != '\\' || s[1] != 'u' || !read_hex4(s + 2, &lo) || lo < 0xDC00 ||
                lo > 0xDFFF)
                return 0; /* a high surrogate without its low half */
            s += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        *p = s;
        return utf8_encode(cp, out);
    }
    default:
        return 0;
    }
    *p = s;
    return 1;
}

/* *p at the opening quote; leaves *p after the closing quote. */
static bool scan_string(const char **p)
{
    const char *s = *p + 1;
    char buf[4];
    while (*s != '"') {
        if (string_char(&s, buf) == 0)
            return false;
    }
    *p = s + 1;
    return true;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool scan_number(const char **p)
{
    const char *s = *p;
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (is_digit(*s))
            s++;
    else
        return false;
    if (*s == '.') {
        s++;
        if (!is_digit(*s))
            return false;
        while (is_digit(*s))
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!is_digit(*s))
            return false;
        while (is_digit(*s))
            s++;
    }
    *p = s;
    return true;
}

static bool scan_literal(const char **p, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(*p, word, n) != 0)
        return false;
    *p += n;
    return true;
}

static bool scan_value(const char **p, int depth);

static bool scan_object(const char **p, int depth)
{
    const char *s = skip_ws(*p + 1);
    if (*s == '}') {
        *p = s + 1;
        return true;
    }
    for (;;) {
        if (*s != '"' || !scan_string(&s))
            return false;
        s = skip_ws(s);
        if (*s != ':')
            return false;
        s = skip_ws(s + 1);
        if (!scan_value(&s, depth))
            return false;
        s = skip_ws(s);
        if (*s == '}') {
            *p = s + 1;
            return true;
        }
        if (*s != ',')
            return false;
        s = skip_ws(s + 1);
    }
}

static bool scan_array(const char **p, int depth)
{
    const char *s = skip_ws(*p + 1);
    if (*s == ']') {
        *p = s + 1;
        return true;
    }
    for (;;) {
        if (!scan_value(&s, depth))
            return false;
        s = skip_ws(s);
        if (*s == ']') {
            *p = s + 1;
            return true;
        }
        if (*s != ',')
            return false;
        s = skip_ws(s + 1);
    }
}

/* *p at the first character of a value (no leading white space). */
static bool scan_value(const char **p, int depth)
{
    switch (**p) {
    case '{':
        return depth < OCTET_JSON_MAX_DEPTH && scan_object(p, depth + 1);
    case '[':
        return depth < OCTET_JSON_MAX_DEPTH && scan_array(p, depth + 1);
    case '"':
        return scan_string(p);
    case 't':
        return scan_literal(p, "true");
    case 'f':
        return scan_literal(p, "false");
    case 'n':
        return scan_literal(p, "null");
    default:
        return scan_number(p);
    }
}

bool octet_json_valid(const char *json)
{
    if (json == NULL)
        return false;
    const char *p = skip_ws(json);
    if (!scan_value(&p, 0))
        return false;
    return *skip_ws(p) == '\0';
}

bool octet_json_is_object(const char *json)
{
    return octet_json_valid(json) && *skip_ws(json) == '{';
}

/* Whether the string literal at lit (at its opening quote) unescapes to key. */
static bool key_equals(const char *lit, const char *key)
{
    const char *s = lit + 1;
    char buf[4];
    while (*s != '"') {
        size_t n = string_char(&s, buf);
        for (size_t i = 0; i < n; i++) {
            if (*key == '\0' || *key != buf[i])
                return false;
            key++;
        }
    }
    return *key == '\0';
}

typedef bool (*member_visitor)(const char *key_lit, const char *value, const char *value_end,
                               void *state);

/* Validates json, then calls visit for every member of the top-level object
 * in order until it returns false. */
static octet_json_status each_member(const char *json, member_visitor visit, void *state)
{
    if (!octet_json_valid(json))
        return OCTET_JSON_INVALID;
    const char *s = skip_ws(json);
    if (*s != '{')
        return OCTET_JSON_NOT_OBJECT;
    s = skip_ws(s + 1);
    while (*s == '"') {
        const char *key = s;
        scan_string(&s);
        s = skip_ws(skip_ws(s) + 1); /* past ':' */
        const char *value = s;
        scan_value(&s, 1);
        if (!visit(key, value, s, state))
            break;
        s = skip_ws(s);
        if (*s == ',')
            s = skip_ws(s + 1);
    }
    return OCTET_JSON_OK;
}

struct find_state {
    const char *key;
    const char *value, *value_end;
};

static bool find_visit(const char *key_lit, const char *value, const char *value_end, void *state)
{
    struct find_state *f = state;
    if (key_equals(key_lit, f->key)) {
        f->value = value; /* the last duplicate wins */
        f->value_end = value_end;
    }
    return true;
}

static octet_json_status find_member(const char *json, const char *key, const char **value,
                                     const char **value_end)
{
    struct find_state f = {key, NULL, NULL};
    octet_json_status st = each_member(json, find_visit, &f);
    if (st != OCTET_JSON_OK)
        return st;
    if (f.value == NULL)
        return OCTET_JSON_MISSING;
    if (strncmp(f.value, "null", 4) == 0)
        return OCTET_JSON_NULL;
    *value = f.value;
    *value_end = f.value_end;
    return OCTET_JSON_OK;
}

octet_json_status octet_json_get_string(const char *json, const char *key, char **out)
{
    const char *v, *end;
    octet_json_status st = find_member(json, key, &v, &end);
    if (st != OCTET_JSON_OK)
        return st;
    if (*v != '"')
        return OCTET_JSON_WRONG_TYPE;
    /* Unescaping never lengthens the text. */
    char *text = malloc((size_t)(end - v) + 1);
    if (text == NULL)
        return OCTET_JSON_NO_MEMORY;
    size_t len = 0;
    const char *s = v + 1;
    while (*s != '"') {
        size_t n = string_char(&s, text + len);
        for (size_t i = 0; i < n; i++) {
            if (text[len + i] == '\0') {
                free(text);
                return OCTET_JSON_WRONG_TYPE; /* \u0000 cannot be a C string */
            }
        }
        len += n;
    }
    text[len] = '\0';
    *out = text;
    return OCTET_JSON_OK;
}

octet_json_status octet_json_get_int(const char *json, const char *key, int64_t *out)
{
    const char *v, *end;
    octet_json_status st = find_member(json, key, &v, &end);
    if (st != OCTET_JSON_OK)
        return st;
    if (*v != '-' && !is_digit(*v))
        return OCTET_JSON_WRONG_TYPE;
    bool negative = *v == '-';
    const char *s = negative ? v + 1 : v;
    /* Accumulate as a negative number: int64's range is asymmetric. */
    int64_t acc = 0;
    for (; s < end; s++) {
        if (!is_digit(*s))
            return OCTET_JSON_RANGE; /* a fraction or an exponent */
        int d = *s - '0';
        if (acc < (INT64_MIN + d) / 10)
            return OCTET_JSON_RANGE;
        acc = acc * 10 - d;
    }
    if (!negative) {
        if (acc == INT64_MIN)
            return OCTET_JSON_RANGE;
        acc = -acc;
    }
    *out = acc;
    return OCTET_JSON_OK;
}

octet_json_status octet_json_get_bool(const char *json, const char *key, bool *out)
{
    const char *v, *end;
    octet_json_status st = find_member(json, key, &v, &end);
    if (st != OCTET_JSON_OK)
        return st;
    if (*v == 't')
        *out = true;
    else if (*v == 'f')
        *out = false;
    else
        return OCTET_JSON_WRONG_TYPE;
    return OCTET_JSON_OK;
}

octet_json_status octet_json_get_raw(const char *json, const char *key, char **out)
{
    const char *v, *end;
    struct find_state f = {key, NULL, NULL};
    octet_json_status st = each_member(json, find_visit, &f);
    if (st != OCTET_JSON_OK)
        return st;
    if (f.value == NULL)
        return OCTET_JSON_MISSING;
    v = f.value;
    end = f.value_end;
    char *text = malloc((size_t)(end - v) + 1);
    if (text == NULL)
        return OCTET_JSON_NO_MEMORY;
    memcpy(text, v, (size_t)(end - v));
    text[end - v] = '\0';
    *out = text;
    return OCTET_JSON_OK;
}

struct keys_state {
    const char *const *allowed;
    size_t count;
    const char *unknown;
};

static bool keys_visit(const char *key_lit, const char *value, const char *value_end, void *state)
{
    (void)value;
    (void)value_end;
    struct keys_state *k = state;
    for (size_t i = 0; i < k->count; i++)
        if (key_equals(key_lit, k->allowed[i]))
            return true;
    k->unknown = key_lit;
    return false;
}

octet_json_status octet_json_only_keys(const char *json, const char *const *allowed, size_t count,
                                       char **unknown)
{
    struct keys_state k = {allowed, count, NULL};
    octet_json_status st = each_member(json, keys_visit, &k);
    if (st != OCTET_JSON_OK)
        return st;
    if (k.unknown == NULL)
        return OCTET_JSON_OK;
    if (unknown != NULL) {
        /* Decode the key (no \u0000 check needed: it only names the key). */
        const char *s = k.unknown;
        scan_string(&s);
        char *text = malloc((size_t)(s - k.unknown) + 1);
        if (text != NULL) {
            size_t len = 0;
            const char *c = k.unknown + 1;
            while (*c != '"')
                len += string_char(&c, text + len);
            text[len] = '\0';
        }
        *unknown = text;
    }
    return OCTET_JSON_WRONG_TYPE;
}

const char *octet_json_status_text(octet_json_status status)
{
    switch (status) {
    case OCTET_JSON_OK: return "ok";
    case OCTET_JSON_MISSING: return "missing";
    case OCTET_JSON_NULL: return "null";
    case OCTET_JSON_WRONG_TYPE: return "of the wrong type";
    case OCTET_JSON_RANGE: return "out of range";
    case OCTET_JSON_NOT_OBJECT: return "not a JSON object";
    case OCTET_JSON_INVALID: return "not valid JSON";
    case OCTET_JSON_NO_MEMORY: return "out of memory";
    }
    return "unknown status";
}
