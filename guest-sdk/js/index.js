// octet-guest for JavaScript: octet extensions as WebAssembly components run
// sandboxed by octet-wasm, built with componentize-qjs (QuickJS). The API
// follows the Rust SDK's names (guest-sdk/VOCABULARY.md maps them):
//
//   import { Extension, notify } from "octet-guest";
//   const ext = new Extension("hello");
//   ext.tool({ name: "hello", description: "Greet someone" }, (args) => `Hello, ${args.name}!`);
//   export const guest = ext.exports();
//
// Handlers are synchronous: host services (sleep, confirm, ...) block.
// Each concern lives in its own module under src/.

import { installTextCodecs } from "./src/utf8.js";

// QuickJS in the component has neither; code written for browsers or Node
// then works unchanged.
installTextCodecs();

export { Extension } from "./src/registry.js";
export {
  Cancelled,
  ExtensionError,
  Failed,
  InvalidParams,
  RpcError,
  isCancelledError,
} from "./src/errors.js";
export {
  ToolResult,
  audioContent,
  deny,
  hookResult,
  imageContent,
  textContent,
  toolResult,
} from "./src/results.js";
export {
  apiVersion,
  detachedCall,
  features,
  guestWorkspace,
  hasFeature,
  initializeParams,
} from "./src/call.js";
export {
  confirm,
  contributeContext,
  contributeStatus,
  log,
  notify,
  notifyTitled,
  progress,
  progressDecoration,
  progressOutput,
  requestInput,
  sendNotification,
} from "./src/host.js";
export { cancellationReason, checkCancelled, isCancelled, sleep } from "./src/cancel.js";
export { LIFECYCLE_KINDS } from "./src/lifecycle.js";
export { decodeUtf8, encodeUtf8 } from "./src/utf8.js";
export { FsError } from "./src/fs.js";

export * as agents from "./src/agents.js";
export * as artifacts from "./src/artifacts.js";
export * as fs from "./src/fs.js";
export * as policy from "./src/policy.js";
export * as presentation from "./src/presentation.js";
export * as secrets from "./src/secrets.js";
export * as toolsCatalog from "./src/tools_catalog.js";
