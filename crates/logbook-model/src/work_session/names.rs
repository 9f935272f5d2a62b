//! The names people give: a session id's prefix and parts, required
//! values, and milestone names matched as people retype them.

use crate::error::{Error, Result};

/// Prefixes the seed names; others of 2–5 capital letters are allowed too.
pub const KNOWN_PREFIXES: [&str; 5] = ["SES", "ENG", "ANA", "DES", "TST"];

/// Checks a session id prefix: 2–5 capital letters.
pub fn validate_prefix(prefix: &str) -> Result<()> {
    if (2..=5).contains(&prefix.len()) && prefix.chars().all(|c| c.is_ascii_uppercase()) {
        Ok(())
    } else {
        Err(Error::invalid(
            "prefix",
            prefix,
            format!(
                "use 2 to 5 capital letters, e.g. {}",
                KNOWN_PREFIXES.join(", ")
            ),
        ))
    }
}

/// Upper-cases a client or project name and refuses anything but letters
/// and digits, because `-` separates the id's parts.
pub fn id_part(field: &'static str, value: &str) -> Result<String> {
    let up = value.trim().to_ascii_uppercase();
    if !up.is_empty() && up.chars().all(|c| c.is_ascii_alphanumeric()) {
        Ok(up)
    } else {
        Err(Error::invalid(
            field,
            value,
            "use letters and digits only (they are upper-cased), e.g. ACME",
        ))
    }
}

/// The name among `candidates` closest to `name` by edit distance, ignoring
/// case, when it is close enough to be a typo of it (at most a third of the
/// name's letters differ, and never more than 3).
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let wanted: Vec<char> = name.trim().to_lowercase().chars().collect();
    let limit = (wanted.len() / 3).clamp(1, 3);
    candidates
        .into_iter()
        .map(|c| {
            let have: Vec<char> = c.trim().to_lowercase().chars().collect();
            (edit_distance(&wanted, &have), c)
        })
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance: insertions, deletions and substitutions.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Whether two milestone names are the same milestone: people retype a
/// name with other capitals or spaces around it.
pub fn same_milestone(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// Refuses an empty (or all-blank) value for `field`, or one longer than
/// [`crate::limits::MAX_TEXT_FIELD`].
pub fn non_empty(field: &'static str, value: &str) -> Result<String> {
    crate::limits::bounded(field, value)?;
    if value.trim().is_empty() {
        Err(Error::invalid(field, value, "must not be empty"))
    } else {
        Ok(value.to_string())
    }
}
