/*
 * internal.h: what the C SDK's source files share and nothing else sees.
 * Every shared helper keeps a short name in the sources and is linked as
 * octet__<name>, so it cannot collide with the extension's own symbols
 * (which are compiled into the same module).
 */
#ifndef OCTET_INTERNAL_H
#define OCTET_INTERNAL_H

#include "octet.h"

#include <stdarg.h>

#include "extension.h"

/* 1 when the bindings are octet:extension@0.4.0's (an API 0.4 manifest;
 * scripts/build-guests-c generates them from wit/0.4.0), 0 for 0.2.0's.
 * Told apart by a type only 0.4.0 has, so it always matches the bindings
 * compiled in. */
#ifdef OCTET_EXTENSION_TYPES_CACHE_WARMING_ACTION_WARM
#define OCTET_WIT_0_4 1
#else
#define OCTET_WIT_0_4 0
#endif

#define xrealloc octet__xrealloc
#define xstrdup octet__xstrdup
#define xstrdup_opt octet__xstrdup_opt
#define push octet__push
#define wstr_of octet__wstr_of
#define wstr_take octet__wstr_take
#define wopt_of octet__wopt_of
#define wstr_borrow octet__wstr_borrow
#define cstr_of octet__cstr_of
#define arena_keep octet__arena_keep
#define arena_cstr octet__arena_cstr
#define arena_opt octet__arena_opt
#define arena_release octet__arena_release
#define xvformat octet__xvformat
#define wlist_of octet__wlist_of
#define record_text octet__record_text
#define record_host octet__record_host
#define take_outcome octet__take_outcome
#define ext octet__ext
#define call_of octet__call_of
#define begin octet__begin
#define end octet__end
#define unknown octet__unknown
#define add_notification octet__add_notification
#define add_context octet__add_context
#define host_result octet__host_result
#define sb_init octet__sb_init
#define sb_add octet__sb_add
#define sb_addf octet__sb_addf
#define sb_json_string octet__sb_json_string
#define sb_json_wstr octet__sb_json_wstr
#define sb_json_raw octet__sb_json_raw
#define sb_finish octet__sb_finish
#define owned_list octet__owned_list

typedef extension_string_t wstr;
typedef octet_extension_types_error_t werror;

/* Allocation (util.c). Out of memory is a trap: the shim answers the
 * request and replaces the instance. */
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrdup_opt(const char *s);
/* Grows *arr by one zeroed element of `size` bytes and returns it. */
void *push(void *arr_ptr, size_t *len, size_t size);
#define PUSH(arr, len) ((__typeof__(&(arr)[0]))push(&(arr), &(len), sizeof *(arr)))
/* vformat that traps instead of returning NULL. */
char *xvformat(const char *fmt, va_list ap);

/* WIT strings (util.c): to return (malloc'd, {NULL, 0} when empty), taken
 * over from a malloc'd C string, optional, borrowed for an import, and back
 * to a malloc'd C string. */
wstr wstr_of(const char *s);
wstr wstr_take(char *s);
extension_option_string_t wopt_of(const char *s);
wstr wstr_borrow(const char *s);
char *cstr_of(const wstr *w);
extension_list_string_t wlist_of(char *const *items, size_t n);
/* NUL-terminated copies of n borrowed C strings as a WIT list to pass to an
 * import (borrowed views; the list array itself is malloc'd). */
extension_list_string_t owned_list(const char *const *items, size_t n);

/* The per-call arena (util.c): C strings handed to a handler live until
 * the export returns. */
const char *arena_keep(char *s);
const char *arena_cstr(const wstr *w);
const char *arena_opt(const extension_option_string_t *o);
void arena_release(void);

/* A growing string for the JSON the SDK writes (util.c). */
typedef struct sb {
    char *s;
    size_t len, cap;
} sb;
void sb_init(sb *b);
void sb_add(sb *b, const char *text);
void sb_addf(sb *b, const char *fmt, ...) OCTET_PRINTF(2, 3);
/* A JSON string literal of C text / WIT text. */
void sb_json_string(sb *b, const char *text);
void sb_json_wstr(sb *b, const wstr *w);
/* JSON text from the shim, or null when it is not valid JSON. */
void sb_json_raw(sb *b, const wstr *w);
char *sb_finish(sb *b);

/* Errors (errors.c). */
int record_text(uint8_t tag, char *text);
/* Records an error a host import returned (taking it over). */
int record_host(werror *err);
/* The outcome of a handler: false with *out filled when it failed. */
bool take_outcome(int rc, werror *out);
/* Finishes a host call: OCTET_OK, or OCTET_ERROR with err recorded. */
int host_result(bool ok, werror *err);

/* The registry (registry.c). */
struct tool_reg {
    char *name, *description, *parameters, *output_schema;
    /* API 0.4 prompt metadata (prompt.c): NULL / none when unset. */
    char *prompt_snippet;
    char **prompt_guidelines;
    size_t n_prompt_guidelines;
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
    /* Offered only once octet_tools_catalog_register_dynamic() adds them. */
    struct tool_reg *dynamic_tools;
    size_t n_dynamic_tools;
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

/* The registry, built on first use (the first export call, normally
 * describe). */
octet_ext *ext(void);
/* A registered tool (initial or dynamic) by name, or NULL. */
struct tool_reg *octet__find_tool(octet_ext *e, const char *name, bool dynamic);

/* Prompt metadata (prompt.c): why text breaks the host's bounds (malloc'd),
 * or NULL when it is within them; whether a tool carries any. */
char *octet__prompt_text_problem(const char *text);
bool octet__has_prompt_metadata(const struct tool_reg *t);

/* What a hook handler fills in (exports.c; the 0.4 members in hooks04.c). */
struct octet_hook_result {
    octet_extension_types_hook_result_t r;
};

/* Exports (exports.c). */
octet_call call_of(const exports_octet_extension_guest_call_context_t *cx);
void begin(void);
bool end(bool ok);
int unknown(const char *what, const char *name);
void add_notification(octet_extension_types_list_notification_t *list, octet_notify_level level,
                      const char *title, const char *message);
void add_context(octet_extension_types_list_context_item_t *list, const char *label,
                 const char *content, octet_placement placement);

#endif /* OCTET_INTERNAL_H */
