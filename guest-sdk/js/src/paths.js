// Which granted directory a path lies in, decided without the host: a
// guest path is resolved lexically against the preopens the shim gave this
// instance (the workspace at its host path and as `.`, the scratch
// directory, or `/` when the manifest grants everything).

/** `a/./b/../c` → ["a", "c"]; `null` when `..` climbs above the start. */
export function segments(path) {
  const out = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length === 0) return null;
      out.pop();
    } else {
      out.push(part);
    }
  }
  return out;
}

/**
 * Picks the preopen for `path` from `preopens` (`[{name, dir}]`): an
 * absolute path goes to the preopen whose absolute name is its longest
 * prefix (whole components), a relative one to the `.` preopen. Returns
 * `{dir, rel}` (`rel` is `.` for the preopen itself) or `{problem}`, a
 * sentence saying why the path is out of reach.
 */
export function locate(path, preopens) {
  if (typeof path !== "string" || path === "") return { problem: "a path must be a non-empty string" };
  if (path.includes("\0")) return { problem: `${JSON.stringify(path)} contains a NUL character` };
  const granted = preopens.map((p) => p.name).filter((name) => name !== ".");
  const where =
    preopens.length === 0
      ? 'no directory is granted: set filesystem = "workspace" under [capabilities] in extension.toml'
      : `the directories granted are ${granted.join(", ")}`;
  if (!path.startsWith("/")) {
    const cwd = preopens.find((p) => p.name === ".");
    if (!cwd) return { problem: `${path} is relative but no working directory is granted (${where})` };
    const parts = segments(path);
    if (parts === null) return { problem: `${path} leads outside the workspace (${where})` };
    return { dir: cwd.dir, rel: parts.length === 0 ? "." : parts.join("/") };
  }
  const parts = segments(path) ?? [];
  let best = null;
  for (const preopen of preopens) {
    if (!preopen.name.startsWith("/")) continue;
    const prefix = segments(preopen.name) ?? [];
    if (prefix.length > parts.length) continue;
    if (!prefix.every((part, i) => parts[i] === part)) continue;
    if (best === null || prefix.length > best.prefix.length) best = { preopen, prefix };
  }
  if (best === null) return { problem: `${path} is outside the directories this extension may use (${where})` };
  const rest = parts.slice(best.prefix.length);
  return { dir: best.preopen.dir, rel: rest.length === 0 ? "." : rest.join("/") };
}
