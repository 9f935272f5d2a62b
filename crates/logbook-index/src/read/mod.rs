//! Reading the index: the queries every listing, lookup and search asks,
//! answered from the rows (verify-on-read re-reads only a file that moved).

pub(crate) mod filter;
pub(crate) mod found;
mod listing;
mod lookup;
mod query;
pub(crate) mod settled;
pub(crate) mod text_page;

use crate::Index;

/// An open index seen as the answers it gives: every query, lookup and
/// listing, and nothing that changes what it holds beyond verify-on-read.
pub struct Reader<'a> {
    pub(crate) index: &'a Index,
}
