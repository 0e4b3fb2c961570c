/*
 * The host imports of octet.h: notifications, confirmations, input,
 * progress, contributions, logs and cancellation.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Host services                                                        */
/* ------------------------------------------------------------------ */

/* Finishes a host call: false means err holds the host's error. */
int host_result(bool ok, werror *err)
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

int octet_progress_output(octet_output_stream stream, const void *data, size_t len)
{
    octet_extension_host_progress_event_t ev;
    memset(&ev, 0, sizeof ev);
    ev.tag = OCTET_EXTENSION_TYPES_PROGRESS_EVENT_OUTPUT;
    ev.val.output.stream = stream == OCTET_STDERR ? OCTET_EXTENSION_TYPES_OUTPUT_STREAM_STDERR
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

bool octet_sleep(uint64_t ms) { return octet_extension_cancellation_sleep(ms); }

int octet_check_cancelled(void) { return octet_is_cancelled() ? octet_cancelled() : OCTET_OK; }
