// npm's prepack/postpack step: a packed octet-guest has no checkout around it,
// so the octet WIT root (../../wit: the @0.2.0 package and 0.4.0/) is copied
// into the package as octet-wit/, real files (npm may leave a symlink out).
//
//   node tools/pack-wit.mjs        copy (prepack)
//   node tools/pack-wit.mjs clean  remove the copy again (postpack)
import { cpSync, existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const sdk = join(dirname(fileURLToPath(import.meta.url)), "..");
const target = join(sdk, "octet-wit");
rmSync(target, { recursive: true, force: true });
if (process.argv[2] !== "clean") {
  const source = join(sdk, "..", "..", "wit");
  if (!existsSync(join(source, "world.wit")) || !existsSync(join(source, "0.4.0", "world.wit"))) {
    console.error(`pack-wit: no octet WIT root at ${source} (pack from an octet-wasm checkout)`);
    process.exit(1);
  }
  cpSync(source, target, { recursive: true, dereference: true });
}
