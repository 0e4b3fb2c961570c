/*
 * hello-world (API 0.1): the whole API 0.1 surface in one small extension —
 * a tool, a command, two hooks, context, a status line and a renderer.
 */
#include "octet.h"

/* The name greeted when none is given. */
#define DEFAULT_NAME "tinkerer"

static int hello_world(const char *args, octet_tool_result *res, const octet_call *cx)
{
    (void)cx;
    char *name = NULL;
    octet_json_status st = octet_json_get_string(args, "name", &name);
    if (st == OCTET_JSON_MISSING) {
        name = octet_format("%s", DEFAULT_NAME);
    } else if (st != OCTET_JSON_OK) {
        return octet_invalid_params("name is %s", octet_json_status_text(st));
    }
    if (octet_notify(OCTET_SUCCESS, "hello_world greeted %s", name) != OCTET_OK) {
        free(name);
        return OCTET_ERROR;
    }
    octet_tool_text(res, "Hello, %s!", name);
    free(name);
    return OCTET_OK;
}

static int hello(size_t argc, const char *const *argv, octet_command_result *res,
                 const octet_call *cx)
{
    (void)cx;
    octet_command_text(res, "Hello, %s!", argc > 0 ? argv[0] : DEFAULT_NAME);
    return OCTET_OK;
}

/* before_prompt and after_response: the default result (continue). */
static int proceed(const char *payload, octet_hook_result *res, const octet_call *cx)
{
    (void)payload;
    (void)res;
    (void)cx;
    return OCTET_OK;
}

static int context(const char *prompt, octet_context_list *out, const octet_call *cx)
{
    (void)prompt;
    (void)cx;
    octet_context_add(out, "hello-world", "The hello-world extension is active.",
                      OCTET_SYSTEM_SUFFIX);
    return OCTET_OK;
}

static int status(const char *surface, octet_status_item *out, const octet_call *cx)
{
    (void)surface; /* the item is for the requested surface */
    (void)cx;
    octet_status_show(out, "hello", "extension.hello_world.status", 0);
    return OCTET_OK;
}

static int render(const octet_render *req, octet_segments *out, const octet_call *cx)
{
    (void)cx;
    /* Like the Python original (`output or "waiting"`): empty is no output. */
    const char *output = req->output && *req->output ? req->output : "waiting";
    octet_segment(out, "extension.hello_world.tool", "hello_world \u00b7 %s", output);
    return OCTET_OK;
}

void octet_setup(octet_ext *ext)
{
    octet_name(ext, "hello-world");
    octet_tool(ext, "hello_world", "Greet someone from an executable extension",
               "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"
               "\"required\":[\"name\"],\"additionalProperties\":false}",
               hello_world);
    octet_command(ext, "hello", "Show a greeting notification", "/hello [name]", hello);
    octet_hook(ext, "before_prompt", proceed);
    octet_hook(ext, "after_response", proceed);
    octet_context(ext, context);
    octet_status(ext, "status", status);
    octet_renderer(ext, "hello_world", render);
}
