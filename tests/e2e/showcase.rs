//! The showcase example (`examples/showcase`): artifacts, a presentation
//! panel and a tool unlocked at run time, with the same transcript in every
//! guest language (`OCTET_WASM_LANG`, see `support::example_dir`). The PNG
//! each language draws is decoded here and checked pixel by pixel.

use crate::support::{ChildAnswer as Answer, serve_children as serve};
use crate::support::{Shim, example_dir, expect_error, expect_result, tool_text};
use base64::Engine as _;
use octet_hostsim::{ApiVersion, Frame, InitializeParams, ManifestSpec};
use serde_json::{Value, json};

fn started() -> Shim {
    let manifest = ManifestSpec::new("showcase", ApiVersion::V0_2)
        .description(
            "Charts as image artifacts, a presentation panel and a tool unlocked at run time",
        )
        .tools(&["chart", "unlock_stats"])
        .commands(&["charts"]);
    let mut shim = Shim::start(&example_dir("showcase"), "showcase.wasm", manifest);
    let mut params =
        InitializeParams::new(&shim.manifest, &shim.manifest_path, &shim.workspace).to_json();
    params["contributes"]["presentation"] = json!(true);
    let result = expect_result(&shim.initialize_with(params)).clone();
    let features = result["protocol"]["features"].as_array().unwrap().clone();
    for feature in ["artifacts", "dynamic_tools"] {
        assert!(features.contains(&json!(feature)), "{result}");
    }
    shim
}

fn tool_call(shim: &mut Shim, name: &str, arguments: Value, revision: Option<u64>) -> u64 {
    let mut params = shim.tool_params(name, arguments);
    if let Some(revision) = revision {
        params["catalog_revision"] = json!(revision);
    }
    shim.send_request("tool/call", params)
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xedb8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// Decodes the example's PNG (8-bit grayscale, stored deflate blocks),
/// checking every CRC and the Adler-32; returns (width, height, rows).
fn decode_png(png: &[u8]) -> (usize, usize, Vec<Vec<u8>>) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let mut at = 8;
    let (mut header, mut idat, mut ended) = (Vec::new(), Vec::new(), false);
    while at < png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let body = &png[at + 4..at + 8 + len];
        let crc = u32::from_be_bytes(png[at + 8 + len..at + 12 + len].try_into().unwrap());
        assert_eq!(
            crc32(body),
            crc,
            "chunk {:?}",
            String::from_utf8_lossy(&body[..4])
        );
        match &body[..4] {
            b"IHDR" => header = body[4..].to_vec(),
            b"IDAT" => idat.extend_from_slice(&body[4..]),
            b"IEND" => ended = true,
            other => panic!("unexpected chunk {other:?}"),
        }
        at += 12 + len;
    }
    assert!(ended && at == png.len(), "IEND ends the file");
    let width = u32::from_be_bytes(header[..4].try_into().unwrap()) as usize;
    let height = u32::from_be_bytes(header[4..8].try_into().unwrap()) as usize;
    assert_eq!(&header[8..], [8, 0, 0, 0, 0], "8-bit grayscale");
    assert_eq!(&idat[..2], [0x78, 0x01]);
    let (mut raw, mut p) = (Vec::new(), 2);
    loop {
        let last = idat[p] == 1;
        let len = u16::from_le_bytes([idat[p + 1], idat[p + 2]]);
        let nlen = u16::from_le_bytes([idat[p + 3], idat[p + 4]]);
        assert_eq!(len, !nlen);
        raw.extend_from_slice(&idat[p + 5..p + 5 + len as usize]);
        p += 5 + len as usize;
        if last {
            break;
        }
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    assert_eq!(idat[p..], ((b << 16) | a).to_be_bytes());
    assert_eq!(raw.len(), height * (width + 1));
    let rows = raw
        .chunks(width + 1)
        .map(|row| {
            assert_eq!(row[0], 0, "filter: none");
            row[1..].to_vec()
        })
        .collect();
    (width, height, rows)
}

/// The PNG an `artifact/publish` request carries.
fn published_png(frame: &Frame, parent: u64) -> Vec<u8> {
    assert_eq!(frame.method(), Some("artifact/publish"), "{}", frame.raw);
    assert_eq!(frame.params()["mime_type"], "image/png");
    assert_eq!(frame.params()["parent_request_id"], parent);
    base64::engine::general_purpose::STANDARD
        .decode(frame.params()["data"]["data"].as_str().unwrap())
        .unwrap()
}

/// Draws `values` and checks the picture, the snapshot and the result;
/// returns the chart's ordinal in this instance.
fn chart(shim: &mut Shim, values: &[u8], n: u64) {
    let id = tool_call(shim, "chart", json!({"values": values}), None);
    let mut png = Vec::new();
    let (reply, children) = serve(shim, id, |frame| {
        png = published_png(frame, id);
        Answer::Result(json!({"artifact_id": format!("artifact_{n}")}))
    });
    assert_eq!(children.len(), 1, "one publish per chart");
    let (width, height, rows) = decode_png(&png);
    assert_eq!((width, height), (values.len() * 8, 64));
    for (y, row) in rows.iter().enumerate() {
        for (x, &pixel) in row.iter().enumerate() {
            let top = 64 - usize::from(values[x / 8]) * 64 / 256;
            let bar = y >= top && x % 8 != 0;
            assert_eq!(pixel, if bar { 32 } else { 240 }, "pixel ({x}, {y})");
        }
    }
    let update = reply
        .before
        .iter()
        .find(|f| f.method() == Some("presentation/update"))
        .expect("a presentation snapshot before the result");
    assert_eq!(update.params()["parent_request_id"], id);
    assert_eq!(
        update.params()["snapshot"],
        json!({
            "revision": n,
            "status": {"state": "succeeded", "label": format!("{n} chart(s)")},
            "activities": [{
                "id": format!("chart:{n}"), "kind": "chart", "state": "succeeded",
                "summary": format!("Bar chart of {} values", values.len()),
                "references": [{"kind": "artifact", "id": format!("artifact_{n}"), "label": "Chart"}],
            }],
            "actions": [{"id": "count", "label": "Count charts", "command": "charts"}],
        })
    );
    assert_eq!(
        expect_result(&reply)["content"],
        json!([
            {"type": "text", "text": format!("Chart of {} values.", values.len())},
            {"type": "image", "artifact_id": format!("artifact_{n}"), "mime_type": "image/png", "alt": "bar chart"},
        ])
    );
}

fn stats(shim: &mut Shim, revision: u64) -> (String, Value) {
    let call = tool_call(shim, "chart_stats", json!({}), Some(revision));
    let reply = shim.reply(call);
    let result = expect_result(&reply).clone();
    (tool_text(&reply), result["structured_content"].clone())
}

#[test]
fn showcase_charts_presents_and_unlocks_a_tool() {
    let mut shim = started();
    chart(&mut shim, &[10, 200, 90], 1);

    // chart_stats is not in revision 0.
    let call = tool_call(&mut shim, "chart_stats", json!({}), Some(0));
    assert_eq!(expect_error(&shim.reply(call)).code, -32601);

    let id = tool_call(&mut shim, "unlock_stats", json!({}), None);
    let (reply, children) = serve(&mut shim, id, |frame| {
        assert_eq!(frame.method(), Some("tools/register"), "{}", frame.raw);
        let tools = frame.params()["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0]["name"], "chart_stats");
        assert_eq!(
            tools[0]["output_schema"]["required"],
            json!(["min", "max", "mean"])
        );
        Answer::Result(json!({"revision": 1, "tools": ["chart", "unlock_stats", "chart_stats"]}))
    });
    assert_eq!(children.len(), 1);
    assert_eq!(
        tool_text(&reply),
        "chart_stats is available from catalog revision 1"
    );
    let (text, structured) = stats(&mut shim, 1);
    assert_eq!(text, "min 10, max 200, mean 100.0");
    assert_eq!(structured["min"], 10);
    assert_eq!(structured["max"], 200);
    assert_eq!(structured["mean"].as_f64(), Some(100.0), "{structured}");

    // The panel's action: the command counts this instance's charts.
    let context = shim.context();
    let reply = shim.call(
        "command/execute",
        json!({"name": "charts", "arguments": [], "context": context}),
    );
    assert_eq!(expect_result(&reply)["text"], "1 chart(s) drawn");
    shim.shutdown();
}

#[test]
fn every_language_rounds_the_mean_the_same_way() {
    let mut shim = started();
    let id = tool_call(&mut shim, "unlock_stats", json!({}), None);
    serve(&mut shim, id, |_| {
        Answer::Result(json!({"revision": 1, "tools": ["chart", "unlock_stats", "chart_stats"]}))
    });
    // Exact ties (0.25, 1.25) round to even, as Rust's `{:.1}` does; 0.15
    // is below its tie in binary.
    let cases: [(&[u8], &str, f64); 4] = [
        (&[1, 0, 0, 0], "min 0, max 1, mean 0.2", 0.25),
        (&[5, 0, 0, 0], "min 0, max 5, mean 1.2", 1.25),
        (
            &[3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            "min 0, max 3, mean 0.1",
            0.15,
        ),
        (&[255; 64], "min 255, max 255, mean 255.0", 255.0),
    ];
    for (n, (values, text, mean)) in cases.into_iter().enumerate() {
        chart(&mut shim, values, n as u64 + 1);
        let (got, structured) = stats(&mut shim, 1);
        assert_eq!(got, text, "{values:?}");
        assert_eq!(structured["mean"].as_f64(), Some(mean), "{structured}");
    }
    shim.shutdown();
}

#[test]
fn bad_values_are_refused_before_anything_is_published() {
    let mut shim = started();
    for values in [json!([]), json!(vec![1; 65])] {
        let reply = shim.tool("chart", json!({"values": values}));
        let error = expect_error(&reply);
        assert_eq!(error.code, -32602, "{}", reply.frame.raw);
        assert_eq!(error.message, "values must have 1 to 64 entries");
        assert!(reply.before.is_empty(), "{:?}", reply.before);
    }
    for values in [json!([256]), json!([-1]), json!(["7"]), json!("1,2")] {
        let reply = shim.tool("chart", json!({"values": values}));
        assert_eq!(expect_error(&reply).code, -32602, "{}", reply.frame.raw);
        assert!(reply.before.is_empty(), "{:?}", reply.before);
    }
    // Before any chart, the stats tool has nothing to say.
    let id = tool_call(&mut shim, "unlock_stats", json!({}), None);
    serve(&mut shim, id, |_| {
        Answer::Result(json!({"revision": 1, "tools": ["chart", "unlock_stats", "chart_stats"]}))
    });
    let call = tool_call(&mut shim, "chart_stats", json!({}), Some(1));
    let reply = shim.reply(call);
    assert_eq!(expect_result(&reply)["is_error"], true);
    assert_eq!(tool_text(&reply), "no chart drawn yet in this instance");
    shim.shutdown();
}
