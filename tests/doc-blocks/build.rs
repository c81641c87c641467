//! Writes every Rust block of README.md and docs/*.md that is not a copy of a file (`file=`) into
//! `$OUT_DIR/blocks.rs`, one module per block, for `src/lib.rs` to compile: blocks holding a
//! `#[kernel]` for the host and the GPU, the others for the host only.

#[path = "markdown.rs"]
mod markdown;

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut documents: Vec<PathBuf> = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ is readable")
        .map(|entry| entry.expect("docs/ is readable").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    documents.extend(docs);
    println!("cargo::rerun-if-changed={}", root.join("docs").display());
    let mut out = String::new();
    for document in &documents {
        println!("cargo::rerun-if-changed={}", document.display());
        let name = document
            .strip_prefix(&root)
            .unwrap_or(document)
            .display()
            .to_string();
        let text = std::fs::read_to_string(document).expect("a document is readable");
        let blocks = markdown::blocks(&text)
            .unwrap_or_else(|line| panic!("{name}:{line}: a code block is never closed"));
        for block in blocks {
            if block.language() != "rust" || block.file().is_some() {
                continue;
            }
            let module: String = format!("{name}_{}", block.line)
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_lowercase()
                    } else {
                        '_'
                    }
                })
                .collect();
            let kernel = block.text.contains("#[kernel");
            writeln!(out, "/// {name}, the block at line {}.", block.line).unwrap();
            if !kernel {
                writeln!(out, "#[cfg(not(target_arch = \"amdgpu\"))]").unwrap();
            }
            writeln!(
                out,
                "#[allow(dead_code, reason = \"documentation: compiled, not called\")]\n\
                 pub mod {module} {{\n{}}}\n",
                block.text
            )
            .unwrap();
        }
    }
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out_dir.join("blocks.rs"), out).expect("OUT_DIR is writable");
    // The blocks that embed kernels (`iron::include_kernels!()`) are compiled, not run: they get
    // an empty file where a build script would have put its bundle.
    let bundle = out_dir.join("no-kernels.bundle");
    std::fs::write(&bundle, []).expect("OUT_DIR is writable");
    println!("cargo::rustc-env=IRON_KERNELS={}", bundle.display());
}
