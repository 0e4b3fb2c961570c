//! What epoch interruption and fuel cost on a CPU-bound guest, measured in
//! process with the shim's own runtime layer: the same component and call,
//! one engine per setting.

use crate::stats::Summary;
use octet_wasm::cancel::CancelToken;
use octet_wasm::runtime::offline::Offline;
use octet_wasm::runtime::types::{CallContext, ToolCall};
use octet_wasm::runtime::{FsAccess, Limits, Runtime, Sandbox};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub fn measure(component: &Path, n: u64, runs: usize) -> Vec<(String, Summary)> {
    let file = octet_wasm::runtime::component_file::read_hashed(component)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", component.display()));
    let settings = [
        ("plain (no epoch, no fuel)", false, None),
        ("epoch interruption (the shim's default)", true, None),
        ("epoch + fuel", true, Some(u64::MAX / 4)),
    ];
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let sandbox = Sandbox {
        filesystem: FsAccess::None,
        workspace: std::env::temp_dir(),
        network: false,
        env: Vec::new(),
        scratch: None,
        output_bytes: 0,
    };
    let mut loaded = Vec::new();
    for (name, epoch, fuel) in settings {
        let limits = Limits {
            epoch_interruption: epoch,
            fuel,
            ..Limits::default()
        };
        let (rt, _) =
            Runtime::<Offline>::load(&file, component, limits, None).expect("load the bench guest");
        loaded.push((name, rt));
    }
    let call = ToolCall {
        name: "burn".into(),
        arguments: format!("{{\"n\":{n}}}"),
        catalog_revision: None,
    };
    let cx = CallContext {
        request_id: 1,
        workspace: String::new(),
        execution_scope: None,
        resource_owner: None,
        host: "{}".into(),
    };
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); loaded.len()];
    runtime.block_on(async {
        let mut instances = Vec::new();
        for (_, rt) in &loaded {
            instances.push(
                rt.instantiate(Arc::new(Offline), &sandbox)
                    .await
                    .expect("instantiate"),
            );
        }
        // Interleave the settings so machine noise spreads evenly.
        for _ in 0..runs.max(3) {
            for (i, instance) in instances.iter_mut().enumerate() {
                let started = Instant::now();
                let answer = instance
                    .call_tool((), CancelToken::new(), call.clone(), cx.clone())
                    .await;
                assert!(matches!(answer, Ok(Ok(_))), "burn failed");
                samples[i].push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
    });
    loaded
        .iter()
        .zip(samples)
        .map(|((name, _), values)| ((*name).to_owned(), Summary::of(values)))
        .collect()
}
