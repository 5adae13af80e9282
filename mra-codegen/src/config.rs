//! A configuration: a value for some tunable parameters, by name.

use std::collections::BTreeMap;

/// A value for some parameters, by name (the others keep their defaults).
pub type Config = BTreeMap<String, u32>;

/// `threads=256 pad_a=4` (sorted by name); `defaults` for an empty config.
pub fn describe(cfg: &Config) -> String {
    if cfg.is_empty() {
        return "defaults".into();
    }
    cfg.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
}

/// Parses `threads=256,pad_a=4` (or space-separated), the form [`describe`] prints.
pub fn parse_config(s: &str) -> Result<Config, String> {
    let mut cfg = Config::new();
    for part in s.split([',', ' ']).filter(|p| !p.is_empty() && *p != "defaults") {
        let (k, v) = part.split_once('=').ok_or_else(|| format!("`{part}` is not name=value"))?;
        let v = v.trim().parse::<u32>().map_err(|_| format!("`{part}`: the value is not a non-negative integer"))?;
        cfg.insert(k.trim().to_string(), v);
    }
    Ok(cfg)
}
