// The WASI filesystem import (wasi:filesystem 0.2.12, the version the
// host's wasmtime-wasi provides). octet-guest-build adds it, and the
// `types` interface its descriptors come from, to the world from the WIT
// shipped in guest-sdk/js/wit.

import preopens from "wasi:filesystem/preopens@0.2.12";

export { preopens };
