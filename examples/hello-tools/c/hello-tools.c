/*
 * hello-tools (API 0.4): the minimal recipe of octet's Python SDK README in
 * C, one tool, `hello`, that takes any object and answers
 * `Hello from octet.`, plus what API 0.4 adds to a tool: prompt metadata
 * for the system prompt's list of tools (the manifest says 0.4, so
 * scripts/build-guests-c builds against octet:extension@0.4.0, which
 * carries it).
 */
#include "octet.h"

static int hello(const char *args, octet_tool_result *res, const octet_call *cx)
{
    (void)args;
    (void)cx;
    return octet_tool_text(res, "Hello from octet.");
}

void octet_setup(octet_ext *ext)
{
    octet_name(ext, "hello-tools");
    octet_tool(ext, "hello", "Return a local greeting", NULL, hello);
    octet_tool_prompt_snippet(ext, "hello", "hello: return a local greeting");
    octet_tool_prompt_guideline(ext, "hello", "Call hello when the user asks to be greeted");
    octet_tool_prompt_guideline(ext, "hello", "hello takes no arguments");
}
