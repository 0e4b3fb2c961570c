//! One value for each deadline name, with the names written once: the
//! shim's `Deadlines` (durations) and the policy
//! file's `[deadlines]` table (`crate::policy::format::DeadlineTable`,
//! optional milliseconds) are both a `PerName`, which the
//! parent declares with this macro.

/// Declares [`PerName`] and [`NAMES`] from one list of field names.
macro_rules! per_name {
    ($($(#[$doc:meta])* pub $name:ident,)*) => {
        /// One `T` for each deadline; TOML reads it strictly (an unknown
        /// name is an error, not ignored).
        #[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct PerName<T> {
            $($(#[$doc])* pub $name: T,)*
        }

        /// Every deadline name, as `--deadline-ms` and the policy file take
        /// them.
        pub const NAMES: [&str; [$(stringify!($name)),*].len()] = [$(stringify!($name)),*];

        impl<T> PerName<T> {
            /// Each value made from its name.
            pub fn build(mut value: impl FnMut(&'static str) -> T) -> PerName<T> {
                PerName { $($name: value(stringify!($name)),)* }
            }

            /// The value called `name`, if that is a deadline's name.
            pub fn value(&self, name: &str) -> Option<&T> {
                match name {
                    $(stringify!($name) => Some(&self.$name),)*
                    _ => None,
                }
            }

            pub fn value_mut(&mut self, name: &str) -> Option<&mut T> {
                match name {
                    $(stringify!($name) => Some(&mut self.$name),)*
                    _ => None,
                }
            }
        }
    };
}

pub(super) use per_name;
