//! The toolchain iron-build compiles device crates with is the one the repository pins.

#[test]
fn the_pinned_toolchain_is_the_repositorys() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../rust-toolchain.toml");
    let text = std::fs::read_to_string(file).unwrap();
    let channel = text
        .lines()
        .find_map(|l| l.strip_prefix("channel = "))
        .expect("rust-toolchain.toml names a channel")
        .trim_matches('"');
    assert_eq!(iron_build::TOOLCHAIN, channel);
    for component in iron_build::COMPONENTS {
        assert!(text.contains(&format!("\"{component}\"")), "{component}");
    }
}
