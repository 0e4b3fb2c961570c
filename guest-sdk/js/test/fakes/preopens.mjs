// wasi:filesystem over node:fs, enough for the SDK's `fs`: descriptors
// rooted in real directories, refusing paths that leave their root the way
// wasmtime's capability-based filesystem does.
import * as nodefs from "node:fs";
import { join } from "node:path";
import { calls, witFailure } from "./recorder.mjs";

const CODES = {
  ENOENT: "no-entry",
  EEXIST: "exist",
  ENOTDIR: "not-directory",
  EISDIR: "is-directory",
  ENOTEMPTY: "not-empty",
  EACCES: "access",
  EPERM: "not-permitted",
  ELOOP: "loop",
};

function wasi(body) {
  try {
    return body();
  } catch (error) {
    if (error.payload) throw error;
    throw witFailure(CODES[error.code] ?? "io");
  }
}

function typeOf(stat) {
  if (stat.isFile()) return "regular-file";
  if (stat.isDirectory()) return "directory";
  if (stat.isSymbolicLink()) return "symbolic-link";
  return "unknown";
}

function timestamp(ms) {
  return { seconds: Math.floor(ms / 1000), nanoseconds: (ms % 1000) * 1e6 };
}

function statRecord(stat) {
  return {
    type: typeOf(stat),
    linkCount: stat.nlink,
    size: stat.size,
    dataAccessTimestamp: timestamp(stat.atimeMs),
    dataModificationTimestamp: timestamp(Math.floor(stat.mtimeMs)),
    statusChangeTimestamp: timestamp(stat.ctimeMs),
  };
}

/** Open descriptors, to check the SDK closes what it opens. */
export const open = new Set();

class DirectoryEntryStream {
  constructor(entries) {
    this.entries = entries;
  }

  readDirectoryEntry() {
    const entry = this.entries.shift();
    if (!entry) return null;
    let type = "unknown";
    if (entry.isFile()) type = "regular-file";
    else if (entry.isDirectory()) type = "directory";
    else if (entry.isSymbolicLink()) type = "symbolic-link";
    return { type, name: entry.name };
  }

  [Symbol.dispose]() {
    open.delete(this);
  }
}

export class Descriptor {
  constructor(root, path, fd = null) {
    this.root = root;
    this.path = path;
    this.fd = fd;
  }

  /** `rel` inside this descriptor's root, or a `not-permitted` failure. */
  inside(rel) {
    if (rel.startsWith("/") || rel.split("/").includes("..")) throw witFailure("not-permitted");
    return join(this.path, rel);
  }

  openAt(pathFlags, rel, openFlags, flags) {
    calls.push({ name: "fs.openAt", args: [pathFlags, rel, openFlags, flags] });
    return wasi(() => {
      const path = this.inside(rel);
      if (openFlags.directory) {
        if (!nodefs.statSync(path).isDirectory()) throw witFailure("not-directory");
        const dir = new Descriptor(this.root, path);
        open.add(dir);
        return dir;
      }
      let mode = "r";
      if (flags.write) mode = openFlags.create ? (openFlags.truncate ? "w" : "a") : "r+";
      const file = new Descriptor(this.root, path, nodefs.openSync(path, mode));
      open.add(file);
      return file;
    });
  }

  read(length, offset) {
    return wasi(() => {
      const buffer = Buffer.alloc(length);
      const n = nodefs.readSync(this.fd, buffer, 0, length, offset);
      return [new Uint8Array(buffer.subarray(0, n)), n === 0];
    });
  }

  write(bytes, offset) {
    // Short writes, to exercise the SDK's loop.
    return wasi(() => nodefs.writeSync(this.fd, bytes, 0, Math.min(bytes.length, 1000), offset));
  }

  readDirectory() {
    return wasi(() => {
      const stream = new DirectoryEntryStream(nodefs.readdirSync(this.path, { withFileTypes: true }));
      open.add(stream);
      return stream;
    });
  }

  stat() {
    return wasi(() => statRecord(nodefs.statSync(this.path)));
  }

  statAt(pathFlags, rel) {
    return wasi(() => {
      const path = this.inside(rel);
      return statRecord(pathFlags.symlinkFollow ? nodefs.statSync(path) : nodefs.lstatSync(path));
    });
  }

  createDirectoryAt(rel) {
    wasi(() => nodefs.mkdirSync(this.inside(rel)));
  }

  removeDirectoryAt(rel) {
    wasi(() => nodefs.rmdirSync(this.inside(rel)));
  }

  unlinkFileAt(rel) {
    wasi(() => {
      const path = this.inside(rel);
      if (nodefs.lstatSync(path).isDirectory()) throw witFailure("is-directory");
      nodefs.unlinkSync(path);
    });
  }

  [Symbol.dispose]() {
    if (this.fd !== null) nodefs.closeSync(this.fd);
    open.delete(this);
  }
}

let directories = [];

/** What getDirectories answers: `[[hostDir, guestName], ...]`. */
export function setDirectories(list) {
  directories = list;
}

export default {
  getDirectories() {
    calls.push({ name: "preopens.getDirectories", args: [] });
    return directories.map(([dir, name]) => [new Descriptor(dir, dir), name]);
  },
};
