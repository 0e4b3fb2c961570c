// hello-world (API 0.1): the whole API 0.1 surface in one small extension —
// a tool, a command, two hooks, context, a status line and a renderer.

import { Extension, notify } from "../../../guest-sdk/js/index.js";

/** The name greeted when none is given. */
const DEFAULT_NAME = "tinkerer";

const greeting = (name) => `Hello, ${name}!`;

const ext = new Extension("hello-world");

ext.tool(
  {
    name: "hello_world",
    description: "Greet someone from an executable extension",
    parameters: {
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
      additionalProperties: false,
    },
  },
  (args) => {
    const name = args.name ?? DEFAULT_NAME;
    notify("success", `hello_world greeted ${name}`);
    return greeting(name);
  },
);

ext.command(
  { name: "hello", description: "Show a greeting notification", usage: "/hello [name]" },
  (args) => greeting(args[0] ?? DEFAULT_NAME),
);

ext.hook("before_prompt", () => {});
ext.hook("after_response", () => {});

ext.context(() => ({
  label: "hello-world",
  content: "The hello-world extension is active.",
  placement: "system_suffix",
}));

ext.status("status", (surface) => ({
  surface,
  text: "hello",
  styleRole: "extension.hello_world.status",
}));

// Like the Python original (`output or "waiting"`): empty is no output.
ext.renderer("hello_world", (render) => ({
  text: `hello_world · ${render.output || "waiting"}`,
  styleRole: "extension.hello_world.tool",
}));

export const guest = ext.exports();
