//! The team backend of [`crate::ops::query`]: runs, outputs, lineage and
//! transcripts of every machine, answered from the shared catalog (reached
//! through the driver [`crate::ops::catalog`] installs) in the local shapes
//! plus `"origin"`. Faces never name it; they pass
//! [`Scope::Team`](crate::ops::query::Scope::Team).

mod query;

pub(crate) use query::Team;
