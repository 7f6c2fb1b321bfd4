//! Which objects a list or watch request selects: namespace, label selector
//! and field selector together.

use super::http::Query;
use super::selectors::{FieldSelector, LabelSelector};
use super::status::ApiError;
use super::store::{Entry, Kind};

pub struct Filter {
    pub kind: Kind,
    pub namespace: Option<String>,
    labels: Option<LabelSelector>,
    fields: Option<FieldSelector>,
}

impl Filter {
    /// Whether a label or field selector narrows the list.
    pub fn selects(&self) -> bool {
        self.labels.is_some() || self.fields.is_some()
    }

    pub fn from_query(
        kind: Kind,
        namespace: Option<String>,
        query: &Query,
    ) -> Result<Self, ApiError> {
        let labels = query
            .get("labelSelector")
            .filter(|s| !s.is_empty())
            .map(LabelSelector::parse)
            .transpose()?;
        let fields = query
            .get("fieldSelector")
            .filter(|s| !s.is_empty())
            .map(|s| FieldSelector::parse(s, kind.selectable_fields()))
            .transpose()?;
        Ok(Filter {
            kind,
            namespace,
            labels,
            fields,
        })
    }

    pub fn matches(&self, entry: &Entry) -> bool {
        if let Some(ns) = &self.namespace
            && &*entry.key.namespace != ns
        {
            return false;
        }
        if let Some(labels) = &self.labels
            && !labels.matches(|k| entry.label(k))
        {
            return false;
        }
        match &self.fields {
            Some(fields) => fields.matches(|f| entry.field(self.kind, f)),
            None => true,
        }
    }
}
