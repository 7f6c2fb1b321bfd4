//! What the filter matches first for each row, `namespace/name`, kept in
//! one buffer in row order. Scoring a keystroke reads 100 000 of them: one
//! after the other in memory, the CPU streams them in; each in an
//! allocation of its own, behind its row's pointer, it waited on a cache
//! miss or two per row (three times as long for a one-letter query).

use crate::model::PodKey;

#[derive(Default)]
pub(super) struct SearchTexts {
    text: String,
    /// One per row, in row order.
    spans: Vec<Span>,
    /// Bytes of `text` that are no row's any more, or that are out of row
    /// order (a row inserted later is appended at the end): when they are
    /// half of it, the buffer is written again in row order.
    untidy: usize,
}

#[derive(Debug, Clone, Copy)]
struct Span {
    start: u32,
    len: u32,
}

impl SearchTexts {
    /// The texts of `keys`, in their order.
    pub fn of<'a>(keys: impl IntoIterator<Item = &'a PodKey>) -> Self {
        let mut texts = SearchTexts::default();
        for key in keys {
            texts.push(key);
        }
        texts
    }

    /// Row `row`'s text.
    pub fn get(&self, row: usize) -> &str {
        let Span { start, len } = self.spans[row];
        &self.text[start as usize..(start + len) as usize]
    }

    /// Adds a row after the last.
    pub fn push(&mut self, key: &PodKey) {
        let span = self.append(key);
        self.spans.push(span);
    }

    /// Adds a row at `row`, moving the later ones down.
    pub fn insert(&mut self, row: usize, key: &PodKey) {
        let span = self.append(key);
        self.untidy += span.len as usize;
        self.spans.insert(row, span);
        self.tidy();
    }

    pub fn remove(&mut self, row: usize) {
        let gone = self.spans.remove(row);
        self.untidy += gone.len as usize;
        self.tidy();
    }

    fn append(&mut self, key: &PodKey) -> Span {
        use std::fmt::Write as _;
        // As the key is shown.
        let start = self.text.len();
        let _ = write!(self.text, "{key}");
        Span {
            start: offset(start),
            len: offset(self.text.len() - start),
        }
    }

    /// Writes the buffer again in row order once half of it is untidy
    /// (which keeps the cost of each insert or removal constant, amortized).
    fn tidy(&mut self) {
        if self.untidy * 2 <= self.text.len() {
            return;
        }
        // `untidy` may count a row twice (appended out of order, then
        // removed): it decides when, not how much.
        let mut text = String::with_capacity(self.text.len().saturating_sub(self.untidy));
        for span in &mut self.spans {
            let start = text.len();
            text.push_str(&self.text[span.start as usize..(span.start + span.len) as usize]);
            span.start = offset(start);
        }
        self.text = text;
        self.untidy = 0;
    }
}

/// A position in the buffer: 4 GiB is far more than any cluster's pod
/// names (at most 253 + 64 bytes each).
fn offset(at: usize) -> u32 {
    u32::try_from(at).expect("pod names fill less than 4 GiB")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> PodKey {
        PodKey::new("shop", name)
    }

    fn all(texts: &SearchTexts) -> Vec<&str> {
        (0..texts.spans.len()).map(|i| texts.get(i)).collect()
    }

    /// The buffer never holds more than twice what its rows need.
    fn assert_bounded(texts: &SearchTexts) {
        let live: usize = all(texts).iter().map(|t| t.len()).sum();
        assert!(texts.text.len() <= 2 * live, "{:?}", texts.text);
    }

    #[test]
    fn texts_follow_inserts_and_removals_through_tidying() {
        let mut texts = SearchTexts::of(&[key("a"), key("c")]);
        texts.insert(1, &key("b"));
        assert_eq!(all(&texts), ["shop/a", "shop/b", "shop/c"]);
        assert_bounded(&texts);
        texts.remove(0);
        assert_eq!(all(&texts), ["shop/b", "shop/c"]);
        assert_eq!(texts.text, "shop/bshop/c", "written again in row order");
        texts.remove(0);
        assert_eq!(all(&texts), ["shop/c"]);
        assert_bounded(&texts);
        texts.insert(0, &key("x"));
        texts.push(&key("y"));
        assert_eq!(all(&texts), ["shop/x", "shop/c", "shop/y"]);
        assert_bounded(&texts);
    }

    #[test]
    fn any_inserts_and_removals_keep_every_text() {
        let mut rng = fastrand::Rng::with_seed(36);
        for _ in 0..200 {
            let mut texts = SearchTexts::default();
            let mut model: Vec<String> = Vec::new();
            for _ in 0..40 {
                let name = "x".repeat(rng.usize(1..30));
                if model.is_empty() || rng.bool() {
                    let at = rng.usize(..=model.len());
                    texts.insert(at, &key(&name));
                    model.insert(at, format!("shop/{name}"));
                } else {
                    let at = rng.usize(..model.len());
                    texts.remove(at);
                    model.remove(at);
                }
                assert_eq!(all(&texts), model);
            }
        }
    }

    #[test]
    fn a_hostile_name_is_matched_as_it_is_shown() {
        let texts = SearchTexts::of(&[key("web\u{1b}[2J")]);
        assert!(!texts.get(0).contains('\u{1b}'));
    }
}
