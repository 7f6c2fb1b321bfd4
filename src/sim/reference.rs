//! Image references: checking one as the runtime would, and naming it in
//! full as containerd does.

/// A loose check of the image reference grammar: what `docker.io/distribution/reference` rejects most often.
pub fn is_valid_image_reference(image: &str) -> bool {
    let (name, _) = image.split_once('@').unwrap_or((image, ""));
    let repo = match name.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => {
            if tag.is_empty()
                || tag.len() > 128
                || !tag
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            {
                return false;
            }
            repo
        }
        _ => name,
    };
    let mut parts = repo.split('/');
    let first = parts.next().unwrap_or_default();
    let domain_like = first.contains('.') || first.contains(':') || first == "localhost";
    let path_ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
            && s.starts_with(|c: char| c.is_ascii_alphanumeric())
    };
    !repo.is_empty()
        && (domain_like || path_ok(first))
        && repo.split('/').skip(1).all(path_ok)
        && !image.contains("@@")
}

/// `busybox` → `docker.io/library/busybox:latest`, as containerd names it.
pub fn full_reference(image: &str) -> String {
    let with_tag = if image
        .rsplit('/')
        .next()
        .is_some_and(|last| last.contains(':') || last.contains('@'))
    {
        image.to_string()
    } else {
        format!("{image}:latest")
    };
    let first = with_tag.split('/').next().unwrap_or_default();
    if !with_tag.contains('/') {
        format!("docker.io/library/{with_tag}")
    } else if first.contains('.') || first.contains(':') || first == "localhost" {
        with_tag
    } else {
        format!("docker.io/{with_tag}")
    }
}

/// `registry/path/name` without the tag or digest.
pub(super) fn repository(reference: &str) -> &str {
    split_reference(reference).0
}

/// (`registry/path/name`, its tag), the digest left off: a `:` in the
/// registry's port or in `@sha256:…` is not a tag.
pub(super) fn split_reference(reference: &str) -> (&str, Option<&str>) {
    let name = reference.split('@').next().unwrap_or(reference);
    match name.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => (repo, Some(tag)),
        _ => (name, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_references() {
        for ok in [
            "busybox",
            "busybox:1.36",
            "nicolaka/netshoot:v0.13",
            "ghcr.io/a/b:c",
            "localhost:5000/x",
            "x@sha256:abc",
        ] {
            assert!(is_valid_image_reference(ok), "{ok}");
        }
        for bad in [
            "",
            "BusyBox",
            "busy box",
            "x:",
            "a//b",
            "x:tag/with/slash/Upper",
            "x@@y",
        ] {
            assert!(!is_valid_image_reference(bad), "{bad}");
        }
        assert_eq!(
            full_reference("busybox"),
            "docker.io/library/busybox:latest"
        );
        assert_eq!(
            full_reference("nicolaka/netshoot:v1"),
            "docker.io/nicolaka/netshoot:v1"
        );
        assert_eq!(full_reference("ghcr.io/a/b"), "ghcr.io/a/b:latest");
    }
}
