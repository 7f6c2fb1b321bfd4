//! API and connection errors turned into one sentence for the user: what
//! happened and what to do, naming the exact permission when one is missing.

use crate::model::problem::{Denied, Problem};

/// The problem any kube error is, in one sentence.
pub fn describe(error: &kube::Error) -> Problem {
    let denied = match error {
        kube::Error::Api(status) if status.code == 403 => Denied::from_message(&status.message),
        _ => None,
    };
    match denied {
        Some(denied) => Problem {
            sentence: denied.sentence().into(),
            denied: Some(denied),
            refused_by: None,
        },
        None => Problem::sentence(sentence(error)),
    }
}

fn sentence(error: &kube::Error) -> String {
    if let Some(sentence) = credentials_problem(error) {
        return sentence;
    }
    if let Some(misbehaved) = super::limits::misbehaved(error) {
        return misbehaved.to_string();
    }
    if let Some(too_large) = super::limits::too_large(error) {
        return format!("{}.", capitalized(&too_large.to_string()));
    }
    match error {
        kube::Error::Api(status) if status.reason == super::limits::UNASKED_ENCODING => {
            status.message.clone()
        }
        kube::Error::Api(status) => {
            let code = status.code;
            match code {
                403 => format!(
                    "The cluster refused this request: {}.",
                    trim(&status.message)
                ),
                401 => "The cluster rejected your credentials (401 Unauthorized): your token may have expired; log in again or pick another context with :ctx.".to_string(),
                404 => format!("Not found: {}.", trim(&status.message)),
                300..=399 => format!(
                    "{}: podbay does not follow redirects; point the kubeconfig's `server` at the API server itself.",
                    capitalized(trim(&status.message))
                ),
                409 => format!("Someone changed this object at the same time: {}. Try again.", trim(&status.message)),
                410 => "The cluster's history moved on (410 Gone): list again.".to_string(),
                422 => format!("The cluster rejected it as invalid: {}.", trim(&status.message)),
                429 => match retry_after(error) {
                    Some(wait) if wait > MAX_RETRY_AFTER => format!("The API server is throttling requests (429 Too Many Requests) and asks to wait {} s; podbay asks again after {} s.", wait.as_secs(), MAX_RETRY_AFTER.as_secs()),
                    Some(wait) => format!("The API server is throttling requests (429 Too Many Requests) and asks to wait {} s.", wait.as_secs()),
                    None => "The API server is throttling requests (429 Too Many Requests).".to_string(),
                },
                500..=599 => format!("The API server failed ({code}): {}.", trim(&status.message)),
                _ => format!("The API server answered {code}: {}.", trim(&status.message)),
            }
        }
        kube::Error::HyperError(_) | kube::Error::Service(_) => format!(
            "Cannot reach the API server: {}. Check the context, your network or VPN.",
            root_cause(error)
        ),
        other => format!("Request to the cluster failed: {}.", root_cause(other)),
    }
}

/// The `kube::Error` for an error answer read by hand, as kube-rs builds it:
/// the body's `Status`, or one made from its text (a proxy's HTML page).
pub fn api_error(code: u16, body: &[u8]) -> kube::Error {
    let status = serde_json::from_slice::<kube::core::Status>(body).unwrap_or_else(|_| {
        let text = String::from_utf8_lossy(body);
        kube::core::Status::failure(text.trim(), "Failed to parse error data").with_code(code)
    });
    kube::Error::Api(status.boxed())
}

/// Whether the server could not be reached at all (connection refused,
/// no route, TLS or DNS failure), as opposed to an answer it gave.
pub fn unreachable(error: &kube::Error) -> bool {
    matches!(error, kube::Error::HyperError(_) | kube::Error::Service(_))
        && credentials_problem(error).is_none()
}

/// The sentence for a failure to get the context's credentials, if that is
/// what `error` (or any error under it) is. kube's own messages for these
/// quote the credential plugin's output and command line (environment
/// included), which may hold tokens, so none of that is repeated here.
pub fn credentials_problem(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    use kube::client::AuthError as Auth;
    let auth = auth_error(error)?;
    const RETRY: &str = "run it yourself (or any kubectl command) to log in again, then retry";
    const REFRESH: &str = "refresh them with any kubectl command, then retry";
    Some(match auth {
        Auth::AuthExecStart(e) => format!(
            "Cannot run the kubeconfig's credential plugin: {e}. Install it or fix `exec.command` in the kubeconfig."
        ),
        Auth::AuthExecRun { out, .. } => format!(
            "The kubeconfig's credential plugin failed ({}): {RETRY}.",
            out.status
        ),
        Auth::AuthExecParse(_) | Auth::ExecPluginFailed | Auth::UnrefreshableTokenResponse => {
            "The kubeconfig's credential plugin did not print a usable ExecCredential: check the plugin's version and `exec.apiVersion` in the kubeconfig.".to_string()
        }
        Auth::MalformedTokenExpirationDate(_) => {
            "The credential plugin's token has a malformed expirationTimestamp: update the plugin.".to_string()
        }
        Auth::ReadTokenFile(e, path) => format!(
            "Cannot read the token file {}: {e}. Check the kubeconfig user's `tokenFile`.",
            path.display()
        ),
        Auth::InvalidBearerToken(_) | Auth::InvalidBasicAuth(_) => {
            "The kubeconfig user's credentials cannot be sent (they contain a line break or another control character): check its `token` or `password`.".to_string()
        }
        _ => format!("Cannot get credentials for this context from its auth provider: {REFRESH}."),
    })
}

/// Whether the kubeconfig's credential plugin ran and failed: when it had
/// no terminal, often because it wanted to ask for a login.
pub fn credential_plugin_failed(error: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        auth_error(error),
        Some(kube::client::AuthError::AuthExecRun { .. })
    )
}

fn auth_error<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a kube::client::AuthError> {
    super::cause::find_cause(error)
}

/// `root_cause`, unless the error is a credentials problem, whose wording
/// must not quote what a credential plugin printed.
pub(crate) fn safe_cause(error: &(dyn std::error::Error + 'static)) -> String {
    credentials_problem(error)
        .map(|s| s.trim_end_matches('.').to_string())
        .unwrap_or_else(|| root_cause(error))
}

/// The longest a feed waits when a 429 asks for longer.
pub const MAX_RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(300);

/// How long the server asked to be left alone, from a 429's `Status` (or
/// its `Retry-After` header, which the transport writes into it).
pub fn retry_after(error: &kube::Error) -> Option<std::time::Duration> {
    match error {
        kube::Error::Api(status) if status.code == 429 => status
            .details
            .as_ref()
            .map(|d| std::time::Duration::from_secs(d.retry_after_seconds.into()))
            .filter(|wait| !wait.is_zero()),
        _ => None,
    }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn trim(message: &str) -> &str {
    message.trim().trim_end_matches('.')
}

/// The innermost cause, which is the one that says what actually went wrong
/// ("connection refused", "certificate expired"). Only its first line: some
/// parsers follow it with a drawing of the input.
pub fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    let text = current.to_string();
    trim(text.lines().next().unwrap_or_default()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_errors_become_one_sentence() {
        let status = |code: u16, message: &str| {
            kube::Error::Api(Box::new(
                kube::core::Status::failure(message, "Reason").with_code(code),
            ))
        };
        let Problem {
            sentence: s,
            denied,
            ..
        } = describe(&status(401, "Unauthorized"));
        assert!(s.starts_with("The cluster rejected your credentials") && denied.is_none());
        let s = describe(&status(
            422,
            "Pod \"x\" is invalid: spec.ephemeralContainers[0].name: Duplicate value: \"app\"",
        ))
        .sentence;
        assert_eq!(
            s,
            "The cluster rejected it as invalid: Pod \"x\" is invalid: spec.ephemeralContainers[0].name: Duplicate value: \"app\"."
        );
        let denied = describe(&status(
            403,
            "pods is forbidden: User \"u\" cannot watch resource \"pods\" in API group \"\" at the cluster scope",
        ))
        .denied;
        assert_eq!(denied.unwrap().verb, "watch");
    }

    #[test]
    fn credential_plugin_failures_never_quote_the_plugin() {
        use std::os::unix::process::ExitStatusExt as _;
        const SECRET: &str = "plugin-secret-3f9a";
        let run = || kube::client::AuthError::AuthExecRun {
            cmd: format!("KUBERNETES_EXEC_INFO=\"{SECRET}\" \"login\" \"--token={SECRET}\""),
            out: Box::new(std::process::Output {
                status: std::process::ExitStatus::from_raw(1 << 8),
                stdout: SECRET.as_bytes().to_vec(),
                stderr: SECRET.as_bytes().to_vec(),
            }),
        };
        // Through the auth middleware the error arrives boxed in `Service`.
        for error in [
            kube::Error::Service(Box::new(run())),
            kube::Error::Auth(run()),
        ] {
            let Problem {
                sentence, denied, ..
            } = describe(&error);
            assert_eq!(
                sentence,
                "The kubeconfig's credential plugin failed (exit status: 1): run it yourself (or any kubectl command) to log in again, then retry."
            );
            assert!(denied.is_none());
            assert!(!safe_cause(&error).contains(SECRET));
            // kube's own wording would have leaked it.
            assert!(format!("{error:?}").contains(SECRET));
        }
        let missing = kube::Error::Service(Box::new(kube::client::AuthError::AuthExecStart(
            std::io::Error::from(std::io::ErrorKind::NotFound),
        )));
        assert!(
            describe(&missing)
                .sentence
                .starts_with("Cannot run the kubeconfig's credential plugin: entity not found.")
        );
        let unreachable = kube::Error::Service(Box::new(std::io::Error::from(
            std::io::ErrorKind::ConnectionRefused,
        )));
        assert_eq!(credentials_problem(&unreachable), None);
    }
}
