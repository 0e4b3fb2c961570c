// `node --import ./test/register.mjs --test ...`: maps the component's
// import specifiers (octet:extension/..., wasi:filesystem/...) to the fakes
// in test/fakes, so the SDK's modules load unchanged under Node.
import { register } from "node:module";

register("./loader.mjs", import.meta.url);
