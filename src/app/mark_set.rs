//! A list's marks, whatever its rows: one toggled, or every row shown.

use std::collections::BTreeSet;

/// Marks `key`, or unmarks it: whether it is now marked (a list's
/// `space`, whatever its rows are).
pub fn toggle_one<K: Ord>(marks: &mut BTreeSet<K>, key: K) -> bool {
    if marks.remove(&key) {
        return false;
    }
    marks.insert(key);
    true
}

/// Marks every row `shown`, or, when each of them is marked already,
/// unmarks them: whether they are now marked (a list's `*`).
pub fn toggle_all<K: Ord>(marks: &mut BTreeSet<K>, shown: Vec<K>) -> bool {
    if shown.iter().all(|k| marks.contains(k)) {
        for key in &shown {
            marks.remove(key);
        }
        false
    } else {
        marks.extend(shown);
        true
    }
}
