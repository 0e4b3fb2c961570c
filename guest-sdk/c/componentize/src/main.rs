//! The C SDK's build helper (scripts/build-guests-c, a scaffold's ./build):
//!
//! - `octet-c-componentize bindgen <wit-dir> <out-dir>` generates the C
//!   bindings of the world `extension` with the pinned wit-bindgen-c;
//! - `octet-c-componentize <core.wasm> <out.wasm>` wraps a wasm32-wasi
//!   reactor module (with the `component-type` custom section that
//!   `extension_component_type.o` carries) into a component, adapting WASI
//!   preview 1 to WASI 0.2 with the reactor adapter.

use std::process::ExitCode;

use wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER;
use wit_component::ComponentEncoder;

mod bindgen;

fn componentize(input: &str, output: &str) -> Result<(), String> {
    let module = std::fs::read(input).map_err(|e| format!("read {input}: {e}"))?;
    let component = ComponentEncoder::default()
        .module(&module)
        .and_then(|encoder| {
            encoder.adapter("wasi_snapshot_preview1", WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER)
        })
        .map(|encoder| encoder.validate(true))
        .and_then(|encoder| encoder.encode())
        .map_err(|e| format!("{input}: {e:#}"))?;
    let tmp = format!("{output}.tmp");
    std::fs::write(&tmp, &component).map_err(|e| format!("write {tmp}: {e}"))?;
    std::fs::rename(&tmp, output).map_err(|e| format!("rename {tmp} to {output}: {e}"))?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [command, wit, out] if command == "bindgen" => bindgen::run(wit, out),
        [input, output] => componentize(input, output),
        _ => {
            eprintln!(
                "usage: octet-c-componentize bindgen <wit-dir> <out-dir>\n       octet-c-componentize <core.wasm> <component.wasm>"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("octet-c-componentize: {error}");
            ExitCode::FAILURE
        }
    }
}
