// UTF-8 without the engine's help: QuickJS in the component has no
// TextEncoder or TextDecoder, and file contents, progress output and
// artifacts cross the WIT boundary as bytes.

/** `text` as UTF-8 bytes; a lone surrogate becomes U+FFFD. */
export function encodeUtf8(text) {
  const s = String(text);
  const out = new Uint8Array(s.length * 3);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) {
      out[n++] = c;
    } else if (c < 0x800) {
      out[n++] = 0xc0 | (c >> 6);
      out[n++] = 0x80 | (c & 0x3f);
    } else if (c < 0x10000) {
      out[n++] = 0xe0 | (c >> 12);
      out[n++] = 0x80 | ((c >> 6) & 0x3f);
      out[n++] = 0x80 | (c & 0x3f);
    } else {
      out[n++] = 0xf0 | (c >> 18);
      out[n++] = 0x80 | ((c >> 12) & 0x3f);
      out[n++] = 0x80 | ((c >> 6) & 0x3f);
      out[n++] = 0x80 | (c & 0x3f);
    }
  }
  return out.slice(0, n);
}

/**
 * UTF-8 `bytes` as a string. Each maximal invalid sequence becomes U+FFFD
 * (as the WHATWG decoder does), or, with `{fatal: true}`, throws a
 * TypeError naming the byte offset.
 */
export function decodeUtf8(bytes, { fatal = false } = {}) {
  const b = bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes);
  const units = [];
  let out = "";
  const flush = () => {
    out += String.fromCharCode.apply(null, units);
    units.length = 0;
  };
  const push = (cp) => {
    if (cp >= 0x10000) {
      cp -= 0x10000;
      units.push(0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
    } else {
      units.push(cp);
    }
    if (units.length >= 8192) flush();
  };
  let i = 0;
  while (i < b.length) {
    const lead = b[i];
    let need = 0;
    let cp = 0;
    let lower = 0x80;
    let upper = 0xbf;
    if (lead < 0x80) {
      push(lead);
      i++;
      continue;
    } else if (lead >= 0xc2 && lead <= 0xdf) {
      need = 1;
      cp = lead & 0x1f;
    } else if (lead >= 0xe0 && lead <= 0xef) {
      need = 2;
      cp = lead & 0x0f;
      if (lead === 0xe0) lower = 0xa0;
      if (lead === 0xed) upper = 0x9f;
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      need = 3;
      cp = lead & 0x07;
      if (lead === 0xf0) lower = 0x90;
      if (lead === 0xf4) upper = 0x8f;
    } else {
      if (fatal) throw new TypeError(`invalid UTF-8 at byte ${i}`);
      push(0xfffd);
      i++;
      continue;
    }
    let j = 1;
    for (; j <= need; j++) {
      const next = b[i + j];
      if (next === undefined || next < lower || next > upper) break;
      cp = (cp << 6) | (next & 0x3f);
      lower = 0x80;
      upper = 0xbf;
    }
    if (j <= need) {
      if (fatal) throw new TypeError(`invalid UTF-8 at byte ${i}`);
      push(0xfffd);
      i += j;
      continue;
    }
    push(cp);
    i += need + 1;
  }
  flush();
  return out;
}

/** A UTF-8 TextEncoder for engines without one. */
export class Utf8Encoder {
  get encoding() {
    return "utf-8";
  }

  encode(text = "") {
    return encodeUtf8(text);
  }
}

/** A UTF-8 TextDecoder for engines without one (`fatal`, `ignoreBOM`). */
export class Utf8Decoder {
  constructor(label = "utf-8", { fatal = false, ignoreBOM = false } = {}) {
    const name = String(label).toLowerCase();
    if (name !== "utf-8" && name !== "utf8") {
      throw new RangeError(`only UTF-8 is supported, not ${JSON.stringify(label)}`);
    }
    this.fatal = Boolean(fatal);
    this.ignoreBOM = Boolean(ignoreBOM);
  }

  get encoding() {
    return "utf-8";
  }

  decode(bytes = new Uint8Array(0)) {
    let view = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes;
    if (ArrayBuffer.isView(view) && !(view instanceof Uint8Array)) {
      view = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    }
    const text = decodeUtf8(view, { fatal: this.fatal });
    return !this.ignoreBOM && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }
}

/** Installs `TextEncoder` and `TextDecoder` where the engine has none. */
export function installTextCodecs(global = globalThis) {
  if (typeof global.TextEncoder === "undefined") global.TextEncoder = Utf8Encoder;
  if (typeof global.TextDecoder === "undefined") global.TextDecoder = Utf8Decoder;
}
