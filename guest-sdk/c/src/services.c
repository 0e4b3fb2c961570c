/*
 * The API 0.2 service imports other than child agents: artifacts, the
 * dynamic tool catalog, secrets, policy intents and presentation snapshots.
 * Each takes borrowed arguments, frees what the import returned, and
 * records the error of a refused call (see host_result).
 */
#include "internal.h"

#include <string.h>

int octet_artifacts_publish(const char *mime_type, const void *data, size_t len,
                            char **artifact_id)
{
    wstr mime = wstr_borrow(mime_type);
    extension_list_u8_t bytes = {(uint8_t *)data, len};
    wstr id = {NULL, 0};
    werror err;
    bool ok = octet_extension_artifacts_publish(&mime, &bytes, &id, &err);
    if (artifact_id != NULL)
        *artifact_id = ok ? cstr_of(&id) : NULL;
    if (ok)
        extension_string_free(&id);
    return host_result(ok, &err);
}

/* Tool catalog -------------------------------------------------------- */

static void take_update(octet_extension_tools_catalog_catalog_update_t *wit, octet_catalog_update *out)
{
    if (out != NULL) {
        memset(out, 0, sizeof *out);
        out->revision = wit->revision;
        for (size_t i = 0; i < wit->tools.len; i++)
            *PUSH(out->tools, out->n_tools) = cstr_of(&wit->tools.ptr[i]);
    }
    octet_extension_tools_catalog_catalog_update_free(wit);
}

void octet_catalog_update_free(octet_catalog_update *update)
{
    for (size_t i = 0; i < update->n_tools; i++)
        free(update->tools[i]);
    free(update->tools);
    memset(update, 0, sizeof *update);
}

int octet_tools_catalog_register_dynamic(const char *const *names, size_t count,
                                         octet_catalog_update *out)
{
    octet_ext *e = ext();
    octet_extension_tools_catalog_list_tool_definition_t defs = {NULL, 0};
    for (size_t i = 0; i < count; i++) {
        struct tool_reg *t = octet__find_tool(e, names[i], true);
        if (t == NULL) {
            free(defs.ptr);
            return octet_invalid_params("no dynamic tool named %s is registered", names[i]);
        }
        octet_extension_tools_catalog_tool_definition_t *d = PUSH(defs.ptr, defs.len);
        d->name = wstr_borrow(t->name);
        d->description = wstr_borrow(t->description);
        d->parameters = wstr_borrow(t->parameters);
        if (t->output_schema != NULL) {
            d->output_schema.is_some = true;
            d->output_schema.val = wstr_borrow(t->output_schema);
        }
#if OCTET_WIT_0_4
        if (t->prompt_snippet != NULL) {
            d->prompt_snippet.is_some = true;
            d->prompt_snippet.val = wstr_borrow(t->prompt_snippet);
        }
        d->prompt_guidelines =
            owned_list((const char *const *)t->prompt_guidelines, t->n_prompt_guidelines);
#endif
    }
    octet_extension_tools_catalog_catalog_update_t update;
    werror err;
    bool ok = octet_extension_tools_catalog_register(&defs, &update, &err);
#if OCTET_WIT_0_4
    for (size_t i = 0; i < defs.len; i++)
        free(defs.ptr[i].prompt_guidelines.ptr);
#endif
    free(defs.ptr);
    if (ok)
        take_update(&update, out);
    return host_result(ok, &err);
}

int octet_tools_catalog_unregister(const char *const *names, size_t count,
                                   octet_catalog_update *out)
{
    extension_list_string_t list = owned_list(names, count);
    octet_extension_tools_catalog_catalog_update_t update;
    werror err;
    bool ok = octet_extension_tools_catalog_unregister(&list, &update, &err);
    free(list.ptr);
    if (ok)
        take_update(&update, out);
    return host_result(ok, &err);
}

void octet_tools_catalog_current(octet_catalog_update *out)
{
    octet_extension_tools_catalog_catalog_update_t update;
    octet_extension_tools_catalog_current(&update);
    take_update(&update, out);
}

/* Secrets --------------------------------------------------------------- */

int octet_secrets_get(const char *name, char **value)
{
    wstr n = wstr_borrow(name);
    wstr secret = {NULL, 0};
    werror err;
    bool ok = octet_extension_secrets_get(&n, &secret, &err);
    if (value != NULL)
        *value = ok ? cstr_of(&secret) : NULL;
    if (ok) {
        /* The value should not outlive its use in freed heap memory. */
        if (secret.len > 0)
            memset(secret.ptr, 0, secret.len);
        extension_string_free(&secret);
    }
    return host_result(ok, &err);
}

/* Policy ------------------------------------------------------------------ */

static extension_option_bool_t hint(octet_hint h)
{
    extension_option_bool_t o = {h != OCTET_UNSET, h == OCTET_YES};
    return o;
}

int octet_policy_evaluate(const octet_intent *intent, const char *approval_token,
                          octet_decision *decision, char **token_out)
{
    octet_extension_policy_intent_t wit;
    memset(&wit, 0, sizeof wit);
    wit.kind = wstr_borrow(intent->kind);
    wit.operation = wstr_borrow(intent->operation);
    wit.target = wstr_borrow(intent->target_json ? intent->target_json : "{}");
    wit.data_classes = owned_list(intent->data_classes, intent->n_data_classes);
    wit.read_only = hint(intent->read_only);
    wit.destructive = hint(intent->destructive);
    wstr token = wstr_borrow(approval_token);
    octet_extension_policy_verdict_t verdict;
    werror err;
    bool ok = octet_extension_policy_evaluate(&wit, approval_token ? &token : NULL, &verdict, &err);
    free(wit.data_classes.ptr);
    if (token_out != NULL)
        *token_out = NULL;
    if (ok) {
        if (decision != NULL)
            *decision = (octet_decision)verdict.decision;
        if (token_out != NULL && verdict.approval_token.is_some)
            *token_out = cstr_of(&verdict.approval_token.val);
        octet_extension_policy_verdict_free(&verdict);
    }
    return host_result(ok, &err);
}

/* Presentation ---------------------------------------------------------------- */

static int update(const char *snapshot_json, const octet_resource_owner *owner)
{
    wstr snapshot = wstr_borrow(snapshot_json);
    octet_extension_presentation_resource_owner_t wit;
    if (owner != NULL) {
        wit.session_id = wstr_borrow(owner->session_id);
        wit.extension_instance_id = wstr_borrow(owner->extension_instance_id);
        wit.process_generation = owner->process_generation;
    }
    werror err;
    bool ok = octet_extension_presentation_update(&snapshot, owner ? &wit : NULL, &err);
    return host_result(ok, &err);
}

int octet_presentation_update(const char *snapshot_json) { return update(snapshot_json, NULL); }

int octet_presentation_update_for(const octet_resource_owner *owner, const char *snapshot_json)
{
    if (owner == NULL || owner->session_id == NULL || owner->extension_instance_id == NULL)
        return octet_invalid_params("octet_presentation_update_for needs a complete resource owner");
    return update(snapshot_json, owner);
}
