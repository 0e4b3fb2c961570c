/*
 * The results of the API 0.4 hooks (cache_warming_decision,
 * compaction_strategy, before_provider_request, before_provider_headers):
 * members only octet:extension@0.4.0's hook-result has. The shim sends
 * each only for its own hook and checks its bounds; here they are only
 * filled in. In a 0.2.0 build there is nowhere to put them, so a call
 * stops the instance with the fix on stderr.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#if OCTET_WIT_0_4

void octet_hook_cache_warming(octet_hook_result *res, octet_cache_warming action)
{
    res->r.cache_warming.is_some = true;
    res->r.cache_warming.val = action == OCTET_CACHE_STOP
                                   ? OCTET_EXTENSION_TYPES_CACHE_WARMING_ACTION_STOP
                                   : OCTET_EXTENSION_TYPES_CACHE_WARMING_ACTION_WARM;
}

void octet_hook_compaction_frame(octet_hook_result *res, const void *png, size_t len)
{
    extension_list_u8_t *frame = PUSH(res->r.compaction_frames.ptr, res->r.compaction_frames.len);
    frame->ptr = xrealloc(NULL, len);
    if (len > 0)
        memcpy(frame->ptr, png, len);
    frame->len = len;
}

void octet_hook_provider_payload(octet_hook_result *res, const char *payload_json)
{
    octet_extension_types_option_json_free(&res->r.provider_payload);
    res->r.provider_payload.is_some = true;
    res->r.provider_payload.val = wstr_of(payload_json);
}

static octet_extension_types_header_edit_t *header(octet_hook_result *res, const char *name)
{
    octet_extension_types_header_edit_t *edit =
        PUSH(res->r.provider_headers.ptr, res->r.provider_headers.len);
    edit->name = wstr_of(name);
    return edit;
}

void octet_hook_set_header_values(octet_hook_result *res, const char *name,
                                  const char *const *values, size_t count)
{
    octet_extension_types_header_edit_t *edit = header(res, name);
    edit->values.is_some = true;
    edit->values.val = wlist_of((char *const *)values, count);
}

void octet_hook_set_header(octet_hook_result *res, const char *name, const char *value)
{
    octet_hook_set_header_values(res, name, &value, 1);
}

void octet_hook_remove_header(octet_hook_result *res, const char *name)
{
    header(res, name);
}

#else /* octet:extension@0.2.0 */

static void needs_0_4(const char *function)
{
    fprintf(stderr,
            "octet: %s sets an API 0.4 hook result: set api_version = \"0.4\" in extension.toml "
            "and rebuild (this build uses octet:extension@0.2.0, which cannot carry it)\n",
            function);
    abort();
}

void octet_hook_cache_warming(octet_hook_result *res, octet_cache_warming action)
{
    needs_0_4(__func__);
}
void octet_hook_compaction_frame(octet_hook_result *res, const void *png, size_t len)
{
    needs_0_4(__func__);
}
void octet_hook_provider_payload(octet_hook_result *res, const char *payload_json)
{
    needs_0_4(__func__);
}
void octet_hook_set_header(octet_hook_result *res, const char *name, const char *value)
{
    needs_0_4(__func__);
}
void octet_hook_set_header_values(octet_hook_result *res, const char *name,
                                  const char *const *values, size_t count)
{
    needs_0_4(__func__);
}
void octet_hook_remove_header(octet_hook_result *res, const char *name)
{
    needs_0_4(__func__);
}

#endif
