//! Resource quantities (`500m`, `1Gi`, `2e3`, `123456n`) as numbers, and
//! the canonical text an apiserver writes for CPU and memory use.

/// A quantity's value in base units (cores, bytes): `500m` is 0.5, `1Ki`
/// 1024. `None` for what the apiserver would refuse.
pub fn parse(text: &str) -> Option<f64> {
    let text = text.trim();
    let split = text
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        _ => return None,
    };
    // `1E` is an exa, not an exponent without digits.
    if let Some(exa) = number.strip_suffix('E').filter(|_| suffix.is_empty()) {
        return exa.parse::<f64>().ok().map(|n| n * 1e18);
    }
    number
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && !number.starts_with('+'))
        .map(|n| n * scale)
}

/// CPU in nanocores as metrics-server writes it (a scaled quantity in its
/// canonical form): `329087452n`, `150m`, `2`, `0`.
pub fn cpu_text(nanocores: u64) -> String {
    if nanocores == 0 {
        return "0".into();
    }
    let mut value = nanocores;
    for unit in ["n", "u", "m"] {
        if !value.is_multiple_of(1000) {
            return format!("{value}{unit}");
        }
        value /= 1000;
    }
    value.to_string()
}

/// Bytes as metrics-server writes memory (binary SI, canonical): the
/// largest power of 1024 that divides it exactly, `2748180Ki`, `64Mi`, `0`.
pub fn memory_text(bytes: u64) -> String {
    if bytes == 0 {
        return "0".into();
    }
    let mut value = bytes;
    let mut unit = "";
    for next in ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"] {
        if !value.is_multiple_of(1024) {
            break;
        }
        value /= 1024;
        unit = next;
    }
    format!("{value}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_the_apiserver_accepts() {
        for (text, value) in [
            ("500m", 0.5),
            ("1", 1.0),
            ("1.5", 1.5),
            ("2e3", 2000.0),
            ("123456789n", 0.123_456_789),
            ("250u", 0.000_25),
            ("1Ki", 1024.0),
            ("64Mi", 67_108_864.0),
            ("1G", 1e9),
            ("2E", 2e18),
            ("0", 0.0),
        ] {
            let parsed = parse(text).unwrap_or(f64::NAN);
            assert!(
                (parsed - value).abs() <= value.abs() * 1e-12,
                "{text}: {parsed}"
            );
        }
        for bad in ["1Qi", "", "m", "abc", "1 Mi", "+1", "NaN", "inf"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn cpu_is_written_in_its_canonical_scale() {
        assert_eq!(cpu_text(0), "0");
        assert_eq!(cpu_text(329_087_452), "329087452n");
        assert_eq!(cpu_text(329_087_000), "329087u");
        assert_eq!(cpu_text(150_000_000), "150m");
        assert_eq!(cpu_text(2_000_000_000), "2");
        for n in [1, 999, 1_000, 1_500_000, 7_000_000_000] {
            let back = parse(&cpu_text(n)).unwrap_or_default();
            assert!((back * 1e9 - n as f64).abs() < 0.5, "{n}");
        }
    }

    #[test]
    fn memory_is_written_in_the_largest_exact_binary_unit() {
        assert_eq!(memory_text(0), "0");
        assert_eq!(memory_text(1000), "1000");
        assert_eq!(memory_text(2_814_136_320), "2748180Ki");
        assert_eq!(memory_text(64 << 20), "64Mi");
        assert_eq!(memory_text(3 << 30), "3Gi");
        for n in [1, 1023, 1024, 5 << 20, (5 << 20) + 4096] {
            assert_eq!(parse(&memory_text(n)), Some(n as f64), "{n}");
        }
    }
}
