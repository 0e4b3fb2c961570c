/*
 * hello-delay (API 0.2): the cancellation reference. One tool, `hello`,
 * that validates its own arguments and waits cooperatively, stopping as soon
 * as the request is cancelled.
 */
#include "octet.h"

/* Longest name accepted, in characters (the schema's maxLength). */
#define MAX_NAME_CHARS 256
/* Longest delay accepted, in milliseconds (the schema's maximum). */
#define MAX_DELAY_MS 5000
/* How long one cooperative wait lasts; the host's sleep also returns early
 * on cancellation, so this only bounds each import call. */
#define STEP_MS 50

/* Reads and checks the arguments like the schema would; unknown members are
 * refused (additionalProperties: false). On success *name is malloc'd. */
static int parse_args(const char *args, char **name, int64_t *delay_ms)
{
    static const char *const known[] = {"name", "delay_ms"};
    char *unknown = NULL;
    octet_json_status st = octet_json_only_keys(args, known, 2, &unknown);
    if (st == OCTET_JSON_WRONG_TYPE) {
        int rc = octet_invalid_params("unknown field `%s`, expected `name` or `delay_ms`",
                                      unknown ? unknown : "?");
        free(unknown);
        return rc;
    }
    if (st != OCTET_JSON_OK)
        return octet_invalid_params("the arguments are %s", octet_json_status_text(st));

    st = octet_json_get_string(args, "name", name);
    if (st == OCTET_JSON_MISSING)
        return octet_invalid_params("missing field `name`");
    if (st != OCTET_JSON_OK)
        return octet_invalid_params("name must be a string");
    if (octet_utf8_chars(*name) > MAX_NAME_CHARS) {
        free(*name);
        *name = NULL;
        return octet_invalid_params("name must be at most %d characters", MAX_NAME_CHARS);
    }

    *delay_ms = 0;
    st = octet_json_get_int(args, "delay_ms", delay_ms);
    if (st == OCTET_JSON_MISSING)
        return OCTET_OK;
    if (st != OCTET_JSON_OK || *delay_ms < 0 || *delay_ms > MAX_DELAY_MS) {
        free(*name);
        *name = NULL;
        return octet_invalid_params("delay_ms must be an integer from 0 to %d", MAX_DELAY_MS);
    }
    return OCTET_OK;
}

static int hello(const char *args, octet_tool_result *res, const octet_call *cx)
{
    (void)cx;
    char *name = NULL;
    int64_t delay_ms = 0;
    if (parse_args(args, &name, &delay_ms) != OCTET_OK)
        return OCTET_ERROR;
    /* Wait in small steps; octet_sleep returns true once cancelled. */
    for (int64_t left = delay_ms; left > 0; left -= STEP_MS) {
        if (octet_sleep((uint64_t)(left < STEP_MS ? left : STEP_MS))) {
            free(name);
            return octet_cancelled();
        }
    }
    octet_tool_text(res, "Hello, %s!", name);
    free(name);
    return OCTET_OK;
}

void octet_setup(octet_ext *ext)
{
    octet_name(ext, "hello-delay");
    octet_tool(ext, "hello", "Return a local greeting",
               "{\"type\":\"object\",\"properties\":{"
               "\"name\":{\"type\":\"string\",\"maxLength\":256},"
               "\"delay_ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":5000,\"default\":0}},"
               "\"required\":[\"name\"],\"additionalProperties\":false}",
               hello);
}
