//! The viewer's HTML pages.

use std::sync::Arc;

use axum::Router;

use crate::AppState;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
}
