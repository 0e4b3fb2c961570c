/*
 * Child agent sessions: the agents import, with results written as the
 * host's JSON objects (the protocol's member names) so C reads them with
 * the same octet_json_* functions as its arguments.
 */
#include "internal.h"

#include <string.h>

static extension_option_string_t opt_borrow(const char *s)
{
    extension_option_string_t o;
    memset(&o, 0, sizeof o);
    if (s != NULL) {
        o.is_some = true;
        o.val = wstr_borrow(s);
    }
    return o;
}

static extension_option_u32_t opt_u32(uint32_t n)
{
    extension_option_u32_t o = {n != 0, n};
    return o;
}

static extension_option_u64_t opt_u64(uint64_t n)
{
    extension_option_u64_t o = {n != 0, n};
    return o;
}

/* Members of a JSON object, each preceded by its key. */
static void key(sb *b, bool first, const char *name)
{
    sb_add(b, first ? "{" : ",");
    sb_json_string(b, name);
    sb_add(b, ":");
}

static void opt_string(sb *b, const extension_option_string_t *o)
{
    if (o->is_some)
        sb_json_wstr(b, &o->val);
    else
        sb_add(b, "null");
}

static void status(sb *b, const octet_extension_agents_agent_status_t *s)
{
    key(b, true, "state");
    sb_json_wstr(b, &s->state);
    key(b, false, "output");
    opt_string(b, &s->output);
    key(b, false, "error");
    opt_string(b, &s->error);
    sb_add(b, "}");
}

static void snapshot(sb *b, const octet_extension_agents_snapshot_t *s)
{
    key(b, true, "principal");
    sb_json_wstr(b, &s->principal);
    key(b, false, "resource_owner");
    sb_json_wstr(b, &s->resource_owner);
    key(b, false, "persistence_error");
    if (s->persistence_error.is_some)
        sb_json_raw(b, &s->persistence_error.val);
    else
        sb_add(b, "null");
    key(b, false, "agents");
    sb_add(b, "[");
    for (size_t i = 0; i < s->agents.len; i++) {
        const octet_extension_agents_agent_record_t *r = &s->agents.ptr[i];
        if (i > 0)
            sb_add(b, ",");
        key(b, true, "agent_id");
        sb_json_wstr(b, &r->agent_id);
        key(b, false, "agent_path");
        opt_string(b, &r->agent_path);
        key(b, false, "status");
        status(b, &r->status);
        key(b, false, "details");
        sb_json_raw(b, &r->details);
        sb_add(b, "}");
    }
    sb_add(b, "]}");
}

/* Hands the written JSON to the caller (or drops it). */
static void give(sb *b, char **out)
{
    char *json = sb_finish(b);
    if (out != NULL)
        *out = json;
    else
        free(json);
}

static void clear(char **out)
{
    if (out != NULL)
        *out = NULL;
}

static const octet_extension_agents_agent_tool_t tool_bits[] = {
    OCTET_EXTENSION_AGENTS_AGENT_TOOL_READ, OCTET_EXTENSION_AGENTS_AGENT_TOOL_SEARCH,
    OCTET_EXTENSION_AGENTS_AGENT_TOOL_EDIT, OCTET_EXTENSION_AGENTS_AGENT_TOOL_WRITE,
    OCTET_EXTENSION_AGENTS_AGENT_TOOL_BASH,
};

int octet_agents_spawn(const octet_spawn *request, char **result_json)
{
    clear(result_json);
    const octet_agent_policy *p = &request->policy;
    octet_extension_agents_spawn_request_t wit;
    memset(&wit, 0, sizeof wit);
    wit.task_name = wstr_borrow(request->task_name);
    wit.profile = opt_borrow(request->profile);
    wit.fingerprint = opt_borrow(request->fingerprint);
    wit.message = wstr_borrow(request->message);
    wit.idempotency_key = wstr_borrow(request->idempotency_key);
    for (unsigned i = 0; i < 5; i++)
        if (p->tools & (1u << i))
            *PUSH(wit.policy.tools.ptr, wit.policy.tools.len) = tool_bits[i];
    wit.policy.max_concurrent_children = p->max_concurrent_children ? p->max_concurrent_children : 1;
    wit.policy.max_turns = opt_u32(p->max_turns);
    wit.policy.max_tokens = opt_u32(p->max_tokens);
    wit.policy.max_cost_microdollars = opt_u64(p->max_cost_microdollars);
    wit.policy.max_output_bytes = p->max_output_bytes ? p->max_output_bytes : 4096;
    wit.policy.timeout_ms = opt_u64(p->timeout_ms);
    if (p->provider || p->model || p->reasoning) {
        wit.policy.model_selection.is_some = true;
        wit.policy.model_selection.val.provider = opt_borrow(p->provider);
        wit.policy.model_selection.val.model = opt_borrow(p->model);
        wit.policy.model_selection.val.reasoning = opt_borrow(p->reasoning);
    }
    octet_extension_agents_spawned_t spawned;
    werror err;
    bool ok = octet_extension_agents_spawn(&wit, &spawned, &err);
    free(wit.policy.tools.ptr);
    if (!ok)
        return host_result(ok, &err);
    sb b;
    sb_init(&b);
    key(&b, true, "agent_id");
    sb_json_wstr(&b, &spawned.agent_id);
    key(&b, false, "agent_path");
    sb_json_wstr(&b, &spawned.agent_path);
    key(&b, false, "status");
    status(&b, &spawned.status);
    key(&b, false, "details");
    sb_json_raw(&b, &spawned.details);
    sb_add(&b, "}");
    octet_extension_agents_spawned_free(&spawned);
    give(&b, result_json);
    return OCTET_OK;
}

int octet_agents_send(const char *target, const char *message, char **result_json)
{
    clear(result_json);
    wstr t = wstr_borrow(target), m = wstr_borrow(message);
    octet_extension_agents_steered_t steered;
    werror err;
    if (!octet_extension_agents_send(&t, &m, &steered, &err))
        return host_result(false, &err);
    sb b;
    sb_init(&b);
    key(&b, true, "delivered_to");
    sb_json_wstr(&b, &steered.delivered_to);
    key(&b, false, "delivery");
    sb_add(&b, steered.delivery == OCTET_EXTENSION_AGENTS_STEERING_DELIVERY_QUEUED ? "\"queued\""
                                                                                   : "\"steering\"");
    sb_add(&b, "}");
    octet_extension_agents_steered_free(&steered);
    give(&b, result_json);
    return OCTET_OK;
}

int octet_agents_follow_up(const char *target, const char *message, char **result_json)
{
    clear(result_json);
    wstr t = wstr_borrow(target), m = wstr_borrow(message);
    octet_extension_agents_followed_up_t done;
    werror err;
    if (!octet_extension_agents_follow_up(&t, &m, &done, &err))
        return host_result(false, &err);
    sb b;
    sb_init(&b);
    key(&b, true, "agent_id");
    sb_json_wstr(&b, &done.agent_id);
    key(&b, false, "agent_path");
    sb_json_wstr(&b, &done.agent_path);
    key(&b, false, "delivery");
    sb_add(&b, done.delivery == OCTET_EXTENSION_AGENTS_FOLLOW_UP_DELIVERY_NEW_RUN ? "\"new_run\""
                                                                                 : "\"follow_up\"");
    sb_add(&b, "}");
    octet_extension_agents_followed_up_free(&done);
    give(&b, result_json);
    return OCTET_OK;
}

int octet_agents_list(char **result_json)
{
    clear(result_json);
    octet_extension_agents_snapshot_t snap;
    werror err;
    if (!octet_extension_agents_list_agents(&snap, &err))
        return host_result(false, &err);
    sb b;
    sb_init(&b);
    snapshot(&b, &snap);
    octet_extension_agents_snapshot_free(&snap);
    give(&b, result_json);
    return OCTET_OK;
}

int octet_agents_wait(uint32_t timeout_ms, char **result_json)
{
    clear(result_json);
    octet_extension_agents_waited_t waited;
    werror err;
    if (!octet_extension_agents_wait(timeout_ms ? &timeout_ms : NULL, &waited, &err))
        return host_result(false, &err);
    sb b;
    sb_init(&b);
    key(&b, true, "timed_out");
    sb_add(&b, waited.timed_out ? "true" : "false");
    key(&b, false, "snapshot");
    snapshot(&b, &waited.snapshot);
    sb_add(&b, "}");
    octet_extension_agents_waited_free(&waited);
    give(&b, result_json);
    return OCTET_OK;
}

int octet_agents_interrupt(const char *target, char **result_json)
{
    clear(result_json);
    wstr t = wstr_borrow(target);
    octet_extension_agents_interrupted_t done;
    werror err;
    if (!octet_extension_agents_interrupt(&t, &done, &err))
        return host_result(false, &err);
    sb b;
    sb_init(&b);
    key(&b, true, "agent_id");
    sb_json_wstr(&b, &done.agent_id);
    key(&b, false, "agent_path");
    sb_json_wstr(&b, &done.agent_path);
    key(&b, false, "previous_status");
    sb_json_raw(&b, &done.previous_status);
    key(&b, false, "interrupt_requested");
    sb_add(&b, done.interrupt_requested ? "true" : "false");
    sb_add(&b, "}");
    octet_extension_agents_interrupted_free(&done);
    give(&b, result_json);
    return OCTET_OK;
}

int octet_agents_list_models(const char *query, uint32_t limit, char **result_json)
{
    clear(result_json);
    wstr q = wstr_borrow(query);
    octet_extension_agents_model_list_t listed;
    werror err;
    if (!octet_extension_agents_list_models(query ? &q : NULL, limit ? &limit : NULL, &listed, &err))
        return host_result(false, &err);
    sb b;
    sb_init(&b);
    key(&b, true, "models");
    sb_add(&b, "[");
    for (size_t i = 0; i < listed.models.len; i++) {
        const octet_extension_agents_model_info_t *m = &listed.models.ptr[i];
        if (i > 0)
            sb_add(&b, ",");
        key(&b, true, "model");
        sb_json_wstr(&b, &m->model);
        key(&b, false, "provider");
        sb_json_wstr(&b, &m->provider);
        key(&b, false, "display_name");
        opt_string(&b, &m->display_name);
        key(&b, false, "reasoning");
        sb_add(&b, "[");
        for (size_t j = 0; j < m->reasoning.len; j++) {
            if (j > 0)
                sb_add(&b, ",");
            sb_json_wstr(&b, &m->reasoning.ptr[j]);
        }
        sb_add(&b, "]");
        sb_addf(&b, ",\"context_window\":%llu,\"max_output_tokens\":%llu}",
                (unsigned long long)m->context_window, (unsigned long long)m->max_output_tokens);
    }
    sb_add(&b, "]");
    key(&b, false, "truncated");
    sb_add(&b, listed.truncated ? "true" : "false");
    sb_add(&b, "}");
    octet_extension_agents_model_list_free(&listed);
    give(&b, result_json);
    return OCTET_OK;
}

bool octet_agents_is_active(const char *state)
{
    return state != NULL && (strcmp(state, "pending") == 0 || strcmp(state, "running") == 0);
}
