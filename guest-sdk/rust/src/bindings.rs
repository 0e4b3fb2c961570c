//! The WIT bindings, generated from `wit/0.4.0` (`octet:extension@0.4.0`) at
//! build time.
//!
//! Authors never use this module directly: the SDK re-exports the types they
//! need and wraps every import and export. It is public only because the
//! [`extension!`](crate::extension) macro expands in the author's crate and
//! must name the generated export glue from there.

wit_bindgen::generate!({
    path: "wit",
    world: "extension",
    // The export macro is defined here but invoked by `extension!` in the
    // author's crate, so it must be `#[macro_export]`ed.
    pub_export_macro: true,
    default_bindings_module: "octet_guest::bindings",
    // Value types compare in tests and as map keys (e.g. a `ResourceOwner`).
    additional_derives: [PartialEq, Eq, Hash],
});
