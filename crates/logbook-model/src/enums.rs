//! The one macro for the closed sets of words the seeds define (statuses,
//! output types, agent types, modes…).
//!
//! Lenient on read, strict on write: a file another tool wrote may carry a
//! word Logbook does not know, which is kept as `Other` and written back as
//! it was; a value given by a user or an agent must be one of the known
//! words ([`std::str::FromStr`], which clap parses arguments with), so a
//! typo never becomes a new status.

/// Declares a string enum: known variants plus `Other(String)`, with
/// `as_str`, `KNOWN`, `is_known`, `Display`, strict `FromStr`, `Serialize`
/// and lenient `Deserialize`.
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($field:literal) {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        $vis enum $name {
            $($(#[$vmeta])* $variant,)+
            /// A word another tool wrote; kept as is, never written by Logbook.
            Other(String),
        }

        impl $name {
            /// The words Logbook writes, in the seed's order.
            pub const KNOWN: &'static [&'static str] = &[$($text),+];

            /// The word as written in files and on the command line.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $text,)+
                    $name::Other(s) => s,
                }
            }

            /// Whether this is one of the seed's words (not another tool's).
            pub fn is_known(&self) -> bool {
                !matches!(self, $name::Other(_))
            }

            /// Reads a word from a file: unknown words are kept.
            pub fn lenient(s: &str) -> Self {
                match s {
                    $($text => $name::$variant,)+
                    _ => $name::Other(s.to_string()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::error::Error;
            fn from_str(s: &str) -> $crate::error::Result<Self> {
                match Self::lenient(s.trim()) {
                    $name::Other(_) => Err($crate::error::Error::invalid(
                        $field,
                        s,
                        format!("expected one of: {}", Self::KNOWN.join(", ")),
                    )),
                    v => Ok(v),
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                Ok(Self::lenient(&String::deserialize(d)?))
            }
        }
    };
}

pub(crate) use string_enum;
