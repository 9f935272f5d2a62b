//! Notices: what a face should tell the person about an operation that
//! succeeded anyway — the index could not be updated after the files were,
//! or a read answered from the files because the index could not be opened.
//! The library never prints; each call records its notices in the
//! [`Notices`] of the project it was given, and the face drains them after
//! the call ([`Notices::take`]) and words them its own way, as it words an
//! error's next step.
//!
//! ```
//! use logbook_model::error::{Face, Next, Step};
//! use logbook_model::notice::{Notice, Notices};
//! let notices = Notices::default();
//! notices.push(Notice::new("the index was not updated").next(Next::of(Step::SyncIndex, " brings it up to date")));
//! let [n] = notices.take().try_into().unwrap();
//! assert_eq!(n.word(Face::Cli), "the index was not updated; `logbook index sync` brings it up to date");
//! ```

use std::sync::{Arc, Mutex};

use crate::error::{Face, Next};

/// One thing a face should tell the person: what happened, and what they
/// can do about it (a [`Next`] each face words its own way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    what: String,
    next: Option<Next>,
}

impl Notice {
    /// A notice saying `what`.
    pub fn new(what: impl Into<String>) -> Notice {
        Notice {
            what: what.into(),
            next: None,
        }
    }

    /// This notice, with what to do about it.
    pub fn next(mut self, next: Next) -> Notice {
        self.next = Some(next);
        self
    }

    /// What happened, without the next step.
    pub fn what(&self) -> &str {
        &self.what
    }

    /// The notice as `face` shows it: what happened, then the next step in
    /// the face's words.
    pub fn word(&self, face: Face) -> String {
        match &self.next {
            Some(next) => format!("{}; {}", self.what, next.word(face)),
            None => self.what.clone(),
        }
    }
}

impl From<String> for Notice {
    fn from(what: String) -> Notice {
        Notice::new(what)
    }
}

impl From<&str> for Notice {
    fn from(what: &str) -> Notice {
        Notice::new(what)
    }
}

/// Where the calls given one project record their notices. Clones share
/// one list, so the store and the index, which hold clones of the project,
/// record into the caller's; a server gives each request a list of its own
/// so two requests' notices never mix.
#[derive(Debug, Clone, Default)]
pub struct Notices(Arc<Mutex<Vec<Notice>>>);

impl Notices {
    /// Records a notice for the face to show after the current call; one
    /// line per distinct thing, however often the call hit it.
    pub fn push(&self, notice: impl Into<Notice>) {
        let notice = notice.into();
        let mut list = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !list.contains(&notice) {
            list.push(notice);
        }
    }

    /// The notices recorded since the last call, oldest first.
    pub fn take(&self) -> Vec<Notice> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_are_taken_once_and_not_repeated() {
        let n = Notices::default();
        n.push("a");
        n.push("b");
        n.clone().push("a");
        let taken: Vec<String> = n.take().iter().map(|n| n.word(Face::Cli)).collect();
        assert_eq!(taken, ["a", "b"]);
        assert!(n.take().is_empty());
    }
}
