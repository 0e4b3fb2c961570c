//! Value conversion between the generated types of two WIT versions.
//!
//! An older version's module converts its values into the newest version's
//! types (the shim's own) and back with [`Convert`]. Most types are the
//! same shape in both versions, so the macros here write those conversions
//! field by field and variant by variant; a version module writes by hand
//! only the types that changed.

/// `self` as the same value in another version's type.
pub trait Convert<T> {
    fn convert(self) -> T;
}

macro_rules! same {
    ($($t:ty),*) => {
        $(impl Convert<$t> for $t {
            fn convert(self) -> $t {
                self
            }
        })*
    };
}

same!(String, bool, u8, u32, u64, i32, ());

impl<A: Convert<B>, B> Convert<Option<B>> for Option<A> {
    fn convert(self) -> Option<B> {
        self.map(Convert::convert)
    }
}

impl<A: Convert<B>, B> Convert<Vec<B>> for Vec<A> {
    fn convert(self) -> Vec<B> {
        self.into_iter().map(Convert::convert).collect()
    }
}

impl<A: Convert<B>, B, E: Convert<F>, F> Convert<Result<B, F>> for Result<A, E> {
    fn convert(self) -> Result<B, F> {
        self.map(Convert::convert).map_err(Convert::convert)
    }
}

/// Records with the same fields in both versions:
/// `records!(old::Name => new::Name { field, ... })`.
macro_rules! records {
    ($($from:ident :: $name:ident => $to:ident :: $target:ident { $($field:ident),* $(,)? })*) => {
        $(impl $crate::runtime::convert::Convert<$to::$target> for $from::$name {
            fn convert(self) -> $to::$target {
                $to::$target {
                    $($field: $crate::runtime::convert::Convert::convert(self.$field)),*
                }
            }
        })*
    };
}

/// Enums and variants with the same cases in both versions (each case
/// without a payload or with one): `cases!(old::Name => new::Name { A, B(x) })`.
macro_rules! cases {
    ($($from:ident :: $name:ident => $to:ident :: $target:ident { $($case:ident $(($payload:ident))?),* $(,)? })*) => {
        $(impl $crate::runtime::convert::Convert<$to::$target> for $from::$name {
            fn convert(self) -> $to::$target {
                match self {
                    $($from::$name::$case $(($payload))? => $to::$target::$case $(($crate::runtime::convert::Convert::convert($payload)))?),*
                }
            }
        })*
    };
}

pub(crate) use {cases, records};

#[cfg(test)]
mod tests {
    use super::Convert;

    mod old {
        pub struct Pair {
            pub name: String,
            pub tags: Vec<String>,
        }
        pub enum Shape {
            Dot,
            Line(u32),
        }
    }

    mod new {
        #[derive(Debug, PartialEq)]
        pub struct Pair {
            pub name: String,
            pub tags: Vec<String>,
        }
        #[derive(Debug, PartialEq)]
        pub enum Shape {
            Dot,
            Line(u32),
        }
    }

    records!(old::Pair => new::Pair { name, tags });
    cases!(old::Shape => new::Shape { Dot, Line(length) });

    #[test]
    fn same_shapes_convert_field_by_field() {
        let pair: new::Pair = old::Pair {
            name: "a".into(),
            tags: vec!["x".into()],
        }
        .convert();
        assert_eq!(
            pair,
            new::Pair {
                name: "a".into(),
                tags: vec!["x".into()]
            }
        );
        let shapes: Vec<new::Shape> = vec![old::Shape::Dot, old::Shape::Line(3)].convert();
        assert_eq!(shapes, [new::Shape::Dot, new::Shape::Line(3)]);
        let result: Result<Option<new::Shape>, String> =
            Ok::<_, String>(Some(old::Shape::Dot)).convert();
        assert_eq!(result, Ok(Some(new::Shape::Dot)));
    }
}
