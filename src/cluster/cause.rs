//! Looking through an error's chain of causes.

/// The first `T` in `error`'s chain of causes, looking inside `io::Error`
/// too (its `source()` skips the error it wraps).
pub fn find_cause<'a, T: std::error::Error + 'static>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<T>() {
            return Some(found);
        }
        if let Some(found) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| find_cause::<T>(inner))
        {
            return Some(found);
        }
        current = e.source();
    }
    None
}
