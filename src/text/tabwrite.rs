//! Go's `text/tabwriter` as kubectl configures it (cells padded by 3 spaces, columns at least
//! 6 wide, the last cell of a line unpadded): the one table layout of every tool's output,
//! the CLI's tables and the migration's reports alike.

/// kubectl's tabwriter settings: minimum cell width and padding.
const MIN_WIDTH: usize = 6;
const PADDING: usize = 3;

/// Lays out lines of cells like Go's `text/tabwriter` with kubectl's settings.
pub fn tabwrite(lines: &[Vec<String>]) -> String {
    let columns = lines.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![MIN_WIDTH; columns];
    for line in lines {
        // The last cell of a line is not in a column: it is never padded.
        for (i, cell) in line.iter().enumerate().take(line.len().saturating_sub(1)) {
            widths[i] = widths[i].max(cell.chars().count() + PADDING);
        }
    }
    let mut out = String::new();
    for line in lines {
        for (i, cell) in line.iter().enumerate() {
            out.push_str(cell);
            if i + 1 < line.len() {
                out.extend(std::iter::repeat_n(' ', widths[i] - cell.chars().count()));
            }
        }
        out.push('\n');
    }
    out
}
