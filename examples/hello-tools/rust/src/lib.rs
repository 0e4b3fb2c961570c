//! hello-tools (API 0.4): the minimal recipe of octet's Python SDK README,
//! as a component. One tool, `hello`, that takes any object and answers
//! `Hello from octet.`.

use octet_guest::prelude::*;

fn setup(ext: &mut Extension) {
    ext.tool(
        Tool::new("hello", "Return a local greeting"),
        |_: Value| "Hello from octet.",
    );
}

octet_guest::extension!(setup);
