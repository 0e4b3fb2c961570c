/*
 * The C SDK's composition test guest (tests/e2e/sdk_api_04.rs): a tool that
 * reads the composition context, calls `read` through octet and commits
 * the store, a command that tries to compose (refused: only a model tool
 * call may), and a tool that reads a streaming call's partial results, then
 * its value.
 */
#include <stdlib.h>

#include "octet.h"

static int compose(const char *args, octet_tool_result *res, const octet_call *cx)
{
    (void)cx;
    const char *path = octet_arg_string(args, "path");
    if (path == NULL)
        return octet_invalid_params("path must be a string");
    char *context = NULL, *limits = NULL, *value = NULL;
    int64_t max_calls = 0;
    int rc = octet_composition_context(&context);
    if (rc != OCTET_OK)
        return rc;
    if (octet_json_get_raw(context, "limits", &limits) != OCTET_JSON_OK ||
        octet_json_get_int(limits, "max_calls", &max_calls) != OCTET_JSON_OK) {
        free(context);
        free(limits);
        return octet_failed("the composition context has no limits.max_calls");
    }
    char *quoted = octet_json_quote(path);
    char *arguments = octet_format("{\"path\":%s}", quoted);
    rc = octet_composition_call("read", arguments, &value);
    free(arguments);
    if (rc == OCTET_OK) {
        const char *keys[] = {"last", "count"};
        char *count = octet_format("%lld", (long long)max_calls);
        const char *values[] = {quoted, count};
        const char *stale[] = {"stale"};
        rc = octet_composition_store(keys, values, 2, stale, 1);
        free(count);
    }
    free(quoted);
    if (rc == OCTET_OK)
        rc = octet_tool_text(res, "%s", value);
    free(context);
    free(limits);
    free(value);
    return rc;
}

/* Grep through octet, reading its partial results, then its value, as
 * {"updates": [[sequence, result], ...], "value": value}. */
static int stream(const char *args, octet_tool_result *res, const octet_call *cx)
{
    (void)args;
    (void)cx;
    octet_streaming_call *call = NULL;
    int rc = octet_composition_call_streaming("grep", "{\"pattern\":\"TODO\"}", &call);
    if (rc != OCTET_OK)
        return rc;
    char *updates = octet_format("%s", "");
    uint64_t sequence = 0;
    char *result = NULL;
    while (octet_streaming_call_next(call, &sequence, &result)) {
        char *more = octet_format("%s%s[%llu,%s]", updates, *updates ? "," : "",
                                  (unsigned long long)sequence, result);
        free(updates);
        free(result);
        updates = more;
    }
    char *value = NULL;
    rc = octet_streaming_call_finish(call, &value);
    if (rc == OCTET_OK)
        rc = octet_tool_text(res, "{\"updates\":[%s],\"value\":%s}", updates, value);
    free(updates);
    free(value);
    return rc;
}

static int compose_command(size_t argc, const char *const *argv, octet_command_result *res,
                           const octet_call *cx)
{
    (void)argc;
    (void)argv;
    (void)cx;
    char *value = NULL;
    int rc = octet_composition_call("read", "{\"path\":\"x\"}", &value);
    free(value);
    if (rc != OCTET_OK)
        return rc;
    octet_command_text(res, "composed");
    return OCTET_OK;
}

void octet_setup(octet_ext *ext)
{
    octet_name(ext, "compose");
    octet_uses_composition(ext);
    octet_tool(ext, "compose", "Compose with read", NULL, compose);
    octet_tool(ext, "stream", "Grep through octet, reading its partial results", NULL, stream);
    octet_command(ext, "compose", "Compose from a command", NULL, compose_command);
}
