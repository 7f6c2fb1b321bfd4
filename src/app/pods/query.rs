//! The pod list's filter query: what is typed, and which fields it looks at.

use super::super::score::Pattern;

/// A filter query: fuzzy over every field, or over one field alone after
/// its prefix: STATUS (`status:crash`) or CONTEXT (`ctx:prod`).
pub(super) struct Query {
    text: Box<str>,
    pub(super) pattern: Pattern,
    pub(super) only: Option<OneField>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum OneField {
    Status,
    Context,
}

impl Query {
    const PREFIXES: [(&'static str, OneField); 2] =
        [("status:", OneField::Status), ("ctx:", OneField::Context)];

    pub(super) fn new(text: &str) -> Self {
        let (only, rest) = Self::PREFIXES
            .iter()
            .find_map(|(prefix, field)| {
                text.strip_prefix(prefix)
                    .map(|rest| (Some(*field), rest.trim_start()))
            })
            .unwrap_or((None, text));
        Query {
            text: text.into(),
            pattern: Pattern::new(rest),
            only,
        }
    }

    pub(super) fn as_str(&self) -> &str {
        &self.text
    }

    /// What to highlight in namespace/name (nothing for a one-field query).
    pub(super) fn highlight(&self) -> &str {
        match self.only {
            Some(_) => "",
            None => self.pattern.as_str(),
        }
    }

    /// Whether every row matching `self` matches `shorter` too.
    pub(super) fn extends(&self, shorter: &Query) -> bool {
        self.only == shorter.only && self.text.starts_with(&*shorter.text)
    }
}
