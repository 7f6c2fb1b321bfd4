//! Deterministic identifiers for the simulator's seeded objects: the same
//! demo has the same UIDs and container IDs on every run.

/// Deterministic hex digits from a seed string (splitmix64), for the UIDs
/// and container IDs of scenario objects.
pub fn hex_id(seed: &str, salt: u64, len: usize) -> String {
    let mut state = seed.bytes().fold(0xcbf2_9ce4_8422_2325u64 ^ salt, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    let mut out = String::with_capacity(len + 16);
    while out.len() < len {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        out.push_str(&format!("{:016x}", z ^ (z >> 31)));
    }
    out.truncate(len);
    out
}

pub(crate) fn uid(seed: &str, salt: u64) -> String {
    let h = hex_id(seed, salt, 32);
    format!(
        "{}-{}-4{}-a{}-{}",
        &h[0..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..32]
    )
}
