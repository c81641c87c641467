//! Every code block of README.md and docs/*.md that names a file (`file=<path>`) is a verbatim
//! part of that file, and every Rust or TOML block of the walkthrough names one.

#[path = "../markdown.rs"]
mod markdown;

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every Markdown file of docs/, with their names.
fn documents() -> Vec<(String, String)> {
    let root = root();
    let mut paths = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            paths.push(path);
        }
    }
    paths
        .into_iter()
        .map(|path| {
            let name = path.strip_prefix(&root).unwrap().display().to_string();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect()
}

#[test]
fn blocks_that_name_a_file_are_copies_of_it() {
    let mut checked = 0;
    for (name, text) in documents() {
        for block in
            markdown::blocks(&text).unwrap_or_else(|line| panic!("{name}:{line}: unclosed"))
        {
            let Some(file) = block.file() else {
                assert!(
                    !(name == "docs/walkthrough.md" && matches!(block.language(), "rust" | "toml")),
                    "{name}:{}: a walkthrough block names no file=<path>",
                    block.line
                );
                continue;
            };
            let path = root().join(file);
            let source = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{name}:{}: {}: {e}", block.line, path.display()));
            assert!(
                source.contains(&block.text),
                "{name}:{}: the block is not a verbatim part of {file}:\n{}",
                block.line,
                block.text
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 10,
        "only {checked} blocks name their source file"
    );
}

#[test]
fn blocks_are_found_with_their_lines_languages_and_files() {
    let markdown =
        "text\n```rust file=a.rs\nfn a() {}\n```\n```sh\ncargo run\n```\n```rust,kernel\nx\n";
    assert_eq!(markdown::blocks(markdown), Err(8));
    let blocks = markdown::blocks(&markdown[..markdown.len() - 16]).unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!(
        (blocks[0].line, blocks[0].language(), blocks[0].file()),
        (2, "rust", Some("a.rs"))
    );
    assert_eq!(blocks[0].text, "fn a() {}\n");
    assert_eq!(
        (blocks[1].line, blocks[1].language(), blocks[1].file()),
        (5, "sh", None)
    );
}
