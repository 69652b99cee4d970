//! The findings tables of `docs/results/*.md` (claim, paper figure, ours, agrees?), read for
//! `lidx report`'s page.
//!
//! A table is a run of lines that start with `|`, the second of them the separator
//! (`|---|---|`), as GitHub's markdown writes them; each table is named by the heading above
//! it. Cells split at `|` except an escaped `\|`. The cells stay markdown text: the page
//! escapes them and draws only `` `code` `` spans.

use std::path::{Path, PathBuf};

use crate::error::{BenchError, Result};

/// One markdown table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindingsTable {
    /// The file it came from.
    pub path: PathBuf,
    /// The last heading above it (without the `#`s), empty when none.
    pub heading: String,
    /// The header row's cells.
    pub header: Vec<String>,
    /// The body rows' cells.
    pub rows: Vec<Vec<String>>,
}

/// Splits a table line into its cells (`| a | b \| c |` -> `a`, `b | c`).
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim();
    let inner = inner.strip_prefix('|').unwrap_or(inner);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cell.push('|');
                chars.next();
            }
            '|' => out.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    out.push(cell);
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

fn is_separator(line: &str) -> bool {
    let cells = cells(line);
    !cells.is_empty()
        && cells.iter().all(|c| {
            let c = c.trim_matches(':');
            !c.is_empty() && c.chars().all(|ch| ch == '-')
        })
}

/// The tables of the markdown `text` of `path`.
pub fn parse(path: &Path, text: &str) -> Vec<FindingsTable> {
    let lines: Vec<&str> = text.lines().collect();
    let mut tables = Vec::new();
    let mut heading = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if line.starts_with('#') {
            heading = line.trim_start_matches('#').trim().to_string();
        }
        let starts_table = line.starts_with('|')
            && lines
                .get(i + 1)
                .is_some_and(|next| next.trim().starts_with('|') && is_separator(next));
        if !starts_table {
            i += 1;
            continue;
        }
        let header = cells(line);
        let mut rows = Vec::new();
        i += 2;
        while i < lines.len() && lines[i].trim().starts_with('|') {
            rows.push(cells(lines[i]));
            i += 1;
        }
        tables.push(FindingsTable {
            path: path.to_path_buf(),
            heading: heading.clone(),
            header,
            rows,
        });
    }
    tables
}

/// Reads the tables of the markdown file `path`; a file without one is an error (it was named
/// as findings, so a missing table is a mistake worth saying).
pub fn read(path: &Path) -> Result<Vec<FindingsTable>> {
    let text = std::fs::read_to_string(path).map_err(|source| BenchError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let tables = parse(path, &text);
    if tables.is_empty() {
        return Err(BenchError::Report {
            path: path.to_path_buf(),
            message: "no markdown table (a `| a | b |` line followed by `|---|---|`)".to_string(),
        });
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_with_headings_and_escaped_bars() {
        let text = "# Paper\n\nintro\n\n## Claims\n\n| claim | ours |\n|---|:--:|\n| a \\| b | `x` |\n| c | d |\n\ntext\n\n| only |\n|---|\n";
        let tables = parse(Path::new("f.md"), text);
        assert_eq!(tables.len(), 2);
        assert_eq!(tables[0].heading, "Claims");
        assert_eq!(tables[0].header, vec!["claim", "ours"]);
        assert_eq!(tables[0].rows[0], vec!["a | b", "`x`"]);
        assert_eq!(tables[0].rows.len(), 2);
        assert_eq!(tables[1].header, vec!["only"]);
        assert!(tables[1].rows.is_empty());
    }

    #[test]
    fn a_bar_line_without_separator_is_no_table() {
        assert!(parse(Path::new("f.md"), "| a | b |\n| c | d |\n").is_empty());
    }
}
