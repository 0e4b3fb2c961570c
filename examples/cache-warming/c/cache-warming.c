/*
 * cache-warming (API 0.4): octet's cache-warming example in C. No tools;
 * one `cache_warming_decision` hook that says `stop` when keeping the
 * provider's prompt cache warm would cost more than 5,000 microdollars,
 * and gives no opinion otherwise (the host then keeps its own decision).
 */
#include <stdlib.h>

#include "octet.h"

/* Above this warming cost, in microdollars, warming is not worth it. */
#define MAX_WARM_COST 5000

static int decide(const char *payload, octet_hook_result *res, const octet_call *cx)
{
    (void)cx;
    char *decision = NULL;
    octet_json_status st = octet_json_get_raw(payload, "decision", &decision);
    if (st != OCTET_JSON_OK)
        return octet_invalid_params("decision is %s", octet_json_status_text(st));
    int64_t cost = 0;
    st = octet_json_get_int(decision, "warm_cost_microdollars", &cost);
    free(decision);
    if (st != OCTET_JSON_OK)
        return octet_invalid_params("decision.warm_cost_microdollars is %s",
                                    octet_json_status_text(st));
    if (cost > MAX_WARM_COST)
        octet_hook_cache_warming(res, OCTET_CACHE_STOP);
    return OCTET_OK;
}

void octet_setup(octet_ext *ext)
{
    octet_name(ext, "cache-warming");
    octet_hook(ext, "cache_warming_decision", decide);
}
