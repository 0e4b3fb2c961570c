/*
 * Tool prompt metadata (API 0.4, tool_prompt_metadata_v1): a snippet the
 * host may put in the system prompt's list of tools and guidelines for the
 * model (docs/api-0.4.md#v04-prompt-metadata).
 *
 * The shim checks the host's bounds before anything reaches octet; the SDK
 * checks them too, at registration, so a mistake stops the extension at
 * its first describe (`octet-wasm inspect`, `check`, the first start) with
 * the tool and the bound named on stderr, like a duplicate registration.
 * Bindings of octet:extension@0.2.0 (an API 0.1 or 0.2 manifest) have no
 * place for the metadata: asking for it there stops the same way, with the
 * fix.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* The decoded code point at *p (advancing it), or -1 for invalid UTF-8
 * (overlong forms, surrogates and values past U+10FFFF included). */
static long next_code_point(const unsigned char **p)
{
    const unsigned char *s = *p;
    long cp;
    int extra;
    if (s[0] < 0x80) {
        cp = s[0];
        extra = 0;
    } else if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        cp = s[0] & 0x1F;
        extra = 1;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        cp = s[0] & 0x0F;
        extra = 2;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        cp = s[0] & 0x07;
        extra = 3;
    } else {
        return -1;
    }
    for (int i = 1; i <= extra; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return -1;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    static const long least[] = {0, 0x80, 0x800, 0x10000};
    if (cp < least[extra] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        return -1;
    *p = s + 1 + extra;
    return cp;
}

char *octet__prompt_text_problem(const char *text)
{
    size_t len = strlen(text);
    if (len > OCTET_PROMPT_TEXT_MAX)
        return octet_format("has %zu bytes; the limit is %d", len, OCTET_PROMPT_TEXT_MAX);
    const unsigned char *p = (const unsigned char *)text;
    while (*p) {
        long cp = next_code_point(&p);
        if (cp < 0)
            return octet_format("is not valid UTF-8");
        /* Unicode's Cc, as the shim has it: C0, DEL and C1. */
        if ((cp < 0x20 && cp != '\n' && cp != '\t') || (cp >= 0x7F && cp <= 0x9F))
            return octet_format(
                "contains the control character U+%04lX (only LF and TAB are allowed)", cp);
    }
    return NULL;
}

static struct tool_reg *prompt_tool(octet_ext *e, const char *tool, const char *what)
{
    struct tool_reg *t = octet__find_tool(e, tool, false);
    if (t == NULL)
        t = octet__find_tool(e, tool, true);
    if (t == NULL) {
        fprintf(stderr, "octet: %s: no tool `%s`\n", what, tool);
        abort();
    }
#if !OCTET_WIT_0_4
    fprintf(stderr,
            "octet: tool `%s`: prompt metadata needs API 0.4: set api_version = \"0.4\" in "
            "extension.toml (the build then generates the bindings of octet:extension@0.4.0; "
            "this build uses 0.2.0, which cannot carry it)\n",
            tool);
    abort();
#endif
    return t;
}

static void check_text(const char *tool, const char *what, const char *text)
{
    char *problem = octet__prompt_text_problem(text);
    if (problem != NULL) {
        fprintf(stderr, "octet: tool `%s`: %s %s\n", tool, what, problem);
        abort();
    }
}

void octet_tool_prompt_snippet(octet_ext *e, const char *tool, const char *snippet)
{
    struct tool_reg *t = prompt_tool(e, tool, "octet_tool_prompt_snippet");
    if (snippet != NULL)
        check_text(tool, "prompt_snippet", snippet);
    free(t->prompt_snippet);
    t->prompt_snippet = xstrdup_opt(snippet);
}

void octet_tool_prompt_guideline(octet_ext *e, const char *tool, const char *guideline)
{
    struct tool_reg *t = prompt_tool(e, tool, "octet_tool_prompt_guideline");
    if (t->n_prompt_guidelines == OCTET_PROMPT_GUIDELINES_MAX) {
        fprintf(stderr, "octet: tool `%s` has %d prompt guidelines already; the limit is %d\n",
                tool, OCTET_PROMPT_GUIDELINES_MAX, OCTET_PROMPT_GUIDELINES_MAX);
        abort();
    }
    char *what = octet_format("prompt guideline %zu", t->n_prompt_guidelines + 1);
    check_text(tool, what, guideline);
    free(what);
    *PUSH(t->prompt_guidelines, t->n_prompt_guidelines) = xstrdup(guideline);
}

bool octet__has_prompt_metadata(const struct tool_reg *t)
{
    return t->prompt_snippet != NULL || t->n_prompt_guidelines > 0;
}
