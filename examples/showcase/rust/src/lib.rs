//! showcase: the API 0.2 services together.
//!
//! - `chart {values}` draws a bar chart, publishes it as a PNG artifact,
//!   shows it in the extension's presentation panel and returns it as an
//!   image part;
//! - `unlock_stats {}` registers the dynamic tool `chart_stats` (min, max,
//!   mean of the last chart) and returns the new catalog revision;
//! - `/charts` lists how many charts this instance drew (the panel's action).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use octet_guest::prelude::*;
use octet_guest::{artifacts, presentation, tools_catalog};
use serde::Deserialize;

#[derive(Deserialize)]
struct Chart {
    values: Vec<u8>,
}

#[derive(Default)]
struct State {
    charts: Cell<u64>,
    last: RefCell<Vec<u8>>,
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A grayscale PNG (stored, uncompressed deflate) of `width` × `height`.
fn png(width: u32, height: u32, pixel: impl Fn(u32, u32) -> u8) -> Vec<u8> {
    let mut raw = Vec::new();
    for y in 0..height {
        raw.push(0); // filter: none
        raw.extend((0..width).map(|x| pixel(x, y)));
    }
    let mut zlib = vec![0x78, 0x01];
    let chunks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == chunks.len()));
        let len = chunk.len() as u16;
        zlib.extend(len.to_le_bytes());
        zlib.extend((!len).to_le_bytes());
        zlib.extend(*chunk);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    zlib.extend(((b << 16) | a).to_be_bytes());
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8], data: &[u8]| {
        out.extend((data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend(data);
        out.extend(&body);
        out.extend(crc32(&body).to_be_bytes());
    };
    let mut header = Vec::new();
    header.extend(width.to_be_bytes());
    header.extend(height.to_be_bytes());
    header.extend([8, 0, 0, 0, 0]); // 8-bit grayscale
    chunk(b"IHDR", &header);
    chunk(b"IDAT", &zlib);
    chunk(b"IEND", &[]);
    out
}

fn bar_chart(values: &[u8]) -> Vec<u8> {
    const BAR: u32 = 8;
    const HEIGHT: u32 = 64;
    let width = (values.len() as u32).max(1) * BAR;
    png(width, HEIGHT, |x, y| {
        let value = u32::from(values.get((x / BAR) as usize).copied().unwrap_or(0));
        let top = HEIGHT - value * HEIGHT / 256;
        if y >= top && x % BAR != 0 { 32 } else { 240 }
    })
}

fn setup(ext: &mut Extension) {
    let state = Rc::new(State::default());
    ext.uses_artifacts().uses_dynamic_tools();
    let charts = Rc::clone(&state);
    ext.tool(
        Tool::new("chart", "Draw a bar chart of 1-64 values (0-255) and show it").parameters(json!({
            "type": "object",
            "properties": {"values": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 255}, "minItems": 1, "maxItems": 64}},
            "required": ["values"],
        })),
        move |args: Chart, call: &Call| -> Result<ToolResult> {
            if args.values.is_empty() || args.values.len() > 64 {
                return Err(Error::invalid_params("values must have 1 to 64 entries"));
            }
            let id = artifacts::publish("image/png", bar_chart(&args.values))?;
            let n = charts.charts.get() + 1;
            charts.charts.set(n);
            charts.last.replace(args.values.clone());
            presentation::update(&json!({
                "revision": n,
                "status": {"state": "succeeded", "label": format!("{n} chart(s)")},
                "activities": [{
                    "id": format!("chart:{n}"), "kind": "chart", "state": "succeeded",
                    "summary": format!("Bar chart of {} values", args.values.len()),
                    "references": [{"kind": "artifact", "id": id, "label": "Chart"}],
                }],
                "actions": [{"id": "count", "label": "Count charts", "command": "charts"}],
            }))?;
            let _ = call;
            Ok(ToolResult::text(format!("Chart of {} values.", args.values.len()))
                .with_image(id, "image/png", Some("bar chart".into())))
        },
    );
    ext.tool(
        Tool::new("unlock_stats", "Make the chart_stats tool available"),
        |_: Value| -> Result<String> {
            let update = tools_catalog::register_dynamic(&["chart_stats"])?;
            Ok(format!(
                "chart_stats is available from catalog revision {}",
                update.revision
            ))
        },
    );
    let stats = Rc::clone(&state);
    ext.dynamic_tool(
        Tool::new("chart_stats", "Min, max and mean of the last chart's values").output_schema(json!({
            "type": "object",
            "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}, "mean": {"type": "number"}},
            "required": ["min", "max", "mean"],
        })),
        move |_: Value| -> Result<ToolResult> {
            let values = stats.last.borrow();
            let (Some(min), Some(max)) = (values.iter().min(), values.iter().max()) else {
                return Err(Error::failed("no chart drawn yet in this instance"));
            };
            let mean = values.iter().map(|v| f64::from(*v)).sum::<f64>() / values.len() as f64;
            Ok(ToolResult::text(format!("min {min}, max {max}, mean {mean:.1}"))
                .structured(json!({"min": min, "max": max, "mean": mean})))
        },
    );
    let count = Rc::clone(&state);
    ext.command(
        Command::new("charts", "How many charts this session drew"),
        move |_: Vec<String>| format!("{} chart(s) drawn", count.charts.get()),
    );
}

octet_guest::extension!(setup);
