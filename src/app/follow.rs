//! A pod followed by its own watch: the pod view's, and each terminal's
//! (which follows its container through it).

use crate::model::feed::{Change, Feed};
use crate::model::{EventRow, PodDetail};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PodFollow {
    pub detail: Option<PodDetail>,
    /// Events about the pod, newest last.
    pub events: Vec<EventRow>,
    /// The watch saw it deleted (or listed it absent).
    pub gone: bool,
}

impl PodFollow {
    /// Takes an update of the pod; true when its detail changed. What the
    /// watch says about itself (refused, reconnecting) is the caller's.
    pub fn apply_detail(&mut self, feed: Feed<PodDetail>) -> bool {
        match feed.change() {
            Some(Change::Listed(mut rows)) => {
                self.gone = rows.is_empty();
                if let Some(d) = rows.pop() {
                    self.detail = Some(d);
                }
                true
            }
            Some(Change::Applied(d)) => {
                self.gone = false;
                self.detail = Some(d);
                true
            }
            Some(Change::Deleted(_)) => {
                self.gone = true;
                false
            }
            None => false,
        }
    }

    pub fn apply_events(&mut self, feed: Feed<EventRow>) {
        super::apply_events(&mut self.events, feed);
    }
}
