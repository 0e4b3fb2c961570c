// showcase (API 0.2): the API 0.2 services together, as in the Rust and C
// versions (the same transcript: tests/e2e/showcase.rs).
//
// - `chart {values}` draws a bar chart, publishes it as a PNG artifact,
//   shows it in the extension's presentation panel and returns it as an
//   image part;
// - `unlock_stats {}` registers the dynamic tool `chart_stats` (min, max,
//   mean of the last chart) and returns the new catalog revision;
// - `/charts` lists how many charts this instance drew (the panel's action).

import {
  Extension,
  Failed,
  InvalidParams,
  ToolResult,
  artifacts,
  presentation,
  toolsCatalog,
} from "../../../guest-sdk/js/index.js";

/** What this instance drew: kept across requests, lost with the instance. */
const state = { charts: 0, last: [] };

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let crc = 0xffffffff;
  for (const b of bytes) crc = CRC_TABLE[(crc ^ b) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function be32(n) {
  return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

/** A grayscale PNG (stored, uncompressed deflate) of `width` × `height`. */
function png(width, height, pixel) {
  const raw = [];
  for (let y = 0; y < height; y++) {
    raw.push(0); // filter: none
    for (let x = 0; x < width; x++) raw.push(pixel(x, y));
  }
  const zlib = [0x78, 0x01];
  const chunks = Math.max(1, Math.ceil(raw.length / 65535));
  for (let i = 0; i < chunks; i++) {
    const chunk = raw.slice(i * 65535, (i + 1) * 65535);
    const len = chunk.length;
    zlib.push(i + 1 === chunks ? 1 : 0, len & 0xff, len >> 8, ~len & 0xff, (~len >> 8) & 0xff, ...chunk);
  }
  let a = 1;
  let b = 0;
  for (const byte of raw) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  zlib.push(...be32(((b << 16) | a) >>> 0));
  const out = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  const chunk = (kind, data) => {
    const body = [...kind].map((c) => c.charCodeAt(0)).concat(data);
    out.push(...be32(data.length), ...body, ...be32(crc32(body)));
  };
  chunk("IHDR", [...be32(width), ...be32(height), 8, 0, 0, 0, 0]); // 8-bit grayscale
  chunk("IDAT", zlib);
  chunk("IEND", []);
  return Uint8Array.from(out);
}

function barChart(values) {
  const BAR = 8;
  const HEIGHT = 64;
  const width = Math.max(values.length, 1) * BAR;
  return png(width, HEIGHT, (x, y) => {
    const value = values[Math.floor(x / BAR)] ?? 0;
    const top = HEIGHT - Math.floor((value * HEIGHT) / 256);
    return y >= top && x % BAR !== 0 ? 32 : 240;
  });
}

/**
 * `x` with one decimal, as Rust's `{:.1}` and C's `%.1f` write it:
 * toFixed rounds an exact tie (0.25) up, they round it to even ("0.2").
 * The ties are exactly the odd multiples of 0.25.
 */
function fixed1(x) {
  const quarters = x * 4;
  if (Number.isInteger(quarters) && quarters % 2 !== 0) {
    const down = Math.floor(x * 10);
    return ((down % 2 === 0 ? down : down + 1) / 10).toFixed(1);
  }
  return x.toFixed(1);
}

function chartValues(args) {
  const values = args?.values;
  if (!Array.isArray(values) || !values.every((v) => Number.isInteger(v) && v >= 0 && v <= 255)) {
    throw new InvalidParams("values must be a list of integers from 0 to 255");
  }
  if (values.length === 0 || values.length > 64) {
    throw new InvalidParams("values must have 1 to 64 entries");
  }
  return values;
}

const ext = new Extension("showcase").usesArtifacts().usesDynamicTools();

ext.tool(
  {
    name: "chart",
    description: "Draw a bar chart of 1-64 values (0-255) and show it",
    parameters: {
      type: "object",
      properties: {
        values: {
          type: "array",
          items: { type: "integer", minimum: 0, maximum: 255 },
          minItems: 1,
          maxItems: 64,
        },
      },
      required: ["values"],
    },
  },
  (args) => {
    const values = chartValues(args);
    const id = artifacts.publish("image/png", barChart(values));
    const n = ++state.charts;
    state.last = [...values];
    presentation.update({
      revision: n,
      status: { state: "succeeded", label: `${n} chart(s)` },
      activities: [
        {
          id: `chart:${n}`,
          kind: "chart",
          state: "succeeded",
          summary: `Bar chart of ${values.length} values`,
          references: [{ kind: "artifact", id, label: "Chart" }],
        },
      ],
      actions: [{ id: "count", label: "Count charts", command: "charts" }],
    });
    return ToolResult.text(`Chart of ${values.length} values.`).withImage(id, "image/png", "bar chart");
  },
);

ext.tool({ name: "unlock_stats", description: "Make the chart_stats tool available" }, () => {
  const update = toolsCatalog.registerDynamic(["chart_stats"]);
  return `chart_stats is available from catalog revision ${update.revision}`;
});

ext.dynamicTool(
  {
    name: "chart_stats",
    description: "Min, max and mean of the last chart's values",
    outputSchema: {
      type: "object",
      properties: { min: { type: "integer" }, max: { type: "integer" }, mean: { type: "number" } },
      required: ["min", "max", "mean"],
    },
  },
  () => {
    const values = state.last;
    if (values.length === 0) throw new Failed("no chart drawn yet in this instance");
    const min = Math.min(...values);
    const max = Math.max(...values);
    const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
    return ToolResult.text(`min ${min}, max ${max}, mean ${fixed1(mean)}`).structured({ min, max, mean });
  },
);

ext.command({ name: "charts", description: "How many charts this session drew" }, () => `${state.charts} chart(s) drawn`);

export const guest = ext.exports();
