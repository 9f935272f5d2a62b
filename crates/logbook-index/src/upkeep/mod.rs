//! Upkeep of the index: keeping it current with the files (sync, rebuild,
//! migration, the full-text build, archiving), reporting its health, and
//! the team outbox that keeps the catalog current with it.

pub(crate) mod archive;
pub(crate) mod folder_names;
mod health;
pub(crate) mod migrate;
pub(crate) mod outbox;
pub(crate) mod rebuild;
pub(crate) mod scan;
pub(crate) mod sync;
pub(crate) mod text_build;

use crate::Index;

/// An open index seen as what keeps it current: syncs, the archive's rows,
/// the full-text build, its health, and the team outbox.
pub struct Upkeep<'a> {
    pub(crate) index: &'a Index,
}
