/*
 * Native unit tests for the SDK's string, JSON, registry and prompt metadata
 * helpers (the parts that need no host), built natively by
 * guest-sdk/c/tests/run once against the bindings of each WIT version. The
 * WIT imports are stubs that abort: these tests never call them.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

static int failures, checks;

#define CHECK(cond)                                                              \
    do {                                                                         \
        checks++;                                                                \
        if (!(cond)) {                                                           \
            failures++;                                                          \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                        \
    } while (0)

static void strings(void)
{
    char *s = NULL;
    CHECK(octet_json_get_string("{\"name\":\"host \\u03bb\\ud83d\\ude00\"}", "name", &s) ==
          OCTET_JSON_OK);
    CHECK(s && strcmp(s, "host \xce\xbb\xf0\x9f\x98\x80") == 0);
    CHECK(s && octet_utf8_chars(s) == 7);
    free(s);
    s = NULL;
    CHECK(octet_json_get_string("{\"name\":\"host \xce\xbb\xf0\x9f\x98\x80\"}", "name", &s) ==
          OCTET_JSON_OK);
    CHECK(s && strcmp(s, "host \xce\xbb\xf0\x9f\x98\x80") == 0);
    free(s);
    s = NULL;
    CHECK(octet_json_get_string("{\"a\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}", "a", &s) == OCTET_JSON_OK);
    CHECK(s && strcmp(s, "\"\\/\b\f\n\r\t") == 0);
    free(s);
    /* Escaped keys match their unescaped form; the last duplicate wins. */
    s = NULL;
    CHECK(octet_json_get_string("{\"n\\u0061me\":\"x\",\"name\":\"y\"}", "name", &s) ==
          OCTET_JSON_OK);
    CHECK(s && strcmp(s, "y") == 0);
    free(s);
    /* Nested members are not top-level members. */
    CHECK(octet_json_get_string("{\"o\":{\"name\":\"x\"}}", "name", &s) == OCTET_JSON_MISSING);
    CHECK(octet_json_get_string("{\"name\":false}", "name", &s) == OCTET_JSON_WRONG_TYPE);
    CHECK(octet_json_get_string("{\"name\":null}", "name", &s) == OCTET_JSON_NULL);
    CHECK(octet_json_get_string("{}", "name", &s) == OCTET_JSON_MISSING);
    CHECK(octet_json_get_string("[\"name\"]", "name", &s) == OCTET_JSON_NOT_OBJECT);
    CHECK(octet_json_get_string("{\"name\":\"a\\u0000b\"}", "name", &s) == OCTET_JSON_WRONG_TYPE);
    CHECK(octet_json_get_string("{\"name\":\"\\ud800\"}", "name", &s) == OCTET_JSON_INVALID);
    CHECK(octet_json_get_string("{\"name\":\"\\udc00\"}", "name", &s) == OCTET_JSON_INVALID);
    CHECK(octet_json_get_string("{\"name\":\"a\nb\"}", "name", &s) == OCTET_JSON_INVALID);
    CHECK(octet_json_get_string("{\"name\":\"x\"} x", "name", &s) == OCTET_JSON_INVALID);
    CHECK(octet_json_get_string("{\"name\":\"x\",}", "name", &s) == OCTET_JSON_INVALID);
    CHECK(octet_json_get_string("", "name", &s) == OCTET_JSON_INVALID);

    char *q = octet_json_quote("a\"b\\c\n\x01");
    CHECK(q && strcmp(q, "\"a\\\"b\\\\c\\u000a\\u0001\"") == 0);
    free(q);
    char *f = octet_format("%s-%d", "x", 42);
    CHECK(f && strcmp(f, "x-42") == 0);
    free(f);
}

static void numbers_and_bools(void)
{
    int64_t v = 7;
    CHECK(octet_json_get_int("{\"d\":5000}", "d", &v) == OCTET_JSON_OK && v == 5000);
    CHECK(octet_json_get_int("{\"d\":-1}", "d", &v) == OCTET_JSON_OK && v == -1);
    CHECK(octet_json_get_int("{\"d\":-0}", "d", &v) == OCTET_JSON_OK && v == 0);
    CHECK(octet_json_get_int("{\"d\":9223372036854775807}", "d", &v) == OCTET_JSON_OK &&
          v == INT64_MAX);
    CHECK(octet_json_get_int("{\"d\":-9223372036854775808}", "d", &v) == OCTET_JSON_OK &&
          v == INT64_MIN);
    CHECK(octet_json_get_int("{\"d\":9223372036854775808}", "d", &v) == OCTET_JSON_RANGE);
    CHECK(octet_json_get_int("{\"d\":1.5}", "d", &v) == OCTET_JSON_RANGE);
    CHECK(octet_json_get_int("{\"d\":1e3}", "d", &v) == OCTET_JSON_RANGE);
    CHECK(octet_json_get_int("{\"d\":\"5\"}", "d", &v) == OCTET_JSON_WRONG_TYPE);
    CHECK(octet_json_get_int("{\"d\":01}", "d", &v) == OCTET_JSON_INVALID);
    CHECK(octet_json_get_int("{\"d\":-}", "d", &v) == OCTET_JSON_INVALID);
    bool b = false;
    CHECK(octet_json_get_bool("{\"b\":true}", "b", &b) == OCTET_JSON_OK && b);
    CHECK(octet_json_get_bool("{\"b\":false}", "b", &b) == OCTET_JSON_OK && !b);
    CHECK(octet_json_get_bool("{\"b\":0}", "b", &b) == OCTET_JSON_WRONG_TYPE);
    CHECK(octet_json_get_bool("{\"b\":tru}", "b", &b) == OCTET_JSON_INVALID);
}

static void structure(void)
{
    char *raw = NULL;
    CHECK(octet_json_get_raw(" { \"o\" : { \"k\" : [1, {\"x\":null}] } , \"p\":2 } ", "o", &raw) ==
          OCTET_JSON_OK);
    CHECK(raw && strcmp(raw, "{ \"k\" : [1, {\"x\":null}] }") == 0);
    free(raw);
    static const char *const known[] = {"name", "delay_ms"};
    char *unknown = NULL;
    CHECK(octet_json_only_keys("{\"name\":\"x\",\"delay_ms\":1}", known, 2, &unknown) ==
          OCTET_JSON_OK);
    CHECK(octet_json_only_keys("{\"name\":\"x\",\"extra\":1}", known, 2, &unknown) ==
          OCTET_JSON_WRONG_TYPE);
    CHECK(unknown && strcmp(unknown, "extra") == 0);
    free(unknown);
    CHECK(octet_json_valid("[]") && octet_json_valid(" \"x\" ") && octet_json_valid("-1.5e+3"));
    CHECK(!octet_json_valid("{\"a\" 1}") && !octet_json_valid("[1,]") && !octet_json_valid("nul"));
    CHECK(octet_json_is_object("{}") && !octet_json_is_object("[]"));
    /* Depth is bounded. */
    char deep[2 * (OCTET_JSON_MAX_DEPTH + 1) + 1];
    for (int i = 0; i <= OCTET_JSON_MAX_DEPTH; i++) {
        deep[i] = '[';
        deep[2 * (OCTET_JSON_MAX_DEPTH + 1) - 1 - i] = ']';
    }
    deep[2 * (OCTET_JSON_MAX_DEPTH + 1)] = '\0';
    CHECK(!octet_json_valid(deep));
    CHECK(octet_json_valid(deep + 1) || 1); /* unbalanced, only must not crash */
    char ok_depth[2 * OCTET_JSON_MAX_DEPTH + 1];
    for (int i = 0; i < OCTET_JSON_MAX_DEPTH; i++) {
        ok_depth[i] = '[';
        ok_depth[2 * OCTET_JSON_MAX_DEPTH - 1 - i] = ']';
    }
    ok_depth[2 * OCTET_JSON_MAX_DEPTH] = '\0';
    CHECK(octet_json_valid(ok_depth));
}

static void errors(void)
{
    CHECK(octet_invalid_params("bad %d", 1) == OCTET_ERROR);
    CHECK(octet_has_error() && strcmp(octet_error_message(), "bad 1") == 0);
    CHECK(octet_cancelled() == OCTET_ERROR && octet_error_is_cancelled());
    octet_error_clear();
    CHECK(!octet_has_error());
}

/* octet_arg_*: borrowed from the arena until the export ends. */
static void args(void)
{
    const char *json = "{\"name\":\"Ada \\u00e9\",\"n\":-3,\"on\":true,\"nil\":null}";
    const char *name = octet_arg_string(json, "name");
    CHECK(name && strcmp(name, "Ada \xc3\xa9") == 0);
    CHECK(octet_arg_string(json, "n") == NULL);
    CHECK(octet_arg_string(json, "missing") == NULL);
    CHECK(octet_arg_string("not json", "name") == NULL);
    int64_t n = 7;
    CHECK(octet_arg_int(json, "n", &n) && n == -3);
    n = 7;
    CHECK(!octet_arg_int(json, "name", &n) && n == 7);
    CHECK(!octet_arg_int(json, "nil", &n) && n == 7);
    bool on = false;
    CHECK(octet_arg_bool(json, "on", &on) && on);
    arena_release(); /* what end() does; ASan reports a leak otherwise */
}

/* The JSON the SDK writes for agent results. */
static void writer(void)
{
    sb b;
    sb_init(&b);
    sb_add(&b, "{");
    sb_json_string(&b, "k\"\n");
    sb_add(&b, ":");
    wstr valid = wstr_borrow("{\"a\":[1,2]}");
    sb_json_raw(&b, &valid);
    sb_addf(&b, ",\"n\":%d,\"bad\":", 42);
    wstr invalid = wstr_borrow("{oops");
    sb_json_raw(&b, &invalid);
    for (int i = 0; i < 100; i++)
        sb_add(&b, " ");
    sb_add(&b, "}");
    char *json = sb_finish(&b);
    CHECK(octet_json_valid(json));
    CHECK(strncmp(json, "{\"k\\\"\\u000a\":{\"a\":[1,2]},\"n\":42,\"bad\":null ", 39) == 0);
    char *raw = NULL;
    CHECK(octet_json_get_raw(json, "bad", &raw) == OCTET_JSON_OK && raw && strcmp(raw, "null") == 0);
    free(raw);
    free(json);
    CHECK(octet_agents_is_active("pending") && octet_agents_is_active("running"));
    CHECK(!octet_agents_is_active("completed") && !octet_agents_is_active(NULL));
}

/* Registration: dynamic tools are found by kind, and output schemas reach
 * either kind. */
static int noop_tool(const char *args, octet_tool_result *res, const octet_call *cx)
{
    (void)args;
    (void)cx;
    return octet_tool_text(res, "ok");
}

static void registry(void)
{
    octet_ext *e = ext();
    CHECK(octet__find_tool(e, "stats", true) != NULL);
    CHECK(octet__find_tool(e, "stats", false) == NULL);
    CHECK(octet__find_tool(e, "chart", false) != NULL);
    CHECK(strcmp(octet__find_tool(e, "stats", true)->output_schema, "{\"type\":\"object\"}") == 0);
    CHECK(strcmp(octet__find_tool(e, "chart", false)->parameters, "{\"type\":\"object\"}") == 0);
    size_t n = e->n_features;
    CHECK(n == 3);
    CHECK(strcmp(e->features[0], "artifacts") == 0 && strcmp(e->features[1], "policy_intents") == 0 &&
          strcmp(e->features[2], "approvals") == 0);
}

/* Prompt metadata (API 0.4): the host's bounds, and in a 0.4.0 build the
 * registry and describe carry it and declare the feature. */
static bool problem_is(const char *text, const char *expected)
{
    char *problem = octet__prompt_text_problem(text);
    bool same = expected == NULL ? problem == NULL
                                 : problem != NULL && strcmp(problem, expected) == 0;
    if (!same)
        fprintf(stderr, "prompt text problem: %s\n", problem ? problem : "(none)");
    free(problem);
    return same;
}

static void prompt_metadata(void)
{
    char at_limit[OCTET_PROMPT_TEXT_MAX + 2];
    for (size_t i = 0; i < OCTET_PROMPT_TEXT_MAX; i += 2)
        memcpy(at_limit + i, "\xc3\xa9", 2); /* é */
    at_limit[OCTET_PROMPT_TEXT_MAX] = '\0';
    CHECK(problem_is(at_limit, NULL));
    at_limit[OCTET_PROMPT_TEXT_MAX] = 'x';
    at_limit[OCTET_PROMPT_TEXT_MAX + 1] = '\0';
    CHECK(problem_is(at_limit, "has 1025 bytes; the limit is 1024"));
    CHECK(problem_is("a\tb\nc", NULL));
    CHECK(problem_is("a\rb",
                     "contains the control character U+000D (only LF and TAB are allowed)"));
    CHECK(problem_is("\x7f", "contains the control character U+007F (only LF and TAB are allowed)"));
    CHECK(problem_is("\xc2\x85", "contains the control character U+0085 (only LF and TAB are allowed)"));
    CHECK(problem_is("\xc2\xa0 \xf0\x9f\x98\x80", NULL));
    CHECK(problem_is("\xc0\xaf", "is not valid UTF-8"));       /* overlong */
    CHECK(problem_is("\xed\xa0\x80", "is not valid UTF-8"));   /* surrogate */
    CHECK(problem_is("\xe2\x82", "is not valid UTF-8"));        /* cut short */
    CHECK(problem_is("\xf4\x90\x80\x80", "is not valid UTF-8")); /* past U+10FFFF */

    octet_ext *e = ext();
    exports_octet_extension_guest_description_t d;
    exports_octet_extension_guest_describe(&d);
    bool listed = false;
    for (size_t i = 0; i < d.features.len; i++)
        listed |= d.features.ptr[i].len == 23 &&
                  memcmp(d.features.ptr[i].ptr, "tool_prompt_metadata_v1", 23) == 0;
#if OCTET_WIT_0_4
    struct tool_reg *chart = octet__find_tool(e, "chart", false);
    CHECK(strcmp(chart->prompt_snippet, "chart: draw numbers") == 0);
    CHECK(chart->n_prompt_guidelines == 2 &&
          strcmp(chart->prompt_guidelines[1], "At most\tten series") == 0);
    CHECK(octet__has_prompt_metadata(octet__find_tool(e, "stats", true)));
    CHECK(d.tools.len == 1 && d.tools.ptr[0].prompt_snippet.is_some &&
          d.tools.ptr[0].prompt_guidelines.len == 2);
    CHECK(listed);
#else
    CHECK(!octet__has_prompt_metadata(octet__find_tool(e, "chart", false)));
    CHECK(!listed);
#endif
    exports_octet_extension_guest_description_free(&d);
}

/* Whether `body` aborts (run in a child process, its stderr discarded):
 * how the SDK stops a registration it refuses. */
static bool aborts(void (*body)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (freopen("/dev/null", "w", stderr) == NULL)
            _exit(3);
        body();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void seventeen_guidelines(void)
{
    for (int i = 0; i < 17; i++)
        octet_tool_prompt_guideline(ext(), "chart", "g");
}
static void a_control_character(void) { octet_tool_prompt_snippet(ext(), "chart", "a\rb"); }
static void an_unknown_tool(void) { octet_tool_prompt_snippet(ext(), "nope", "s"); }
static void a_snippet(void) { octet_tool_prompt_snippet(ext(), "chart", "fine"); }

static void refusals(void)
{
    CHECK(aborts(an_unknown_tool));
#if OCTET_WIT_0_4
    CHECK(aborts(seventeen_guidelines));
    CHECK(aborts(a_control_character));
    CHECK(!aborts(a_snippet));
#else
    /* A 0.2.0 build has nowhere to put metadata: even a good one stops. */
    CHECK(aborts(a_snippet));
    (void)seventeen_guidelines;
    (void)a_control_character;
#endif
}

/* The API 0.4 hook results fill their members (0.4.0 bindings only; a
 * 0.2.0 build aborts, which these tests cannot watch). */
static void hook_results(void)
{
#if OCTET_WIT_0_4
    octet_hook_result res;
    memset(&res, 0, sizeof res);
    octet_hook_cache_warming(&res, OCTET_CACHE_STOP);
    CHECK(res.r.cache_warming.is_some &&
          res.r.cache_warming.val == OCTET_EXTENSION_TYPES_CACHE_WARMING_ACTION_STOP);
    static const unsigned char png[] = {0x89, 'P', 'N', 'G'};
    octet_hook_compaction_frame(&res, png, sizeof png);
    CHECK(res.r.compaction_frames.len == 1 && res.r.compaction_frames.ptr[0].len == 4 &&
          memcmp(res.r.compaction_frames.ptr[0].ptr, png, 4) == 0);
    octet_hook_provider_payload(&res, "{\"a\":1}");
    octet_hook_provider_payload(&res, "[]"); /* replaces */
    CHECK(res.r.provider_payload.is_some && res.r.provider_payload.val.len == 2);
    const char *accept[] = {"a", "b"};
    octet_hook_set_header(&res, "x-trace", "abc");
    octet_hook_set_header_values(&res, "accept", accept, 2);
    octet_hook_remove_header(&res, "x-old");
    CHECK(res.r.provider_headers.len == 3);
    CHECK(res.r.provider_headers.ptr[0].values.is_some &&
          res.r.provider_headers.ptr[0].values.val.len == 1);
    CHECK(res.r.provider_headers.ptr[1].values.val.len == 2 &&
          memcmp(res.r.provider_headers.ptr[1].values.val.ptr[1].ptr, "b", 1) == 0);
    CHECK(!res.r.provider_headers.ptr[2].values.is_some &&
          memcmp(res.r.provider_headers.ptr[2].name.ptr, "x-old", 5) == 0);
    octet_extension_types_hook_result_free(&res.r);
#endif
}

/* Arrays, for arguments such as {"values":[3,9,4]} or {"paths":["a","b"]}. */
static void arrays(void)
{
    const char *args = "{\"values\": [3, -9, 40], \"paths\": [\"a\\u00e9\", null, {\"k\": 1}]}";
    char *values = NULL, *paths = NULL, *s = NULL, *raw = NULL;
    size_t n = 0;
    int64_t v = 0;
    CHECK(octet_json_get_raw(args, "values", &values) == OCTET_JSON_OK);
    CHECK(octet_json_array_length(values, &n) == OCTET_JSON_OK && n == 3);
    CHECK(octet_json_array_get_int(values, 1, &v) == OCTET_JSON_OK && v == -9);
    CHECK(octet_json_array_get_int(values, 2, &v) == OCTET_JSON_OK && v == 40);
    CHECK(octet_json_array_get_int(values, 3, &v) == OCTET_JSON_MISSING);
    CHECK(octet_json_array_get_string(values, 0, &s) == OCTET_JSON_WRONG_TYPE);
    CHECK(octet_json_get_raw(args, "paths", &paths) == OCTET_JSON_OK);
    CHECK(octet_json_array_get_string(paths, 0, &s) == OCTET_JSON_OK &&
          strcmp(s, "a\xc3\xa9") == 0);
    free(s);
    CHECK(octet_json_array_get_string(paths, 1, &s) == OCTET_JSON_NULL);
    CHECK(octet_json_array_get_raw(paths, 2, &raw) == OCTET_JSON_OK);
    CHECK(raw && octet_json_get_int(raw, "k", &v) == OCTET_JSON_OK && v == 1);
    free(raw);
    CHECK(octet_json_array_length("[]", &n) == OCTET_JSON_OK && n == 0);
    CHECK(octet_json_array_length(" [ [1, 2], [] ] ", &n) == OCTET_JSON_OK && n == 2);
    CHECK(octet_json_array_length("{\"a\": 1}", &n) == OCTET_JSON_NOT_ARRAY);
    CHECK(octet_json_array_length("[1,", &n) == OCTET_JSON_INVALID);
    CHECK(octet_json_array_get_int("[1 2]", 0, &v) == OCTET_JSON_INVALID);
    CHECK(strcmp(octet_json_status_text(OCTET_JSON_NOT_ARRAY), "not a JSON array") == 0);
    free(values);
    free(paths);
}

int main(void)
{
    strings();
    arrays();
    numbers_and_bools();
    structure();
    errors();
    args();
    writer();
    registry();
    prompt_metadata();
    hook_results();
    refusals();
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures != 0;
}

void octet_setup(octet_ext *ext)
{
    octet_tool(ext, "chart", "A chart", NULL, noop_tool);
    octet_dynamic_tool(ext, "stats", "Stats", NULL, noop_tool);
    octet_tool_output_schema(ext, "stats", "{\"type\":\"object\"}");
    octet_uses_artifacts(ext);
    octet_uses_approvals(ext);
    octet_uses_policy(ext); /* already declared: not repeated */
#if OCTET_WIT_0_4
    octet_tool_prompt_snippet(ext, "chart", "chart: draw numbers");
    octet_tool_prompt_guideline(ext, "chart", "One chart per call");
    octet_tool_prompt_guideline(ext, "chart", "At most\tten series");
    octet_tool_prompt_guideline(ext, "stats", "After chart");
#endif
}
