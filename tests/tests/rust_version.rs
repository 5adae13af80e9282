//! The workspace's `rust-version` is what it builds with: no older than any locked dependency
//! of this host's build asks for (cargo's own resolution, `cargo metadata --locked
//! --filter-platform <host>`), and every member inherits it, so an older toolchain is refused
//! by cargo in one line naming the version.

use serde_json::Value;

/// `1.88` and `1.88.0` alike: (major, minor, patch).
fn version(v: &str) -> [u32; 3] {
    let mut parts = v.split('.').map(|p| p.parse().unwrap_or(0));
    [parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0)]
}

#[test]
fn rust_version_covers_every_locked_dependency_and_every_member_declares_it() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let rustc = std::process::Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into())).arg("-vV").output().expect("run rustc -vV");
    let host = String::from_utf8_lossy(&rustc.stdout).lines().find_map(|l| l.strip_prefix("host: ").map(str::to_string)).expect("rustc -vV names the host");
    // The packages this host builds (metadata reads their manifests; other platforms' crates
    // were never downloaded).
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--filter-platform", &host])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("run cargo metadata");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let resolved: std::collections::HashSet<&str> = meta["resolve"]["nodes"].as_array().unwrap().iter().map(|n| n["id"].as_str().unwrap()).collect();
    let members: std::collections::HashSet<&str> = meta["workspace_members"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    let packages = meta["packages"].as_array().unwrap();
    let declared: Vec<(&str, Option<&str>)> = packages.iter().filter(|p| members.contains(p["id"].as_str().unwrap())).map(|p| (p["name"].as_str().unwrap(), p["rust_version"].as_str())).collect();
    assert_eq!(declared.len(), 5, "{declared:?}");
    let ours = declared[0].1.unwrap_or_else(|| panic!("{} declares no rust-version", declared[0].0));
    for (name, v) in &declared {
        assert_eq!(*v, Some(ours), "{name} does not inherit the workspace's rust-version");
    }
    let (need, who) = packages
        .iter()
        .filter(|p| resolved.contains(p["id"].as_str().unwrap()) && !members.contains(p["id"].as_str().unwrap()))
        .filter_map(|p| p["rust_version"].as_str().map(|v| (version(v), format!("{} {}", p["name"].as_str().unwrap(), p["version"].as_str().unwrap()))))
        .max()
        .expect("some dependency declares a rust-version");
    assert!(version(ours) >= need, "rust-version {ours} is older than {who} needs ({need:?})");
}
