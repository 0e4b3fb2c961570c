// The host's imports, in one place: componentize-qjs resolves these
// specifiers to the component's imports at build time (the unit tests map
// them to fakes with a module loader).

import host from "octet:extension/host@0.2.0";
import cancellation from "octet:extension/cancellation@0.2.0";
import artifacts from "octet:extension/artifacts@0.2.0";
import toolsCatalog from "octet:extension/tools-catalog@0.2.0";
import secrets from "octet:extension/secrets@0.2.0";
import policy from "octet:extension/policy@0.2.0";
import presentation from "octet:extension/presentation@0.2.0";
import agents from "octet:extension/agents@0.2.0";

export { agents, artifacts, cancellation, host, policy, presentation, secrets, toolsCatalog };
