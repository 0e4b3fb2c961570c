/*
 * Deprecated since C SDK 0.2.0; goes in 1.0. The whole SDK as one file, for
 * a project made by octet-wasm new 0.1, whose ./build compiles
 * guest-sdk/c/octet.c with the bindings committed in guest-sdk/c/gen/.
 * The SDK is src/ now, with bindings generated from wit/ at every build:
 * `octet-wasm build --update` in such a project moves it to that build.
 */
#warning "guest-sdk/c/octet.c and guest-sdk/c/gen/ are deprecated since C SDK 0.2.0 and go in 1.0: run `octet-wasm build --update` in this project (its ./build then calls octet-wasm build)"

#include "src/agents.c"
#include "src/composition.c"
#include "src/errors.c"
#include "src/exports.c"
#include "src/exports_ui.c"
#include "src/hooks04.c"
#include "src/host.c"
#include "src/json.c"
#include "src/prompt.c"
#include "src/registry.c"
#include "src/services.c"
#include "src/util.c"
