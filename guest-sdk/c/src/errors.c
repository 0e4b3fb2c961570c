/*
 * The recorded error: what handlers return, what host calls failed with,
 * and how both become the WIT error an export answers.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

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

int record_text(uint8_t tag, char *text)
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
int record_host(werror *err)
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
bool take_outcome(int rc, werror *out)
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

