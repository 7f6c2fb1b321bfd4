//! The same recurrences as [`super::fuzzy_dense`], computed only where a
//! pattern unit matches, and only as far as they change the score.
//!
//! In skim's matrix every cell between two matches of a pattern unit is a
//! gap: its match score is minus infinity, its bonus 0, and its skip score
//! falls by one per column from the cell before the gap. So a row is known
//! from its matches alone: the columns where its unit matches are the bits
//! of a [`Columns`] (found 16 bytes at a time for ASCII), the scores are
//! stored at those columns only, and a gap cell is worked out from the
//! match before it when a later row reads it. And no row is read past the
//! last match of the pattern's last unit, so matches after it are skipped.
//!
//! skim fills two rows in turn, so a row starts with what the row two
//! above left behind; it reads that in two places, both kept here: the
//! cell just before the row's first match, and the bonus of the cells
//! before its matches (`bonus` below, one per parity of row, as skim's).
//!
//! The matrix's cost grows with every letter typed, this one's with the
//! matches that count (docs/benchmarks.md's filter figures). The property tests
//! compare the two, also on texts where every letter matches many times.

use std::cmp::max;

use super::{
    BONUS_CONSECUTIVE, BONUS_FIRST_CHAR_MULTIPLIER, GAP_EXTENSION, GAP_START, Kind, Matches, NEG,
    PENALTY_CASE_MISMATCH, SCORE_MATCH, Unit, in_place_bonus,
};

/// Longest pattern: one bit per unit in [`Matches::mask`].
pub const MAX_PATTERN: usize = 64;
/// Longest text: column `c` (text unit `c - 1`; column 0 is before the
/// text) is bit `c` of a [`Columns`]. Longer texts (rare for a pod's
/// `namespace/name`) go to the matrix.
pub const MAX_TEXT: usize = BITS - 1;

/// A set of columns, one bit each.
pub type Columns = u64;
const BITS: usize = Columns::BITS as usize;

/// Buffers reused from one call to the next.
pub struct Cells {
    /// Per pattern unit: the columns where it matches, and its first match
    /// after the unit before's.
    columns: [Columns; MAX_PATTERN],
    firsts: [usize; MAX_PATTERN],
    /// Pattern unit `i` is in `rows[i % 3]` (a row reads the two above it).
    rows: [Row; 3],
    /// skim's bonus row of each parity, with the columns that are not 0.
    bonus: [[i32; BITS]; 2],
    bonus_set: [Columns; 2],
}

impl Default for Cells {
    fn default() -> Self {
        Cells {
            columns: [0; MAX_PATTERN],
            firsts: [0; MAX_PATTERN],
            rows: [Row::default(), Row::default(), Row::default()],
            bonus: [[0; BITS]; 2],
            bonus_set: [0; 2],
        }
    }
}

/// One pattern unit's row: its matches from its first one after the unit
/// before's to the last match of the pattern's last unit.
struct Row {
    matched: Columns,
    /// Match and skip scores, at the matched columns only.
    m: [i32; BITS],
    p: [i32; BITS],
}

impl Default for Row {
    fn default() -> Self {
        Row {
            matched: 0,
            m: [0; BITS],
            p: [0; BITS],
        }
    }
}

/// A cell's match and skip scores.
#[derive(Clone, Copy)]
struct Scores {
    m: i32,
    p: i32,
}

/// The skip score of the cell after `cell`.
fn skip_after(cell: Scores) -> i32 {
    max(GAP_START + GAP_EXTENSION + cell.m, GAP_EXTENSION + cell.p)
}

impl Row {
    /// The cell at `col`, which lies between `low` and the row's end.
    /// Without branches: whether `col` is a match is data, not a pattern
    /// the CPU can learn.
    #[inline]
    fn at(&self, col: usize) -> Scores {
        let upto = self.matched & (Columns::MAX >> (MAX_TEXT - col));
        debug_assert!(upto != 0, "column {col} is before the row's first match");
        let last = MAX_TEXT - upto.leading_zeros() as usize;
        let found = Scores {
            m: self.m[last],
            p: self.p[last],
        };
        // A gap cell: skim's skip score carried on from the last match,
        // falling by one per column, never below its floor.
        let gap = max(
            GAP_START + GAP_EXTENSION + NEG,
            skip_after(found) - (col as i32 - last as i32 - 1),
        );
        let matched = last == col;
        Scores {
            m: if matched { found.m } else { NEG },
            p: if matched { found.p } else { gap },
        }
    }
}

/// skim's row before the pattern (its first row, reset) and the row it
/// starts the other buffer with.
const RESET_ROW: Scores = Scores {
    m: NEG,
    p: GAP_EXTENSION,
};
const FRESH_ROW: Scores = Scores { m: NEG, p: NEG };

/// Columns above `col`.
fn above(col: usize) -> Columns {
    if col >= MAX_TEXT {
        0
    } else {
        Columns::MAX << (col + 1)
    }
}

/// [`super::fuzzy_dense`] for a pattern of at most [`MAX_PATTERN`] units
/// and a text of at most [`MAX_TEXT`].
pub fn fuzzy<T: Unit>(
    choice: &[T],
    pattern: &[T],
    matches: &impl Matches<T>,
    cells: &mut Cells,
) -> Option<i32> {
    let len = pattern.len();
    debug_assert!(len <= MAX_PATTERN && choice.len() <= MAX_TEXT);
    // A fresh matrix: no bonus anywhere.
    cells.bonus_set = [0; 2];
    let columns = &mut cells.columns[..len];
    matches.columns(choice, columns);

    // Where each unit first matches after the previous one (skim's greedy
    // `cheap_matches`).
    let firsts = &mut cells.firsts;
    let mut after = 0;
    for (first, &cols) in firsts.iter_mut().zip(columns.iter()) {
        let next = cols & above(after);
        if next == 0 {
            return None;
        }
        after = next.trailing_zeros() as usize;
        *first = after;
    }
    // skim fills a row up to the last match of its unit or of any later
    // one. But a row is read by the rows below only before where they
    // match (their diagonal, the cell before their first match, the bonus
    // of the cell before each match), and the last row's matches end at
    // its unit's last match: no row's cells after that change the score.
    let end = MAX_TEXT - columns[len - 1].leading_zeros() as usize;

    let in_place_at = |col: usize| {
        let prev = if col == 1 {
            Kind::Empty
        } else {
            choice[col - 2].kind()
        };
        let bonus = in_place_bonus(prev, choice[col - 1].kind());
        if col == 1 {
            bonus * BONUS_FIRST_CHAR_MULTIPLIER
        } else {
            bonus
        }
    };

    for (i, &p_ch) in pattern.iter().enumerate() {
        let low = firsts[i];
        let span = !above(end) & !((1 << low) - 1);
        let matched = columns[i] & span;
        // The cell before the first match, as the row two above left it.
        let start = match i {
            0 => FRESH_ROW,
            1 => RESET_ROW,
            _ => cells.rows[(i - 2) % 3].at(low - 1),
        };
        let (row, up) = row_and_above(&mut cells.rows, i);
        let parity = (i + 1) & 1;
        let bonus = &mut cells.bonus[parity];
        let bonus_set = &mut cells.bonus_set[parity];
        // The bonus of a cell as the row started (this row writes a cell's
        // bonus only after reading it).
        let old_bonus =
            |set: Columns, bonus: &[i32; BITS], col: usize| bonus[col] & -((set >> col & 1) as i32);

        row.matched = matched;
        let mut rest = matched;
        while rest != 0 {
            let col = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let (left, left_bonus) = if col == low {
                (start, old_bonus(*bonus_set, bonus, col - 1))
            } else {
                // A gap cell before has no bonus.
                let after_match = (matched >> (col - 1) & 1) as i32;
                let bonus = old_bonus(*bonus_set, bonus, col - 1) & -after_match;
                (row.at(col - 1), bonus)
            };
            let diagonal = match up {
                Some(up) => up.at(col - 1),
                None => RESET_ROW,
            };
            let in_place = in_place_at(col);
            let consecutive = max(left_bonus, max(in_place, BONUS_CONSECUTIVE));
            bonus[col - 1] = consecutive;
            *bonus_set |= 1 << (col - 1);
            let c_ch = choice[col - 1];
            let match_score = if c_ch == p_ch {
                SCORE_MATCH
            } else {
                max(0, SCORE_MATCH + PENALTY_CASE_MISMATCH)
            };
            row.m[col] = max(diagonal.m + consecutive, diagonal.p + in_place) + match_score;
            row.p[col] = skip_after(left);
        }
        // Gap cells have no bonus, unless a match right after them gave
        // them one.
        *bonus_set &= !(span & !matched & !(matched >> 1));
    }

    // skim's answer: the best match score in the last row, from the cell
    // before its first match on.
    let last = len - 1;
    let low = firsts[last];
    let before = match last {
        0 | 1 => NEG,
        _ => cells.rows[(last - 2) % 3].at(low - 1).m,
    };
    let row = &cells.rows[last % 3];
    let mut best = before;
    let mut rest = row.matched;
    while rest != 0 {
        let col = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        best = best.max(row.m[col]);
    }
    Some(best)
}

/// Row `i`'s buffer and, below the first row, the row above.
fn row_and_above(rows: &mut [Row; 3], i: usize) -> (&mut Row, Option<&Row>) {
    let [a, b, c] = rows;
    match i % 3 {
        0 => (a, (i > 0).then_some(&*c)),
        1 => (b, Some(&*a)),
        _ => (c, Some(&*b)),
    }
}

/// [`super::Matches::columns`] for ASCII text and an ASCII query: each
/// 16 bytes of text are compared with each query byte (both cases) at
/// once.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
pub fn byte_columns(text: &[u8], pattern: &[u8], columns: &mut [Columns]) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_setzero_si128,
    };
    debug_assert!(text.len() <= MAX_TEXT && pattern.len() <= MAX_PATTERN);
    let mut blocks = [_mm_setzero_si128(); BITS / 16];
    let (whole, rest) = text.as_chunks::<16>();
    for (block, bytes) in blocks.iter_mut().zip(whole) {
        // SAFETY: reads the 16 bytes of `bytes`.
        *block = unsafe { _mm_loadu_si128(bytes.as_ptr().cast::<__m128i>()) };
    }
    // The last bytes: when the text has 16, the 16 that end it (their
    // matches shifted into place below), else a copy.
    let overlap = if rest.is_empty() {
        0
    } else if let Some(tail) = text.last_chunk::<16>() {
        // SAFETY: reads the 16 bytes of `tail`.
        blocks[whole.len()] = unsafe { _mm_loadu_si128(tail.as_ptr().cast::<__m128i>()) };
        16 - rest.len()
    } else {
        let mut last = [0u8; 16];
        last[..rest.len()].copy_from_slice(rest);
        // SAFETY: reads the 16 bytes of `last`.
        blocks[whole.len()] = unsafe { _mm_loadu_si128(last.as_ptr().cast::<__m128i>()) };
        0
    };
    let blocks = &blocks[..text.len().div_ceil(16)];
    let in_text: Columns = (1 << text.len()) - 1;
    for (at, &p) in columns.iter_mut().zip(pattern) {
        let lower = _mm_set1_epi8(p.to_ascii_lowercase() as i8);
        let upper = _mm_set1_epi8(p.to_ascii_uppercase() as i8);
        let same = |block| {
            let same = _mm_or_si128(_mm_cmpeq_epi8(block, lower), _mm_cmpeq_epi8(block, upper));
            Columns::from(_mm_movemask_epi8(same) as u16)
        };
        let mut units: Columns = 0;
        for (k, &block) in blocks.iter().enumerate() {
            // The last block's first `overlap` bytes were the block before's.
            let found = if k + 1 == blocks.len() {
                same(block) >> overlap
            } else {
                same(block)
            };
            units |= found << (16 * k);
        }
        *at = (units & in_text) << 1;
    }
}
