// hello-tools (API 0.4): the minimal recipe of octet's Python SDK README in
// JavaScript, one tool, `hello`, that takes any object and answers
// `Hello from octet.`, plus what API 0.4 adds to a tool: prompt metadata
// for the system prompt's list of tools (the manifest says 0.4, so the
// build uses octet:extension@0.4.0, which carries it).

import { Extension } from "../../../guest-sdk/js/index.js";

/** What the host may show in the system prompt's list of tools. */
const PROMPT_SNIPPET = "hello: return a local greeting";
/** How the model should use the tool. */
const PROMPT_GUIDELINES = [
  "Call hello when the user asks to be greeted",
  "hello takes no arguments",
];

const ext = new Extension("hello-tools");

ext.tool(
  {
    name: "hello",
    description: "Return a local greeting",
    promptSnippet: PROMPT_SNIPPET,
    promptGuidelines: PROMPT_GUIDELINES,
  },
  () => "Hello from octet.",
);

export const guest = ext.exports();
