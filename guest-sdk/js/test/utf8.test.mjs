import assert from "node:assert/strict";
import { test } from "node:test";
import { Utf8Decoder, Utf8Encoder, decodeUtf8, encodeUtf8, installTextCodecs } from "../src/utf8.js";

const samples = ["", "plain ascii", "héllo wörld", "日本語テキスト", "emoji 😀🎉 and 𝄞", "\u0000\u007f\u0080\u07ff\u0800\uffff"];

test("encoding matches the platform's TextEncoder", () => {
  for (const text of samples) {
    assert.deepEqual(encodeUtf8(text), new TextEncoder().encode(text), text);
    assert.equal(decodeUtf8(encodeUtf8(text)), text);
  }
});

test("lone surrogates encode as U+FFFD", () => {
  assert.deepEqual([...encodeUtf8("a\ud800b")], [0x61, 0xef, 0xbf, 0xbd, 0x62]);
  assert.deepEqual([...encodeUtf8("\udc00")], [0xef, 0xbf, 0xbd]);
  assert.deepEqual(encodeUtf8("x\ud83d"), new TextEncoder().encode("x\ud83d"));
});

test("invalid sequences decode as the WHATWG decoder does", () => {
  const cases = [
    [0xff],
    [0xc0, 0x80],
    [0xe0, 0x80, 0x80],
    [0xed, 0xa0, 0x80],
    [0xf4, 0x90, 0x80, 0x80],
    [0xe2, 0x82],
    [0xe2, 0x82, 0x41],
    [0xf0, 0x9f, 0x98],
    [0x61, 0x80, 0x62],
  ];
  const reference = new TextDecoder();
  for (const bytes of cases) {
    assert.equal(decodeUtf8(bytes), reference.decode(Uint8Array.from(bytes)), JSON.stringify(bytes));
  }
});

test("random bytes decode exactly like the platform's TextDecoder", () => {
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const reference = new TextDecoder();
  for (let round = 0; round < 2000; round++) {
    const length = next() % 24;
    // Bias towards bytes that start and continue multi-byte sequences.
    const bytes = Uint8Array.from({ length }, () => {
      const r = next() % 4;
      return r === 0 ? next() % 0x80 : r === 1 ? 0x80 + (next() % 0x40) : 0xc0 + (next() % 0x40);
    });
    assert.equal(decodeUtf8(bytes), reference.decode(bytes), JSON.stringify([...bytes]));
  }
});

test("fatal decoding names the offending byte", () => {
  assert.throws(() => decodeUtf8([0x61, 0x62, 0xff], { fatal: true }), /invalid UTF-8 at byte 2/);
  assert.equal(decodeUtf8([0xe2, 0x82, 0xac], { fatal: true }), "€");
});

test("long texts cross the chunked string building intact", () => {
  const text = "ab😀".repeat(10000);
  assert.equal(decodeUtf8(encodeUtf8(text)), text);
});

test("the codec classes stand in for TextEncoder and TextDecoder", () => {
  const global = {};
  installTextCodecs(global);
  assert.equal(global.TextEncoder, Utf8Encoder);
  assert.equal(global.TextDecoder, Utf8Decoder);
  const decoder = new global.TextDecoder();
  assert.equal(decoder.decode(new global.TextEncoder().encode("\ufeffhé")), "hé");
  assert.equal(new Utf8Decoder("utf-8", { ignoreBOM: true }).decode(encodeUtf8("\ufeffx")), "\ufeffx");
  assert.throws(() => new Utf8Decoder("latin1"), /only UTF-8/);
  assert.throws(() => new Utf8Decoder("utf-8", { fatal: true }).decode(Uint8Array.of(0x80)), TypeError);
  const existing = { TextEncoder: "kept", TextDecoder: "kept" };
  installTextCodecs(existing);
  assert.equal(existing.TextEncoder, "kept");
});
