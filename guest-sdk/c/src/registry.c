/*
 * The registry octet_setup() fills in, and the describe answer built
 * from it.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* The registry                                                         */
/* ------------------------------------------------------------------ */


static octet_ext g_ext;
static bool g_ready;

/* Builds the registry on first use (the first export call, normally
 * describe). */
octet_ext *ext(void)
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

struct tool_reg *octet__find_tool(octet_ext *e, const char *name, bool dynamic)
{
    struct tool_reg *tools = dynamic ? e->dynamic_tools : e->tools;
    size_t n = dynamic ? e->n_dynamic_tools : e->n_tools;
    for (size_t i = 0; i < n; i++)
        if (strcmp(tools[i].name, name) == 0)
            return &tools[i];
    return NULL;
}

static void add_tool(octet_ext *e, bool dynamic, const char *name, const char *description,
                     const char *parameters_json, octet_tool_fn fn)
{
    if (octet__find_tool(e, name, false) || octet__find_tool(e, name, true))
        duplicate("tool", name);
    struct tool_reg *t = dynamic ? PUSH(e->dynamic_tools, e->n_dynamic_tools)
                                 : PUSH(e->tools, e->n_tools);
    t->name = xstrdup(name);
    t->description = xstrdup(description);
    t->parameters = xstrdup(parameters_json ? parameters_json : "{\"type\":\"object\"}");
    t->fn = fn;
}

void octet_tool(octet_ext *e, const char *name, const char *description,
                const char *parameters_json, octet_tool_fn fn)
{
    add_tool(e, false, name, description, parameters_json, fn);
}

void octet_dynamic_tool(octet_ext *e, const char *name, const char *description,
                        const char *parameters_json, octet_tool_fn fn)
{
    add_tool(e, true, name, description, parameters_json, fn);
}

void octet_tool_output_schema(octet_ext *e, const char *tool, const char *schema_json)
{
    struct tool_reg *t = octet__find_tool(e, tool, false);
    if (t == NULL)
        t = octet__find_tool(e, tool, true);
    if (t == NULL) {
        fprintf(stderr, "octet: octet_tool_output_schema: no tool `%s`\n", tool);
        abort();
    }
    free(t->output_schema);
    t->output_schema = xstrdup_opt(schema_json);
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

void octet_uses_progress(octet_ext *e) { octet_uses_feature(e, "request_progress"); }
void octet_uses_progress_decoration(octet_ext *e)
{
    octet_uses_progress(e);
    octet_uses_feature(e, "progress_decoration");
}
void octet_uses_artifacts(octet_ext *e) { octet_uses_feature(e, "artifacts"); }
void octet_uses_dynamic_tools(octet_ext *e) { octet_uses_feature(e, "dynamic_tools"); }
void octet_uses_secrets(octet_ext *e) { octet_uses_feature(e, "secrets"); }
void octet_uses_policy(octet_ext *e) { octet_uses_feature(e, "policy_intents"); }
void octet_uses_approvals(octet_ext *e)
{
    octet_uses_policy(e);
    octet_uses_feature(e, "approvals");
}
void octet_uses_agents(octet_ext *e) { octet_uses_feature(e, "agent_sessions"); }
void octet_uses_composition(octet_ext *e) { octet_uses_feature(e, "tool_composition_v1"); }
void octet_uses_agent_model_selection(octet_ext *e)
{
    octet_uses_agents(e);
    octet_uses_feature(e, "agent_model_selection_v1");
}

/* ------------------------------------------------------------------ */
/* describe                                                             */
/* ------------------------------------------------------------------ */

/* Adds `feature` to the described features unless the extension declared it. */
static void add_feature(extension_list_string_t *features, const octet_ext *e, const char *feature)
{
    for (size_t i = 0; i < e->n_features; i++)
        if (strcmp(e->features[i], feature) == 0)
            return;
    *PUSH(features->ptr, features->len) = wstr_of(feature);
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
#if OCTET_WIT_0_4
        t->prompt_snippet = wopt_of(e->tools[i].prompt_snippet);
        t->prompt_guidelines =
            wlist_of(e->tools[i].prompt_guidelines, e->tools[i].n_prompt_guidelines);
#endif
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
    if (seen != 0)
        add_feature(&ret->features, e, "lifecycle_events");
    /* Tools registered at run time keep their metadata too. */
    bool prompt = false;
    for (size_t i = 0; i < e->n_tools; i++)
        prompt |= octet__has_prompt_metadata(&e->tools[i]);
    for (size_t i = 0; i < e->n_dynamic_tools; i++)
        prompt |= octet__has_prompt_metadata(&e->dynamic_tools[i]);
    if (prompt)
        add_feature(&ret->features, e, "tool_prompt_metadata_v1");
}

