/*
 * The exports for the frontend and the lifecycle: context/collect,
 * status/collect, tool/render, menu/collect, lifecycle events, shutdown.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

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
            const char *why = octet_has_error() ? octet_error_message() : "failed";
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

