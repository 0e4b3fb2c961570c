/*
 * Tool composition (API 0.4, tool_composition_v1): from inside a tool
 * handler, call the session's other tools through octet and commit the
 * session's composition store (docs/api-0.4.md#v04-composition).
 *
 * Values travel as JSON text, as octet has them. Only a model tool call may
 * compose; the shim refuses the rest, enforces octet's bounds and reads the
 * sidecar files octet uses for large values. Only octet:extension@0.4.0 has
 * the interface: in a 0.2.0 build every function fails with the fix (a
 * tool then answers that sentence), and the component does not import it.
 */
#include "internal.h"

#include <string.h>

struct octet_streaming_call {
#if OCTET_WIT_0_4
    octet_extension_composition_own_pending_call_t handle;
#endif
    int unused;
};

static void composition_clear(char **out)
{
    if (out != NULL)
        *out = NULL;
}

#if OCTET_WIT_0_4

int octet_composition_context(char **context_json)
{
    composition_clear(context_json);
    octet_extension_composition_composition_context_t cx;
    werror err;
    if (!octet_extension_composition_context(&cx, &err))
        return host_result(false, &err);
    sb b;
    sb_init(&b);
    sb_add(&b, "{\"tools\":");
    sb_json_raw(&b, &cx.tools);
    sb_add(&b, ",\"store\":");
    sb_json_raw(&b, &cx.store);
    sb_addf(&b, ",\"limits\":{\"timeout_ms\":%llu,\"max_calls\":%lu}}",
            (unsigned long long)cx.limits.timeout_ms, (unsigned long)cx.limits.max_calls);
    octet_extension_composition_composition_context_free(&cx);
    *context_json = sb_finish(&b);
    return OCTET_OK;
}

static int call(const char *name, const char *arguments_json, bool full, char **out)
{
    composition_clear(out);
    wstr n = wstr_borrow(name);
    wstr a = wstr_borrow(arguments_json ? arguments_json : "{}");
    wstr ret;
    werror err;
    if (!octet_extension_composition_call(&n, &a, full, &ret, &err))
        return host_result(false, &err);
    *out = cstr_of(&ret);
    extension_string_free(&ret);
    return OCTET_OK;
}

int octet_composition_call(const char *name, const char *arguments_json, char **value_json)
{
    return call(name, arguments_json, false, value_json);
}

int octet_composition_call_outcome(const char *name, const char *arguments_json,
                                   char **outcome_json)
{
    return call(name, arguments_json, true, outcome_json);
}

int octet_composition_store(const char *const *keys, const char *const *values_json,
                            size_t n_set, const char *const *delete_keys, size_t n_delete)
{
    octet_extension_composition_list_tuple2_string_json_t set = {NULL, 0};
    for (size_t i = 0; i < n_set; i++) {
        octet_extension_composition_tuple2_string_json_t *t = PUSH(set.ptr, set.len);
        t->f0 = wstr_borrow(keys[i]);
        t->f1 = wstr_borrow(values_json[i]);
    }
    extension_list_string_t remove = owned_list(delete_keys, n_delete);
    werror err;
    bool ok = octet_extension_composition_store(&set, &remove, &err);
    free(set.ptr);
    free(remove.ptr);
    return host_result(ok, &err);
}

static int start(const char *name, const char *arguments_json, bool full,
                 octet_streaming_call **out)
{
    *out = NULL;
    wstr n = wstr_borrow(name);
    wstr a = wstr_borrow(arguments_json ? arguments_json : "{}");
    octet_extension_composition_own_pending_call_t handle;
    werror err;
    if (!octet_extension_composition_start_call(&n, &a, full, &handle, &err))
        return host_result(false, &err);
    octet_streaming_call *c = xrealloc(NULL, sizeof *c);
    c->handle = handle;
    *out = c;
    return OCTET_OK;
}

int octet_composition_call_streaming(const char *name, const char *arguments_json,
                                     octet_streaming_call **call_out)
{
    return start(name, arguments_json, false, call_out);
}

int octet_composition_call_outcome_streaming(const char *name, const char *arguments_json,
                                             octet_streaming_call **call_out)
{
    return start(name, arguments_json, true, call_out);
}

bool octet_streaming_call_next(octet_streaming_call *c, uint64_t *sequence, char **result_json)
{
    composition_clear(result_json);
    if (c == NULL)
        return false;
    octet_extension_composition_composition_update_t update;
    if (!octet_extension_composition_method_pending_call_next_update(
            octet_extension_composition_borrow_pending_call(c->handle), &update))
        return false;
    if (sequence != NULL)
        *sequence = update.sequence;
    if (result_json != NULL)
        *result_json = cstr_of(&update.result);
    octet_extension_composition_composition_update_free(&update);
    return true;
}

int octet_streaming_call_finish(octet_streaming_call *c, char **value_json)
{
    composition_clear(value_json);
    if (c == NULL)
        return octet_failed("no composition call to finish");
    wstr ret;
    werror err;
    bool ok = octet_extension_composition_method_pending_call_finish(
        octet_extension_composition_borrow_pending_call(c->handle), &ret, &err);
    octet_streaming_call_abandon(c);
    if (!ok)
        return host_result(false, &err);
    *value_json = cstr_of(&ret);
    extension_string_free(&ret);
    return OCTET_OK;
}

void octet_streaming_call_abandon(octet_streaming_call *c)
{
    if (c != NULL) {
        octet_extension_composition_pending_call_drop_own(c->handle);
        free(c);
    }
}

#else /* octet:extension@0.2.0 */

static int composition_needs_0_4(void)
{
    return octet_failed("tool composition needs API 0.4: set api_version = \"0.4\" in "
                        "extension.toml and rebuild (this build uses octet:extension@0.2.0, "
                        "which has no composition interface)");
}

int octet_composition_context(char **context_json)
{
    composition_clear(context_json);
    return composition_needs_0_4();
}
int octet_composition_call(const char *name, const char *arguments_json, char **value_json)
{
    composition_clear(value_json);
    return composition_needs_0_4();
}
int octet_composition_call_outcome(const char *name, const char *arguments_json,
                                   char **outcome_json)
{
    composition_clear(outcome_json);
    return composition_needs_0_4();
}
int octet_composition_store(const char *const *keys, const char *const *values_json,
                            size_t n_set, const char *const *delete_keys, size_t n_delete)
{
    return composition_needs_0_4();
}
int octet_composition_call_streaming(const char *name, const char *arguments_json,
                                     octet_streaming_call **call_out)
{
    *call_out = NULL;
    return composition_needs_0_4();
}
int octet_composition_call_outcome_streaming(const char *name, const char *arguments_json,
                                             octet_streaming_call **call_out)
{
    *call_out = NULL;
    return composition_needs_0_4();
}
bool octet_streaming_call_next(octet_streaming_call *c, uint64_t *sequence, char **result_json)
{
    composition_clear(result_json);
    return false;
}
int octet_streaming_call_finish(octet_streaming_call *c, char **value_json)
{
    composition_clear(value_json);
    return composition_needs_0_4();
}
void octet_streaming_call_abandon(octet_streaming_call *c) { free(c); }

#endif
