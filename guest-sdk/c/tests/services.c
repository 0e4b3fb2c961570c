/*
 * The C SDK's service wrappers end to end: a test guest (not an example)
 * that tests/e2e/sdk_services.rs runs through the real binary, with the
 * JavaScript twin guest-sdk/js/test/guest/services.js answering every tool
 * word for word the same. Built by `scripts/build-guests-c services` into
 * target/components/c/services.wasm.
 *
 * Each tool calls one service with its arguments and answers JSON (the
 * SDK's own JSON for agents).
 */
#include <stdio.h>
#include <string.h>

#include "octet.h"

static int64_t int_arg(const char *args, const char *key)
{
    int64_t n = 0;
    octet_arg_int(args, key, &n);
    return n;
}

/* Answers the malloc'd JSON an SDK call produced, or its error. */
static int answer(int rc, char *json, octet_tool_result *res)
{
    if (rc == OCTET_OK)
        octet_tool_text(res, "%s", json);
    free(json);
    return rc;
}

static unsigned agent_tools(const char *list)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"read", OCTET_AGENT_READ},   {"search", OCTET_AGENT_SEARCH},
                 {"edit", OCTET_AGENT_EDIT},   {"write", OCTET_AGENT_WRITE},
                 {"bash", OCTET_AGENT_BASH}};
    unsigned bits = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        for (size_t i = 0; i < 5; i++)
            if (strlen(names[i].name) == n && strncmp(p, names[i].name, n) == 0)
                bits |= names[i].bit;
        p += n;
        if (*p == ',')
            p++;
    }
    return bits;
}

static int spawn(const char *args, octet_tool_result *res, const octet_call *cx)
{
    octet_spawn req;
    memset(&req, 0, sizeof req);
    req.task_name = octet_arg_string(args, "task_name");
    req.message = octet_arg_string(args, "message");
    req.idempotency_key = octet_arg_string(args, "idempotency_key");
    req.profile = octet_arg_string(args, "profile");
    req.policy.tools = agent_tools(octet_arg_string(args, "tools"));
    req.policy.max_turns = (uint32_t)int_arg(args, "max_turns");
    req.policy.timeout_ms = (uint64_t)int_arg(args, "timeout_ms");
    req.policy.max_concurrent_children = (uint32_t)int_arg(args, "max_concurrent_children");
    req.policy.model = octet_arg_string(args, "model");
    char *json = NULL;
    return answer(octet_agents_spawn(&req, &json), json, res);
}

static int send(const char *args, octet_tool_result *res, const octet_call *cx)
{
    char *json = NULL;
    int rc = octet_agents_send(octet_arg_string(args, "target"), octet_arg_string(args, "message"),
                               &json);
    return answer(rc, json, res);
}

static int follow_up(const char *args, octet_tool_result *res, const octet_call *cx)
{
    char *json = NULL;
    int rc = octet_agents_follow_up(octet_arg_string(args, "target"),
                                    octet_arg_string(args, "message"), &json);
    return answer(rc, json, res);
}

static int list(const char *args, octet_tool_result *res, const octet_call *cx)
{
    char *json = NULL;
    return answer(octet_agents_list(&json), json, res);
}

static int wait(const char *args, octet_tool_result *res, const octet_call *cx)
{
    char *json = NULL;
    return answer(octet_agents_wait((uint32_t)int_arg(args, "timeout_ms"), &json), json, res);
}

static int interrupt(const char *args, octet_tool_result *res, const octet_call *cx)
{
    char *json = NULL;
    return answer(octet_agents_interrupt(octet_arg_string(args, "target"), &json), json, res);
}

static int models(const char *args, octet_tool_result *res, const octet_call *cx)
{
    char *json = NULL;
    int rc = octet_agents_list_models(octet_arg_string(args, "query"),
                                      (uint32_t)int_arg(args, "limit"), &json);
    return answer(rc, json, res);
}

static int active(const char *args, octet_tool_result *res, const octet_call *cx)
{
    bool yes = octet_agents_is_active(octet_arg_string(args, "state"));
    return octet_tool_text(res, "{\"active\":%s}", yes ? "true" : "false");
}

/* The value never leaves the guest: only its length does. */
static int secret(const char *args, octet_tool_result *res, const octet_call *cx)
{
    char *value = NULL;
    if (octet_secrets_get(octet_arg_string(args, "name"), &value) != OCTET_OK)
        return OCTET_ERROR;
    octet_tool_text(res, "{\"bytes\":%zu}", strlen(value));
    free(value);
    return OCTET_OK;
}

static int policy(const char *args, octet_tool_result *res, const octet_call *cx)
{
    /* data_classes is a comma-separated list; at most 8 here. */
    const char *classes[8];
    size_t n = 0;
    char *copy = octet_format("%s", octet_arg_string(args, "data_classes"));
    for (char *p = copy; p && *p && n < 8;) {
        classes[n++] = p;
        p = strchr(p, ',');
        if (p)
            *p++ = '\0';
    }
    char *target = NULL;
    octet_json_get_raw(args, "target", &target);
    bool destructive = false;
    octet_intent intent = {
        .kind = octet_arg_string(args, "kind"),
        .operation = octet_arg_string(args, "operation"),
        .target_json = target,
        .data_classes = classes,
        .n_data_classes = n,
        .read_only = OCTET_UNSET,
        .destructive = octet_arg_bool(args, "destructive", &destructive)
                           ? (destructive ? OCTET_YES : OCTET_NO)
                           : OCTET_UNSET,
    };
    octet_decision decision = OCTET_DENY;
    char *token = NULL;
    int rc = octet_policy_evaluate(&intent, octet_arg_string(args, "token"), &decision, &token);
    free(copy);
    free(target);
    if (rc != OCTET_OK)
        return OCTET_ERROR;
    static const char *const names[] = {"allow", "ask", "deny"};
    char *quoted = token ? octet_json_quote(token) : NULL;
    octet_tool_text(res, "{\"decision\":\"%s\",\"approval_token\":%s}", names[decision],
                    quoted ? quoted : "null");
    free(quoted);
    free(token);
    return OCTET_OK;
}

static int ask(const char *args, octet_tool_result *res, const octet_call *cx)
{
    bool confirmed = false, secret_input = false;
    if (octet_confirm(octet_arg_string(args, "prompt"), octet_arg_string(args, "detail"), true, true,
                      &confirmed) != OCTET_OK)
        return OCTET_ERROR;
    octet_arg_bool(args, "secret", &secret_input);
    char *input = NULL;
    if (octet_request_input(octet_arg_string(args, "input_prompt"), secret_input, &input) != OCTET_OK)
        return OCTET_ERROR;
    char *quoted = input ? octet_json_quote(input) : NULL;
    octet_tool_text(res, "{\"confirmed\":%s,\"input\":%s}", confirmed ? "true" : "false",
                    quoted ? quoted : "null");
    free(quoted);
    free(input);
    return OCTET_OK;
}

static int report(const char *args, octet_tool_result *res, const octet_call *cx)
{
    if (octet_progress("indexing") || octet_progress_step(3, 10, "files", "indexing") ||
        octet_progress_output(OCTET_STDERR, "\xc3\xa9\n", 3) ||
        octet_progress_decoration("Building", "step 1") ||
        octet_notify_titled(OCTET_WARNING, "Disk", "almost full") ||
        octet_contribute_context("branch", "main", OCTET_SYSTEM_PREFIX) ||
        octet_contribute_status("status", "indexed", "extension.sdk.ok", 3))
        return OCTET_ERROR;
    octet_log_fields(OCTET_LOG_INFO, "{\"n\":2}", "reported");
    return octet_tool_text(res, "reported");
}

static void update_json(char **out, const octet_catalog_update *u)
{
    char *names = octet_format("%s", "");
    for (size_t i = 0; i < u->n_tools; i++) {
        char *quoted = octet_json_quote(u->tools[i]);
        char *more = octet_format("%s%s%s", names, i ? "," : "", quoted);
        free(names);
        free(quoted);
        names = more;
    }
    *out = octet_format("{\"revision\":%llu,\"tools\":[%s]}", (unsigned long long)u->revision,
                        names);
    free(names);
}

static int catalog(const char *args, octet_tool_result *res, const octet_call *cx)
{
    const char *names[8];
    size_t n = 0;
    char *copy = octet_format("%s", octet_arg_string(args, "names"));
    for (char *p = copy; p && *p && n < 8;) {
        names[n++] = p;
        p = strchr(p, ',');
        if (p)
            *p++ = '\0';
    }
    octet_catalog_update gone, now;
    int rc = octet_tools_catalog_unregister(names, n, &gone);
    free(copy);
    if (rc != OCTET_OK)
        return OCTET_ERROR;
    octet_tools_catalog_current(&now);
    char *a = NULL, *b = NULL;
    update_json(&a, &gone);
    update_json(&b, &now);
    octet_tool_text(res, "{\"unregistered\":%s,\"current\":%s}", a, b);
    free(a);
    free(b);
    octet_catalog_update_free(&gone);
    octet_catalog_update_free(&now);
    return OCTET_OK;
}

static int present_for(const char *args, octet_tool_result *res, const octet_call *cx)
{
    octet_resource_owner owner = {cx->session_id, cx->extension_instance_id,
                                  cx->process_generation};
    char *snapshot = octet_format("{\"revision\":%lld}", (long long)int_arg(args, "revision"));
    int rc = octet_presentation_update_for(&owner, snapshot);
    free(snapshot);
    return rc == OCTET_OK ? octet_tool_text(res, "presented") : OCTET_ERROR;
}

static int wait_for_cancel(const char *args, octet_tool_result *res, const octet_call *cx)
{
    octet_log(OCTET_LOG_INFO, "waiting for the cancellation");
    for (int i = 0; i < 6000; i++)
        if (octet_sleep(10))
            break;
    char *reason = octet_cancellation_reason();
    int rc = octet_check_cancelled();
    if (rc != OCTET_OK)
        octet_log(OCTET_LOG_INFO, "cancelled: %s", reason ? reason : "(none)");
    free(reason);
    return rc == OCTET_OK ? octet_tool_text(res, "never cancelled") : rc;
}

void octet_setup(octet_ext *ext)
{
    octet_name(ext, "sdk-services");
    octet_uses_progress_decoration(ext);
    octet_uses_secrets(ext);
    octet_uses_approvals(ext);
    octet_uses_dynamic_tools(ext);
    octet_uses_agent_model_selection(ext);
    static const struct {
        const char *name;
        octet_tool_fn fn;
    } tools[] = {
        {"spawn", spawn},         {"send", send},         {"follow_up", follow_up},
        {"list", list},           {"wait", wait},         {"interrupt", interrupt},
        {"models", models},       {"active", active},     {"secret", secret},
        {"policy", policy},       {"ask", ask},           {"report", report},
        {"catalog", catalog},     {"present_for", present_for},
        {"wait_for_cancel", wait_for_cancel},
    };
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        char *description = octet_format("The %s service", tools[i].name);
        octet_tool(ext, tools[i].name, description, NULL, tools[i].fn);
        free(description);
    }
}
