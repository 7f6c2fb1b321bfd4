//! Bytes as the tar stream a container sends to `podbay cp`: whatever they
//! hold, nothing is written outside the staging directory, and nothing in
//! it is a link that leads out.
#![no_main]

use libfuzzer_sys::fuzz_target;
use podbay::commands::cp::unpack::{Budget, unpack};

fuzz_target!(|data: &[u8]| {
    let scratch = std::env::temp_dir().join(format!("podbay-fuzz-tar-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let stage = scratch.join("stage");
    std::fs::create_dir_all(&stage).unwrap();
    let _ = unpack(data, "item", &stage, Budget::measured(1 << 20));
    let beside: Vec<_> = std::fs::read_dir(&scratch).unwrap().collect();
    assert_eq!(beside.len(), 1, "only the stage beside it");
    podbay::commands::cp::unpack::assert_contained(&stage);
    let _ = std::fs::remove_dir_all(&scratch);
});
