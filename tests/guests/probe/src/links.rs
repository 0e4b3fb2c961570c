//! Tools that try to leave links in a granted directory (a confused deputy:
//! the guest cannot follow them, but octet and the user's tools would).

use std::ffi::{CString, c_char, c_int};

use octet_guest::prelude::*;
use serde::Deserialize;

use crate::object_schema;

#[derive(Deserialize)]
struct Link {
    target: String,
    link: String,
}

unsafe extern "C" {
    /// wasi-libc's `symlink(2)`, which std does not expose on WASI.
    fn symlink(target: *const c_char, link: *const c_char) -> c_int;
}

pub fn register(ext: &mut Extension) {
    let schema =
        || object_schema(json!({"target": {"type": "string"}, "link": {"type": "string"}}));
    // symlink {target, link} → "linked" or a failed error with errno's text
    ext.tool(
        Tool::new("symlink", "Create a symbolic link").parameters(schema()),
        |args: Link| {
            let target = CString::new(args.target).map_err(|e| Error::failed(e.to_string()))?;
            let link = CString::new(args.link).map_err(|e| Error::failed(e.to_string()))?;
            // SAFETY: both are valid NUL-terminated strings for the call.
            if unsafe { symlink(target.as_ptr(), link.as_ptr()) } == 0 {
                Ok("linked".to_owned())
            } else {
                Err(Error::failed(format!(
                    "symlink failed: {}",
                    std::io::Error::last_os_error()
                )))
            }
        },
    );
    // hard_link {target, link} → "linked" or a failed error
    ext.tool(
        Tool::new("hard_link", "Create a hard link").parameters(schema()),
        |args: Link| {
            std::fs::hard_link(&args.target, &args.link)
                .map(|()| "linked".to_owned())
                .map_err(|e| Error::failed(format!("hard link failed: {e}")))
        },
    );
}
