//! The filter's scorer: skim's V2 fuzzy score (fuzzy-matcher 0.3.7,
//! `SkimMatcherV2::default().ignore_case()`), recomputed without its
//! per-call overheads — no thread-local lookups, no `Vec<char>` copies of
//! ASCII text, no allocation per row — so that 100 000 rows can be scored
//! within a keystroke.
//!
//! It is a port, step by step, of `SkimMatcherV2::fuzzy` in its score-only
//! (two-row, "compressed") mode, and gives the same score for every input,
//! with one deliberate difference: skim keeps its score matrix between calls
//! and, for patterns that repeat a letter (`aac`), can read a bonus left in
//! that matrix by the *previous* string it scored, so its score for a row
//! depends on which rows were scored before it on the same thread. Here
//! every call starts from a fresh matrix, which is what skim computes the
//! first time a matcher is used. The unit tests compare the two on
//! arbitrary strings.
//!
//! Pod names are scored by [`sparse`], which computes the same matrix only
//! where the pattern matches; longer texts and queries by the matrix.

use std::cmp::max;

mod sparse;

// `SkimScoreConfig::default()`.
const SCORE_MATCH: i32 = 16;
const GAP_START: i32 = -3;
const GAP_EXTENSION: i32 = -1;
const BONUS_FIRST_CHAR_MULTIPLIER: i32 = 2;
const BONUS_HEAD: i32 = SCORE_MATCH / 2;
const BONUS_BREAK: i32 = SCORE_MATCH / 2 + GAP_EXTENSION;
const BONUS_CAMEL: i32 = SCORE_MATCH / 2 + 2 * GAP_EXTENSION;
const BONUS_CONSECUTIVE: i32 = -(GAP_START + GAP_EXTENSION);
const PENALTY_CASE_MISMATCH: i32 = GAP_EXTENSION * 2;
/// skim's "minus infinity".
const NEG: i32 = i16::MIN as i32;

/// skim's `CharType`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Empty,
    Upper,
    Lower,
    Number,
    HardSep,
    SoftSep,
}

const fn kind_of(c: char) -> Kind {
    match c {
        '\0' => Kind::Empty,
        ' ' | '/' | '\\' | '|' | '(' | ')' | '[' | ']' | '{' | '}' => Kind::HardSep,
        '!'..='\'' | '*'..='.' | ':'..='@' | '^'..='`' | '~' => Kind::SoftSep,
        '0'..='9' => Kind::Number,
        'A'..='Z' => Kind::Upper,
        _ => Kind::Lower,
    }
}

/// skim's in-place bonus, from `CharRole::of_type`.
fn in_place_bonus(prev: Kind, cur: Kind) -> i32 {
    match (prev, cur) {
        (Kind::Empty, _) | (Kind::HardSep, _) => BONUS_HEAD,
        (Kind::SoftSep, _) => BONUS_BREAK,
        (Kind::Lower, Kind::Upper) | (Kind::Number, Kind::Upper) => BONUS_CAMEL,
        _ => 0,
    }
}

/// A unit of text the scorer walks: a byte of ASCII text, or a `char`.
trait Unit: Copy + PartialEq {
    fn eq_ignore_case(self, other: Self) -> bool;
    fn kind(self) -> Kind;
}

impl Unit for u8 {
    #[inline]
    fn eq_ignore_case(self, other: u8) -> bool {
        LOWER[self as usize] == LOWER[other as usize]
    }

    #[inline]
    fn kind(self) -> Kind {
        KINDS[self as usize]
    }
}

impl Unit for char {
    #[inline]
    fn eq_ignore_case(self, other: char) -> bool {
        self.eq_ignore_ascii_case(&other)
    }

    #[inline]
    fn kind(self) -> Kind {
        kind_of(self)
    }
}

/// `u8::to_ascii_lowercase` for every byte.
static LOWER: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = (i as u8).to_ascii_lowercase();
        i += 1;
    }
    table
};

/// `kind_of` for every byte (only ASCII bytes are ever looked up).
static KINDS: [Kind; 256] = {
    let mut table = [Kind::Lower; 256];
    let mut i = 0;
    while i < 128 {
        table[i] = kind_of(i as u8 as char);
        i += 1;
    }
    table
};

#[derive(Clone, Copy)]
struct Cell {
    m: i32,
    p: i32,
    bonus: i32,
}

/// Buffers reused from one row to the next (one per thread).
#[derive(Default)]
pub struct Scratch {
    rows: [Vec<Cell>; 2],
    bound: Vec<usize>,
    first: Vec<usize>,
    choice: Vec<char>,
    sparse: Option<Box<sparse::Cells>>,
}

/// A query, prepared once per keystroke.
pub struct Pattern {
    text: Box<str>,
    ascii: bool,
    chars: Box<[char]>,
    /// For an ASCII query of at most 64 bytes (every query typed by
    /// hand): bit `i` of `masks[b]` is set when byte `b` matches the
    /// query's byte `i`, ignoring case. One lookup answers "which of the
    /// query's letters is this?", so the last match of every letter is
    /// found in one pass over a row.
    masks: Option<Box<[u64; 256]>>,
}

/// Which of the pattern's units a unit of text matches, ignoring case.
trait Matches<T: Copy> {
    /// Whether `c` matches the pattern's unit `i`.
    fn at(&self, i: usize, c: T) -> bool;
    /// Bit `i` set when `c` matches unit `i` (patterns of at most 64 units).
    fn mask(&self, c: T) -> u64;

    /// Bit `c` of `columns[i]` set when unit `c - 1` of `text` (at most
    /// [`sparse::MAX_TEXT`] units) matches the pattern's unit `i` (at most
    /// 64).
    fn columns(&self, text: &[T], columns: &mut [sparse::Columns]) {
        columns.fill(0);
        for (unit, &c) in text.iter().enumerate() {
            let mut mask = self.mask(c);
            while mask != 0 {
                columns[mask.trailing_zeros() as usize] |= 1 << (unit + 1);
                mask &= mask - 1;
            }
        }
    }
}

/// An ASCII query of at most 64 bytes, and its [`Pattern::masks`].
struct ByteMasks<'a>(&'a [u64; 256], &'a [u8]);

impl Matches<u8> for ByteMasks<'_> {
    #[inline]
    fn at(&self, i: usize, c: u8) -> bool {
        self.0[c as usize] >> i & 1 != 0
    }

    #[inline]
    fn mask(&self, c: u8) -> u64 {
        self.0[c as usize]
    }

    #[cfg(target_arch = "x86_64")]
    fn columns(&self, text: &[u8], columns: &mut [sparse::Columns]) {
        // SAFETY: SSE2 is part of x86_64: every such CPU has it.
        unsafe { sparse::byte_columns(text, self.1, columns) };
    }
}

/// Compares unit by unit: Unicode queries and text, and queries longer
/// than 64 bytes.
struct EachUnit<'a, T>(&'a [T]);

impl<T: Unit> Matches<T> for EachUnit<'_, T> {
    #[inline]
    fn at(&self, i: usize, c: T) -> bool {
        c.eq_ignore_case(self.0[i])
    }

    fn mask(&self, c: T) -> u64 {
        self.0
            .iter()
            .take(64)
            .enumerate()
            .filter(|&(_, &p)| c.eq_ignore_case(p))
            .fold(0, |mask, (i, _)| mask | 1 << i)
    }
}

impl Pattern {
    pub fn new(query: &str) -> Self {
        let ascii = query.is_ascii();
        let masks = (ascii && query.len() <= 64).then(|| {
            // A byte matches itself and, for a letter, its other case.
            let mut masks = Box::new([0u64; 256]);
            for (i, p) in query.bytes().enumerate() {
                masks[p.to_ascii_lowercase() as usize] |= 1 << i;
                masks[p.to_ascii_uppercase() as usize] |= 1 << i;
            }
            masks
        });
        Pattern {
            text: query.into(),
            ascii,
            chars: query.chars().collect(),
            masks,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// skim's score of `choice` for this pattern, `None` when it does not match.
    pub fn score(&self, choice: &str, scratch: &mut Scratch) -> Option<i32> {
        if self.chars.is_empty() {
            return Some(0);
        }
        if self.ascii && choice.is_ascii() {
            let pattern = self.text.as_bytes();
            match &self.masks {
                Some(masks) => fuzzy(
                    choice.as_bytes(),
                    pattern,
                    &ByteMasks(masks, pattern),
                    scratch,
                ),
                None => fuzzy(choice.as_bytes(), pattern, &EachUnit(pattern), scratch),
            }
        } else {
            let mut chars = std::mem::take(&mut scratch.choice);
            chars.clear();
            chars.extend(choice.chars());
            let score = fuzzy(&chars, &self.chars, &EachUnit(&self.chars), scratch);
            scratch.choice = chars;
            score
        }
    }
}

/// `SkimMatcherV2::fuzzy(choice, pattern, false)` with a fresh matrix:
/// [`sparse::fuzzy`] for every name a pod can have, the matrix itself for
/// longer texts and queries.
fn fuzzy<T: Unit>(
    choice: &[T],
    pattern: &[T],
    matches: &impl Matches<T>,
    scratch: &mut Scratch,
) -> Option<i32> {
    if pattern.len() <= sparse::MAX_PATTERN && choice.len() <= sparse::MAX_TEXT {
        let cells = scratch.sparse.get_or_insert_with(Default::default);
        sparse::fuzzy(choice, pattern, matches, cells)
    } else {
        fuzzy_dense(choice, pattern, matches, scratch)
    }
}

/// `SkimMatcherV2::fuzzy(choice, pattern, false)` with a fresh matrix.
///
/// Columns before the first match of the pattern's first unit are never
/// read by skim's recurrences, so the matrix here starts there: local
/// column `k` is skim's column `start + k` (choice unit `start + k - 1`).
fn fuzzy_dense<T: Unit>(
    choice: &[T],
    pattern: &[T],
    matches: &impl Matches<T>,
    scratch: &mut Scratch,
) -> Option<i32> {
    // `cheap_matches`: the first place each pattern unit matches, greedily.
    let first = &mut scratch.first;
    first.clear();
    for (j, &c) in choice.iter().enumerate() {
        if matches.at(first.len(), c) {
            first.push(j);
            if first.len() == pattern.len() {
                break;
            }
        }
    }
    if first.len() < pattern.len() {
        return None;
    }
    let start = first[0];
    let units = &choice[start..];

    // Each pattern unit's row is filled only as far as a later row reads
    // it: every read of row `j` (its diagonal, its first `left`, the
    // bonus it inherits) is at or before the last column where unit `j`
    // matches at all.
    let bound = &mut scratch.bound;
    bound.clear();
    bound.resize(pattern.len(), 0);
    last_matches(units, pattern.len(), matches, bound);
    let mut furthest = 0;
    for last in bound.iter_mut().rev() {
        furthest = furthest.max(*last);
        *last = furthest;
    }
    let width = bound[0] + 1;
    // `build_in_place_bonus`, computed where a match reads it.
    let before_start = if start == 0 {
        Kind::Empty
    } else {
        choice[start - 1].kind()
    };
    let in_place_at = |col: usize| {
        let prev = if col == 1 {
            before_start
        } else {
            units[col - 2].kind()
        };
        let bonus = in_place_bonus(prev, units[col - 1].kind());
        if start == 0 && col == 1 {
            bonus * BONUS_FIRST_CHAR_MULTIPLIER
        } else {
            bonus
        }
    };

    // A fresh matrix: every cell at its default, then row 0 reset with the
    // gap extension as its skip score (skim's resets of the other cells
    // are no-ops on default cells).
    let [row0, row1] = &mut scratch.rows;
    row0.clear();
    row0.resize(
        width,
        Cell {
            m: NEG,
            p: GAP_EXTENSION,
            bonus: 0,
        },
    );
    row1.clear();
    row1.resize(
        width,
        Cell {
            m: NEG,
            p: NEG,
            bonus: 0,
        },
    );
    for (i, &p_ch) in pattern.iter().enumerate() {
        // Pattern unit `i` fills row `(i + 1) & 1` from row `i & 1`.
        let (cur, prev): (&mut [Cell], &[Cell]) = if i & 1 == 0 {
            (&mut row1[..width], &row0[..width])
        } else {
            (&mut row0[..width], &row1[..width])
        };
        let end = bound[i];
        let mut col = first[i] - start + 1;
        let mut left = cur[col - 1];
        while col <= end {
            // The columns up to the next match only carry the gap score
            // on (skim's recurrence with no match: `m` stays at minus
            // infinity, the bonus at 0).
            let matched = units[col - 1..end]
                .iter()
                .position(|&c| matches.at(i, c))
                .map(|at| col + at);
            let gap_end = matched.unwrap_or(end + 1);
            if col < gap_end {
                // skim's `p = max(GAP_START + GAP_EXTENSION + NEG,
                // GAP_EXTENSION + p)` from cell to cell, unrolled: the
                // cells do not wait for each other.
                let first = max(GAP_START + GAP_EXTENSION + left.m, GAP_EXTENSION + left.p);
                for (skipped, cell) in (0..).zip(&mut cur[col..gap_end]) {
                    *cell = Cell {
                        m: NEG,
                        p: max(GAP_START + GAP_EXTENSION + NEG, first - skipped),
                        bonus: 0,
                    };
                }
                left = cur[gap_end - 1];
            }
            let Some(col_matched) = matched else { break };
            col = col_matched;
            let c_ch = units[col - 1];
            let match_score = if c_ch == p_ch {
                SCORE_MATCH
            } else {
                max(0, SCORE_MATCH + PENALTY_CASE_MISMATCH)
            };
            let diagonal = prev[col - 1];
            let in_place = in_place_at(col);
            let consecutive = max(left.bonus, max(in_place, BONUS_CONSECUTIVE));
            cur[col - 1].bonus = consecutive;
            // skim takes the match path on ties; the score is the same.
            // A matched cell keeps the bonus it had (skim sets it only
            // when the next unit matches, or zeroes it on a mismatch).
            let cell = Cell {
                m: max(diagonal.m + consecutive, diagonal.p + in_place) + match_score,
                p: max(GAP_START + GAP_EXTENSION + left.m, GAP_EXTENSION + left.p),
                bonus: cur[col].bonus,
            };
            cur[col] = cell;
            left = cell;
            col += 1;
        }
    }

    let last = if pattern.len() & 1 == 1 {
        &*row1
    } else {
        &*row0
    };
    last[first[pattern.len() - 1] - start..=bound[pattern.len() - 1]]
        .iter()
        .map(|cell| cell.m)
        .max()
}

/// Sets `last[i]` to one past the last place in `units` where the
/// pattern's unit `i` matches (0 where it does not).
fn last_matches<T: Unit>(units: &[T], len: usize, matches: &impl Matches<T>, last: &mut [usize]) {
    if len > 64 {
        for (i, at) in last.iter_mut().enumerate() {
            *at = units
                .iter()
                .rposition(|&c| matches.at(i, c))
                .map_or(0, |at| at + 1);
        }
        return;
    }
    // One pass from the end: each unit of text marks the pattern units it
    // is the last match of.
    let all = u64::MAX >> (64 - len);
    let mut found = 0u64;
    for (j, &c) in units.iter().enumerate().rev() {
        let mask = matches.mask(c);
        let mut new = mask & !found;
        while new != 0 {
            last[new.trailing_zeros() as usize] = j + 1;
            new &= new - 1;
        }
        found |= mask;
        if found == all {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use fuzzy_matcher::FuzzyMatcher;
    use fuzzy_matcher::skim::SkimMatcherV2;
    use proptest::prelude::*;

    use super::*;

    /// skim as the filter uses it, from a fresh matrix (a new matcher).
    fn skim(choice: &str, query: &str) -> Option<i64> {
        SkimMatcherV2::default()
            .ignore_case()
            .fuzzy_match(choice, query)
    }

    fn ours(choice: &str, query: &str) -> Option<i64> {
        Pattern::new(query)
            .score(choice, &mut Scratch::default())
            .map(i64::from)
    }

    #[test]
    fn scores_like_skim_on_pod_names() {
        let choices = [
            "team-0042/svc-042-9e3779b1-0002a",
            "shop/storefront-7d9f-x2",
            "kube-system/coredns-5d78c9869d-abcde",
            "app=svc-042 pod-template-hash=6d8f",
            "node-1",
            "ÜNÏCÖDÉ/namé",
            "",
        ];
        let queries = [
            "s", "svc", "svc-042", "SVC", "st/fr", "aac", "a-a", "0042", "namé", "É", "zzz",
        ];
        for c in choices {
            for q in queries {
                assert_eq!(ours(c, q), skim(c, q), "{c:?} {q:?}");
            }
        }
    }

    #[test]
    fn a_reused_skim_matcher_can_differ_which_is_why_this_port_exists() {
        // skim reads a bonus the previous call left in its cached matrix.
        let reused = SkimMatcherV2::default().ignore_case();
        let fresh = reused.fuzzy_match("aaac", "aac");
        let _ = reused.fuzzy_match("xx/a", "a");
        assert_ne!(reused.fuzzy_match("aaac", "aac"), fresh);
        assert_eq!(ours("aaac", "aac"), fresh);
    }

    #[test]
    fn a_query_longer_than_64_letters_scores_like_skim_too() {
        let name = "team-0042/svc-042-9e3779b1-0002a".repeat(4);
        for query in [&name[..70], &name[3..100], "t".repeat(65).as_str()] {
            assert!(query.len() > 64);
            assert_eq!(ours(&name, query), skim(&name, query), "{query:?}");
        }
        let unicode = format!("é{}", &name[..70]);
        assert_eq!(
            ours(&format!("é{name}"), &unicode),
            skim(&format!("é{name}"), &unicode)
        );
    }

    /// The matrix and the sparse rows, on the same text and query.
    fn dense_and_sparse(choice: &str, query: &str, cells: &mut sparse::Cells) -> [Option<i32>; 2] {
        let pattern: Vec<char> = query.chars().collect();
        let text: Vec<char> = choice.chars().collect();
        let matches = EachUnit(&pattern);
        [
            fuzzy_dense(&text, &pattern, &matches, &mut Scratch::default()),
            sparse::fuzzy(&text, &pattern, &matches, cells),
        ]
    }

    #[test]
    fn the_sparse_rows_score_like_the_matrix_up_to_their_limits() {
        let name = "team-0042/svc-042-9e3779b1-0002a/".repeat(2);
        let longest = &name[..sparse::MAX_TEXT];
        let mut cells = sparse::Cells::default();
        for query in ["t", "svc-042", "aaa", "2a/t", "tt", "ttt", &longest[..40]] {
            let [dense, sparse] = dense_and_sparse(longest, query, &mut cells);
            assert_eq!(dense.is_some(), query != "ttt", "{query:?}");
            assert_eq!(sparse, dense, "{query:?}");
        }
    }

    fn text() -> impl Strategy<Value = String> {
        // Pod-name-like text with separators, case, digits and some Unicode.
        proptest::string::string_regex("[a-cA-C0-2/ ._=é\\-]{0,24}").unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn same_score_as_skim(choice in text(), query in "[a-cA-C0-2/._é\\-]{1,6}") {
            prop_assert_eq!(ours(&choice, &query), skim(&choice, &query));
        }

        #[test]
        fn same_score_as_skim_on_any_text(choice in ".{0,16}", query in ".{1,4}") {
            prop_assert_eq!(ours(&choice, &query), skim(&choice, &query));
        }

        #[test]
        fn sparse_rows_score_like_the_matrix(
            pairs in proptest::collection::vec(
                ("[a-cA-C0-2/ ._=\\-]{0,63}", "[a-cA-C0-2/._\\-]{1,10}"),
                1..6,
            ),
        ) {
            // One set of buffers for all, as a thread scoring rows keeps it.
            let mut cells = sparse::Cells::default();
            for (choice, query) in &pairs {
                let [dense, sparse] = dense_and_sparse(choice, query, &mut cells);
                prop_assert_eq!(sparse, dense, "{:?} {:?}", choice, query);
            }
        }

        #[test]
        fn repeated_letters_score_like_skim(choice in "[aAb/-]{0,40}", query in "[ab-]{1,7}") {
            // Few letters, so each matches many times: what skim leaves in
            // its two rows and reads back counts here.
            prop_assert_eq!(ours(&choice, &query), skim(&choice, &query));
            let [dense, sparse] = dense_and_sparse(&choice, &query, &mut sparse::Cells::default());
            prop_assert_eq!(sparse, dense);
        }

        #[test]
        fn long_ascii_names_score_like_skim(
            pairs in proptest::collection::vec(
                ("[a-cA-C0-2/ ._=\\-]{0,127}", "[a-cA-C0-2/._\\-]{1,10}"),
                1..6,
            ),
        ) {
            // Bytes compared 16 at a time, up to the longest text they take.
            let mut scratch = Scratch::default();
            for (choice, query) in &pairs {
                let ours = Pattern::new(query).score(choice, &mut scratch).map(i64::from);
                prop_assert_eq!(ours, skim(choice, query), "{:?} {:?}", choice, query);
            }
        }

        #[test]
        fn scratch_reuse_does_not_change_scores(
            pairs in proptest::collection::vec((text(), "[a-cA-C0-2\\-]{1,5}"), 1..8),
        ) {
            let mut scratch = Scratch::default();
            for (choice, query) in &pairs {
                let reused = Pattern::new(query).score(choice, &mut scratch).map(i64::from);
                prop_assert_eq!(reused, skim(choice, query));
            }
        }
    }
}
