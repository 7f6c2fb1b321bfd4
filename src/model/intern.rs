//! One shared copy of each string that many rows repeat: namespaces, node
//! names, statuses, a ReplicaSet's labels. 100 000 pods name a few dozen
//! namespaces and nodes; each row holding its own copies cost ~15 MB.

use std::collections::HashSet;
use std::sync::Arc;

/// Strings kept at most: past this, those no row holds any more are
/// dropped (a cluster whose every pod has unique labels does not grow the
/// set without bound).
const MOST: usize = 1 << 16;

#[derive(Debug, Default)]
pub struct Strings {
    set: HashSet<Arc<str>>,
}

impl Strings {
    /// The shared copy of `text`.
    pub fn get(&mut self, text: &str) -> Arc<str> {
        if let Some(shared) = self.set.get(text) {
            return shared.clone();
        }
        if self.set.len() >= MOST {
            self.set.retain(|s| Arc::strong_count(s) > 1);
            if self.set.len() >= MOST / 2 {
                self.set.clear();
            }
        }
        let shared: Arc<str> = text.into();
        self.set.insert(shared.clone());
        shared
    }

    pub fn len(&self) -> usize {
        self.set.len()
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_strings_share_one_copy() {
        let mut strings = Strings::default();
        let a = strings.get("team-0001");
        let b = strings.get(&String::from("team-0001"));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &strings.get("team-0002")));
        assert_eq!(strings.len(), 2);
    }

    #[test]
    fn the_set_forgets_strings_no_row_holds_once_full() {
        let mut strings = Strings::default();
        let kept = strings.get("kept");
        for i in 0..MOST - 1 {
            strings.get(&format!("unique-{i}"));
        }
        // Full: the next new string drops every one nobody holds.
        let _ = strings.get("one more");
        assert_eq!(strings.len(), 2, "`kept` (held) and `one more`");
        assert!(Arc::ptr_eq(&kept, &strings.get("kept")));
    }
}
