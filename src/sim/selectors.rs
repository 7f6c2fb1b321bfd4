//! TEMPORARY equality-only selectors; replaced by the full implementation on merge.
use super::status::ApiError;

pub struct LabelSelector(Vec<(String, String)>);
impl LabelSelector {
    pub fn parse(s: &str) -> Result<Self, ApiError> {
        Ok(LabelSelector(
            s.split(',')
                .filter(|p| !p.is_empty())
                .filter_map(|p| {
                    p.split_once('=')
                        .map(|(a, b)| (a.to_string(), b.to_string()))
                })
                .collect(),
        ))
    }
    pub fn matches<'a>(&self, labels: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0.iter().all(|(k, v)| labels(k) == Some(v.as_str()))
    }
}
pub struct FieldSelector(Vec<(String, String)>);
impl FieldSelector {
    pub fn parse(s: &str, supported: &[&str]) -> Result<Self, ApiError> {
        let mut out = vec![];
        for p in s.split(',').filter(|p| !p.is_empty()) {
            let (a, b) = p
                .split_once('=')
                .ok_or_else(|| ApiError::bad_request("bad field selector"))?;
            if !supported.contains(&a) {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {a}"
                )));
            }
            out.push((a.to_string(), b.trim_start_matches('=').to_string()));
        }
        Ok(FieldSelector(out))
    }
    pub fn matches<'a>(&self, fields: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0.iter().all(|(k, v)| fields(k) == Some(v.as_str()))
    }
}
