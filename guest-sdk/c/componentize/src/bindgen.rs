//! `bindgen <wit-dir> <out-dir>`: the C bindings of the world `extension`,
//! generated from the WIT by the pinned wit-bindgen-c at every build, so
//! they cannot drift from `wit/`.

use std::path::Path;

use wit_bindgen_core::Files;
use wit_parser::Resolve;

/// Writes `extension.h`, `extension.c` and `extension_component_type.o`
/// (the component-type section the core module carries to `componentize`)
/// into `out`. A file whose bytes are unchanged is left alone, so its
/// modification time says when the WIT last changed.
pub fn run(wit: &str, out: &str) -> Result<(), String> {
    let mut resolve = Resolve::default();
    let (package, _) = resolve
        .push_path(wit)
        .map_err(|e| format!("the WIT in {wit}: {e:#}"))?;
    let world = resolve
        .select_world(&[package], Some("extension"))
        .map_err(|e| format!("the WIT in {wit} has no world `extension`: {e:#}"))?;
    let mut files = Files::default();
    wit_bindgen_c::Opts::default()
        .build()
        .generate(&mut resolve, world, &mut files)
        .map_err(|e| format!("generating the C bindings of {wit}: {e:#}"))?;
    let out = Path::new(out);
    std::fs::create_dir_all(out).map_err(|e| format!("create {}: {e}", out.display()))?;
    for (name, contents) in files.iter() {
        let path = out.join(name);
        if std::fs::read(&path).is_ok_and(|old| old == contents) {
            continue;
        }
        let tmp = out.join(format!("{name}.tmp"));
        std::fs::write(&tmp, contents).map_err(|e| format!("write {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, &path)
            .map_err(|e| format!("rename {} to {}: {e}", tmp.display(), path.display()))?;
    }
    Ok(())
}
