//! Bytes as a pod (and as an event) from the API server: whatever
//! deserializes is turned into a pod row, a pod detail and an event row
//! without panicking.
#![no_main]

use k8s_openapi::api::core::v1::{Event, Pod};
use libfuzzer_sys::fuzz_target;
use podbay::model::{EventRow, PodDetail, PodRow};

fuzz_target!(|data: &[u8]| {
    if let Ok(pod) = serde_json::from_slice::<Pod>(data) {
        let row = PodRow::from_pod(&pod);
        let now = jiff::Timestamp::now();
        let _ = (row.restarts_text(now), row.age_text(now));
        let detail = PodDetail::from_pod(&pod);
        for c in &detail.containers {
            let _ = detail.container(&c.name);
        }
    }
    if let Ok(event) = serde_json::from_slice::<Event>(data) {
        let _ = EventRow::from_event(&event).container();
    }
});
