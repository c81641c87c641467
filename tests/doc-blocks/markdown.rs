//! The fenced code blocks of a Markdown text, for the build script (which compiles them) and the
//! tests (which compare `file=` blocks with their files).

/// A fenced code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// What follows the opening fence: the language, then words such as `file=<path>`.
    pub info: String,
    /// The 1-based line of the opening fence.
    pub line: usize,
    /// The block's lines, each with its newline.
    pub text: String,
}

impl Block {
    /// The language: the info string's first word (`rust`, `sh`, ...), empty if none.
    pub fn language(&self) -> &str {
        self.info.split([' ', ',']).next().unwrap_or_default()
    }

    /// The file a block copies, named by `file=<path>` (relative to the repository's root).
    pub fn file(&self) -> Option<&str> {
        self.info
            .split_whitespace()
            .find_map(|word| word.strip_prefix("file="))
    }
}

/// Every fenced code block of `markdown`, or the line of a block left open.
pub fn blocks(markdown: &str) -> Result<Vec<Block>, usize> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in markdown.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_string(),
                    line: i + 1,
                    text: String::new(),
                })
            }
            (Some(_), Some(_)) => blocks.extend(open.take()),
            (Some(block), None) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            (None, None) => {}
        }
    }
    match open {
        Some(block) => Err(block.line),
        None => Ok(blocks),
    }
}
