//! Work on a big slice, split over two threads: the one way the pure
//! layers use a second core (the pod filter scores 100 000 rows per
//! keystroke), so that they start no threads of their own. The result is
//! the same as one call on the whole slice would give.

/// `work` on the first half of `items` here and on the second on another
/// thread, the results in order; a panic in either is passed on.
pub fn in_halves<T: Sync, R: Send>(items: &[T], work: impl Fn(&[T]) -> Vec<R> + Sync) -> Vec<R> {
    let (left, right) = items.split_at(items.len() / 2);
    std::thread::scope(|scope| {
        let other = scope.spawn(|| work(right));
        let mut mine = work(left);
        match other.join() {
            Ok(theirs) => mine.extend(theirs),
            Err(panic) => std::panic::resume_unwind(panic),
        }
        mine
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_give_what_one_pass_gives_in_order() {
        let items: Vec<u32> = (0..1001).collect();
        let evens = |part: &[u32]| part.iter().filter(|i| *i % 2 == 0).copied().collect();
        assert_eq!(in_halves(&items, evens), evens(&items));
        assert_eq!(in_halves(&[] as &[u32], evens), Vec::<u32>::new());
    }
}
