// File access for the directories the manifest grants, over
// wasi:filesystem 0.2 (the engine has no `fs` module). Names follow the
// Rust SDK's std::fs: readToString, read, write, readDir, metadata,
// createDir, createDirAll, removeFile, removeDir, removeDirAll, exists.
//
// Relative paths resolve in the workspace (with `filesystem = "workspace"`);
// absolute ones must lie in a granted directory: the workspace at its host
// path (`guestWorkspace()`), the host's scratch directory, or anywhere with
// `filesystem = "unrestricted"`. Escapes (`..` above the directory, symlinks
// pointing outside) are refused by the sandbox.

import { Failed } from "./errors.js";
import { locate } from "./paths.js";
import { decodeUtf8, encodeUtf8 } from "./utf8.js";
import { preopens } from "./wasi.js";

/** A failed file operation: `code` is the WASI error code (`no-entry`...). */
export class FsError extends Failed {
  constructor(path, code, message) {
    super(message);
    this.name = "FsError";
    this.path = path;
    this.code = code;
  }
}

const MESSAGES = {
  "no-entry": (p) => `${p}: no such file or directory`,
  exist: (p) => `${p} already exists`,
  "not-directory": (p) => `${p}: not a directory`,
  "is-directory": (p) => `${p} is a directory`,
  "not-empty": (p) => `${p}: the directory is not empty`,
  access: (p) => `${p}: permission denied`,
  "not-permitted": (p) => `${p}: not permitted (a path may not leave the granted directory)`,
  "read-only": (p) => `${p}: the file system is read-only`,
  loop: (p) => `${p}: too many levels of symbolic links`,
  "name-too-long": (p) => `${p}: the name is too long`,
  "insufficient-space": (p) => `${p}: no space left on the device`,
  "file-too-large": (p) => `${p}: the file is too large`,
  "invalid-seek": (p) => `${p}: invalid seek`,
  invalid: (p) => `${p}: invalid argument`,
};

function errorCode(error) {
  return error !== null && typeof error === "object" && "payload" in error ? error.payload : error;
}

function fsError(path, error) {
  const code = errorCode(error);
  if (typeof code !== "string") throw error;
  const message = MESSAGES[code] ? MESSAGES[code](path) : `${path}: ${code}`;
  return new FsError(path, code, message);
}

let granted = null;

/** The preopens, asked for once per instance (they never change). */
function grantedDirectories() {
  if (granted === null) {
    granted = preopens.getDirectories().map(([dir, name]) => ({ dir, name }));
  }
  return granted;
}

/** Runs `body(dir, rel)` on the directory holding `path`. */
function at(path, body) {
  const found = locate(path, grantedDirectories());
  if (found.problem) throw new FsError(String(path), "not-permitted", found.problem);
  try {
    return body(found.dir, found.rel);
  } catch (error) {
    if (error instanceof FsError) throw error;
    throw fsError(path, error);
  }
}

function dispose(resource) {
  const drop = typeof Symbol.dispose === "symbol" ? resource[Symbol.dispose] : undefined;
  if (typeof drop === "function") drop.call(resource);
}

/** Opens `rel` under `dir`, runs `body(file)` and closes the file. */
function withFile(dir, rel, openFlags, flags, body) {
  const file = dir.openAt({ symlinkFollow: true }, rel, openFlags, flags);
  try {
    return body(file);
  } finally {
    dispose(file);
  }
}

const CHUNK = 1 << 16;

function bytesOf(value) {
  return value instanceof Uint8Array ? value : Uint8Array.from(value);
}

/** The whole file at `path` as bytes (a Uint8Array). */
export function read(path) {
  return at(path, (dir, rel) =>
    withFile(dir, rel, {}, { read: true }, (file) => {
      const chunks = [];
      let total = 0;
      for (;;) {
        const [data, eof] = file.read(CHUNK, total);
        const bytes = bytesOf(data);
        chunks.push(bytes);
        total += bytes.length;
        if (eof || bytes.length === 0) break;
      }
      const out = new Uint8Array(total);
      let offset = 0;
      for (const chunk of chunks) {
        out.set(chunk, offset);
        offset += chunk.length;
      }
      return out;
    }),
  );
}

/**
 * The whole file at `path` as text. Invalid UTF-8 throws an `FsError`
 * (code `invalid`) naming the byte, as Rust's read_to_string fails.
 */
export function readToString(path) {
  const bytes = read(path);
  try {
    return decodeUtf8(bytes, { fatal: true });
  } catch (error) {
    throw new FsError(String(path), "invalid", `${path} is not UTF-8 text (${error.message})`);
  }
}

/** Creates or replaces the file at `path` with `data` (a string, written as UTF-8, or bytes). */
export function write(path, data) {
  const bytes = typeof data === "string" ? encodeUtf8(data) : bytesOf(data);
  at(path, (dir, rel) =>
    withFile(dir, rel, { create: true, truncate: true }, { write: true }, (file) => {
      let offset = 0;
      while (offset < bytes.length) {
        const written = Number(file.write(bytes.subarray(offset, offset + (1 << 20)), offset));
        if (written <= 0) throw new FsError(String(path), "io", `${path}: the write made no progress`);
        offset += written;
      }
    }),
  );
}

const TYPES = {
  "regular-file": "file",
  directory: "dir",
  "symbolic-link": "symlink",
};

function entryType(type) {
  return TYPES[type] ?? "other";
}

/**
 * The entries of the directory at `path`, sorted by name: `[{name, type}]`
 * with `type` one of `file`, `dir`, `symlink`, `other`.
 */
export function readDir(path) {
  return at(path, (dir, rel) => {
    const target =
      rel === "." ? dir : dir.openAt({ symlinkFollow: true }, rel, { directory: true }, { read: true });
    try {
      const stream = target.readDirectory();
      const entries = [];
      try {
        for (let entry = stream.readDirectoryEntry(); entry; entry = stream.readDirectoryEntry()) {
          entries.push({ name: entry.name, type: entryType(entry.type) });
        }
      } finally {
        dispose(stream);
      }
      return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } finally {
      if (target !== dir) dispose(target);
    }
  });
}

function millis(timestamp) {
  if (!timestamp) return null;
  return Number(timestamp.seconds) * 1000 + Math.floor(Number(timestamp.nanoseconds) / 1e6);
}

/**
 * What `path` is (symlinks followed): `{type, isFile, isDir, isSymlink,
 * len, modified}`, with `len` in bytes and `modified` in milliseconds since
 * the Unix epoch (null when unknown).
 */
export function metadata(path) {
  return at(path, (dir, rel) => {
    const stat = rel === "." ? dir.stat() : dir.statAt({ symlinkFollow: true }, rel);
    const type = entryType(stat.type);
    return {
      type,
      isFile: type === "file",
      isDir: type === "dir",
      isSymlink: type === "symlink",
      len: Number(stat.size),
      modified: millis(stat.dataModificationTimestamp),
    };
  });
}

/** Whether `path` exists (false for a missing entry; other failures throw). */
export function exists(path) {
  try {
    metadata(path);
    return true;
  } catch (error) {
    if (error instanceof FsError && error.code === "no-entry") return false;
    throw error;
  }
}

/** Creates the directory `path` (its parent must exist). */
export function createDir(path) {
  at(path, (dir, rel) => dir.createDirectoryAt(rel));
}

/** Creates `path` and every missing parent; an existing directory is fine. */
export function createDirAll(path) {
  at(path, (dir, rel) => {
    if (rel === ".") return;
    const parts = rel.split("/");
    for (let i = 1; i <= parts.length; i++) {
      const prefix = parts.slice(0, i).join("/");
      try {
        dir.createDirectoryAt(prefix);
      } catch (error) {
        if (errorCode(error) !== "exist") throw error;
        const stat = dir.statAt({ symlinkFollow: true }, prefix);
        if (stat.type !== "directory") {
          throw new FsError(String(path), "not-directory", `${path}: ${prefix} exists and is not a directory`);
        }
      }
    }
  });
}

/** Removes the file (or symlink) at `path`. */
export function removeFile(path) {
  at(path, (dir, rel) => dir.unlinkFileAt(rel));
}

/** Removes the empty directory at `path`. */
export function removeDir(path) {
  at(path, (dir, rel) => dir.removeDirectoryAt(rel));
}

function removeTree(dir, rel) {
  const target = dir.openAt({ symlinkFollow: false }, rel, { directory: true }, { read: true });
  let names;
  try {
    const stream = target.readDirectory();
    names = [];
    try {
      for (let entry = stream.readDirectoryEntry(); entry; entry = stream.readDirectoryEntry()) {
        names.push(entry);
      }
    } finally {
      dispose(stream);
    }
  } finally {
    dispose(target);
  }
  for (const entry of names) {
    const child = `${rel}/${entry.name}`;
    if (entry.type === "directory") removeTree(dir, child);
    else dir.unlinkFileAt(child);
  }
  dir.removeDirectoryAt(rel);
}

/** Removes the directory at `path` and everything in it (symlinks are not followed). */
export function removeDirAll(path) {
  at(path, (dir, rel) => {
    if (rel === ".") {
      const message = `${path} is a granted directory itself and cannot be removed`;
      throw new FsError(String(path), "not-permitted", message);
    }
    removeTree(dir, rel);
  });
}
