//! Notices: what a face should tell the person about an operation that
//! succeeded anyway — the index could not be updated after the files were,
//! or a read answered from the files because the index could not be opened.
//! The library never prints; each face drains these after a call
//! ([`take`]) and shows them its own way (the CLI on stderr).
//!
//! They are kept per thread, so a server that runs each request on its own
//! thread (or drains right after each call) never mixes two requests' notices.

use std::cell::RefCell;

thread_local! {
    static NOTICES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Records a notice for the face to show after the current call (faces
/// push their own too, e.g. the MCP server's warnings of a full history).
pub fn push(message: impl Into<String>) {
    let message = message.into();
    NOTICES.with(|n| {
        let mut n = n.borrow_mut();
        // One line per distinct thing, however often the call hit it.
        if !n.contains(&message) {
            n.push(message);
        }
    });
}

/// The notices recorded on this thread since the last call, oldest first.
pub fn take() -> Vec<String> {
    NOTICES.with(|n| std::mem::take(&mut *n.borrow_mut()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_are_taken_once_and_not_repeated() {
        push("a");
        push("b");
        push("a");
        assert_eq!(take(), ["a", "b"]);
        assert!(take().is_empty());
    }
}
