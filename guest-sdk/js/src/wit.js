// The host's imports, in one place: componentize-qjs resolves these
// specifiers to the component's imports at build time (the unit tests map
// them to fakes with a module loader). They name no package version, so the
// same SDK builds against octet:extension@0.2.0 and @0.4.0: the interfaces
// the SDK uses are in both.

import host from "octet:extension/host";
import cancellation from "octet:extension/cancellation";
import artifacts from "octet:extension/artifacts";
import toolsCatalog from "octet:extension/tools-catalog";
import secrets from "octet:extension/secrets";
import policy from "octet:extension/policy";
import presentation from "octet:extension/presentation";
import agents from "octet:extension/agents";

export { agents, artifacts, cancellation, host, policy, presentation, secrets, toolsCatalog };
