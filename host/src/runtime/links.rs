//! Guests cannot create filesystem links.
//!
//! wasmtime-wasi keeps a guest inside its granted directories, but a
//! symlink it creates is followed later by octet, git and the user's other
//! tools, which are not sandboxed: a workspace guest could leave
//! `notes.txt -> /home/ada/.ssh/id_ed25519` or `-> ../secret.txt` for them
//! to read or overwrite (a confused deputy). A hard link cannot leave the
//! directory, but linking an existing outward symlink copies it under a
//! name of the guest's choosing. Telling safe targets from unsafe ones
//! needs path resolution the guest can race, so both calls are refused
//! outright with `not-permitted`, for every filesystem grant. Programs that
//! try a link and fall back (git, package managers) keep working.

use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::p2::bindings::filesystem::types::{Descriptor, ErrorCode, PathFlags};

/// The WASI filesystem interface as wasmtime-wasi defines it in the linker;
/// components importing any earlier 0.2 version resolve to it.
const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

/// Replaces `descriptor.symlink-at` and `descriptor.link-at` (already
/// defined by wasmtime-wasi) with refusals.
pub fn refuse_links<T: 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut types = linker.instance(FILESYSTEM_TYPES)?;
    types.func_wrap_async(
        "[method]descriptor.symlink-at",
        |_store, (_dir, _target, _name): (Resource<Descriptor>, String, String)| {
            Box::new(async { Ok((Err::<(), _>(ErrorCode::NotPermitted),)) })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.link-at",
        |_store,
         (_dir, _flags, _old, _new_dir, _new): (
            Resource<Descriptor>,
            PathFlags,
            String,
            Resource<Descriptor>,
            String,
        )| { Box::new(async { Ok((Err::<(), _>(ErrorCode::NotPermitted),)) }) },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
