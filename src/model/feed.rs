//! What a live feed of Kubernetes objects reports: the rows as listed, then
//! each change, and how the watch stands. `cluster::feed` produces it.

use super::problem::Denied;
use super::text::Printable;

/// An object the server sent that does not decode (a `restartCount` past
/// 2^31, a field of the wrong type): its name and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// `namespace/name`, or `?` when even that cannot be read.
    pub name: Printable,
    pub why: Printable,
}

impl Unreadable {
    /// "Pod shop/web-2 cannot be read (…): it is left out."
    pub fn sentence(&self, kind: &str) -> String {
        format!(
            "The API server sent {kind} {} that cannot be read ({}): it is left out, the others are shown.",
            self.name, self.why
        )
    }
}

/// What a feed reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Feed<R> {
    /// Listing has started (first time, or again after a 410).
    Listing {
        scope: Option<String>,
    },
    /// Part of a list under way (a feed that reports pages as they come):
    /// `loaded` rows so far with these, about `expected` in all when the
    /// server says (its `remainingItemCount`).
    Page {
        scope: Option<String>,
        rows: Vec<R>,
        loaded: usize,
        expected: Option<usize>,
    },
    /// The list for `scope` (a namespace, or everything when `None`) is
    /// complete: these rows, with the `Page`s since `Listing`, are the
    /// current set: replace what you had for it.
    Listed {
        scope: Option<String>,
        rows: Vec<R>,
    },
    Applied(R),
    Deleted(R),
    /// The watch ended before its timeout (a load balancer, an apiserver
    /// restart); it is being resumed from the last version seen.
    Cut,
    /// A watch is running again after [`Feed::Cut`] or
    /// [`Feed::Reconnecting`], from the last version seen. (If the server
    /// has compacted that version, a relist follows: `Listing`, `Listed`.)
    Resumed,
    /// A request failed; the feed retries with back-off. One sentence.
    Reconnecting(Printable),
    /// The user may not watch this at all. One sentence naming the permission.
    Forbidden(Denied),
    /// Objects the server sent that do not decode, left out of the rows:
    /// after `Listed`, the list's; during the watch, an event's.
    Unreadable(Vec<Unreadable>),
}

/// A change to the set of objects a feed keeps (see [`Feed::change`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Change<R> {
    /// The whole set, as listed.
    Listed(Vec<R>),
    Applied(R),
    Deleted(R),
}

impl<R> Feed<R> {
    /// The same update with each row turned by `f`; rows it refuses are
    /// left out (a lone one leaves an `Unreadable` of none: an update of
    /// nothing).
    pub fn filter_map<S>(self, mut f: impl FnMut(R) -> Option<S>) -> Feed<S> {
        let lone = |row: Option<S>, wrap: fn(S) -> Feed<S>| match row {
            Some(row) => wrap(row),
            None => Feed::Unreadable(Vec::new()),
        };
        match self {
            Feed::Listing { scope } => Feed::Listing { scope },
            Feed::Page {
                scope,
                rows,
                loaded,
                expected,
            } => Feed::Page {
                scope,
                rows: rows.into_iter().filter_map(f).collect(),
                loaded,
                expected,
            },
            Feed::Listed { scope, rows } => Feed::Listed {
                scope,
                rows: rows.into_iter().filter_map(f).collect(),
            },
            Feed::Applied(row) => lone(f(row), Feed::Applied),
            Feed::Deleted(row) => lone(f(row), Feed::Deleted),
            Feed::Cut => Feed::Cut,
            Feed::Resumed => Feed::Resumed,
            Feed::Reconnecting(sentence) => Feed::Reconnecting(sentence),
            Feed::Forbidden(denied) => Feed::Forbidden(denied),
            Feed::Unreadable(bad) => Feed::Unreadable(bad),
        }
    }

    /// The change to the set this update is, for a consumer of an unpaged
    /// feed that keeps only the objects (how the watch stands is said
    /// elsewhere); `None` for everything else.
    pub fn change(self) -> Option<Change<R>> {
        match self {
            Feed::Listed { rows, .. } => Some(Change::Listed(rows)),
            Feed::Applied(row) => Some(Change::Applied(row)),
            Feed::Deleted(row) => Some(Change::Deleted(row)),
            Feed::Listing { .. }
            | Feed::Page { .. }
            | Feed::Cut
            | Feed::Resumed
            | Feed::Reconnecting(_)
            | Feed::Forbidden(_)
            | Feed::Unreadable(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows are turned or left out; everything else passes as it was.
    #[test]
    fn filter_map_turns_rows_and_keeps_the_rest() {
        let even = |n: u32| n.is_multiple_of(2).then(|| n.to_string());
        let listed = Feed::Listed {
            scope: Some("shop".into()),
            rows: vec![1, 2, 3, 4],
        };
        assert_eq!(
            listed.filter_map(even),
            Feed::Listed {
                scope: Some("shop".into()),
                rows: vec!["2".to_string(), "4".to_string()],
            }
        );
        assert_eq!(Feed::Applied(2).filter_map(even), Feed::Applied("2".into()));
        assert_eq!(
            Feed::Deleted(3).filter_map(even),
            Feed::Unreadable(Vec::new())
        );
        assert_eq!(Feed::<u32>::Cut.filter_map(even), Feed::Cut);
        let sentence: Printable = "the server failed".into();
        assert_eq!(
            Feed::<u32>::Reconnecting(sentence.clone()).filter_map(even),
            Feed::Reconnecting(sentence)
        );
    }
}
