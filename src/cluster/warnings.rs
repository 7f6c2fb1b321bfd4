//! `Warning` response headers (RFC 7234 `warn-code warn-agent "warn-text"`),
//! which admission plugins (Pod Security `warn`, webhooks) and deprecated
//! APIs send. client-go shows code 299 only, and so does podbay.

use http::HeaderMap;

/// Sends a write and decodes its answer, keeping the `Warning` headers
/// kube-rs drops (admission's, for a pod created or a container added).
pub async fn send_warned<T: serde::de::DeserializeOwned>(
    client: &kube::Client,
    request: http::Request<Vec<u8>>,
) -> Result<(T, Vec<String>), kube::Error> {
    use http_body_util::BodyExt as _;
    let response = client.send(request.map(kube::client::Body::from)).await?;
    let warnings = from_headers(response.headers());
    let code = response.status();
    let body = response.into_body().collect().await?.to_bytes();
    if code.is_client_error() || code.is_server_error() {
        return Err(super::errors::api_error(code.as_u16(), &body));
    }
    let object = serde_json::from_slice(&body).map_err(kube::Error::SerdeError)?;
    Ok((object, warnings))
}

/// The texts of every `299` warning in `headers`, unescaped, in order.
pub fn from_headers(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(http::header::WARNING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(parse)
        .collect()
}

/// One header value may carry several comma-separated warnings.
fn parse(value: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut rest = value.trim_start();
    while !rest.is_empty() {
        let Some((code, after)) = rest.split_once(' ') else {
            break;
        };
        let Some((_agent, after)) = after.trim_start().split_once(' ') else {
            break;
        };
        let Some((text, after)) = quoted(after.trim_start()) else {
            break;
        };
        if code == "299" {
            warnings.push(text);
        }
        // An optional quoted date, then `,` before the next warning.
        rest = after.trim_start();
        if rest.starts_with('"') {
            rest = quoted(rest).map_or("", |(_, after)| after).trim_start();
        }
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    warnings
}

/// A quoted-string at the start of `s` (backslash escapes), and what follows.
fn quoted(s: &str) -> Option<(String, &str)> {
    let mut chars = s.strip_prefix('"')?.char_indices();
    let mut text = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => text.push(chars.next()?.1),
            '"' => return Some((text, &s[i + 2..])),
            c => text.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(http::header::WARNING, v.parse().unwrap());
        }
        map
    }

    #[test]
    fn reads_what_the_apiserver_sends() {
        let sent = headers(&[
            r#"299 - "would violate PodSecurity \"restricted:latest\": runAsNonRoot != true""#,
            r#"299 - "one", 299 - "two" "Tue, 15 Nov 1994 08:12:31 GMT""#,
        ]);
        assert_eq!(
            from_headers(&sent),
            [
                r#"would violate PodSecurity "restricted:latest": runAsNonRoot != true"#,
                "one",
                "two"
            ]
        );
    }

    #[test]
    fn other_codes_and_broken_values_are_skipped() {
        let sent = headers(&[r#"199 - "stale""#, "garbage", r#"299 - "unterminated"#]);
        assert!(from_headers(&sent).is_empty());
    }
}
