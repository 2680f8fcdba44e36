//! Go's `text/tabwriter` as kubectl configures it (cells padded by 3 spaces, columns at least
//! 6 wide, the last cell of a line unpadded): the one table layout of every tool's output,
//! the CLI's tables and the migration's reports alike, and `get -w`'s rows under their header.

/// kubectl's tabwriter settings: minimum cell width and padding.
const MIN_WIDTH: usize = 6;
const PADDING: usize = 3;

/// Lays out lines of cells like Go's `text/tabwriter` with kubectl's settings.
pub fn tabwrite(lines: &[Vec<String>]) -> String {
    Tabwriter::default().write(lines)
}

/// kubectl's tabwriter with `RememberWidths`: columns keep the widest cell seen across
/// writes, so the rows `get -w` prints one event at a time stay under the header.
#[derive(Debug, Clone, Default)]
pub struct Tabwriter {
    widths: Vec<usize>,
}

impl Tabwriter {
    /// Lays out `lines`, widening the remembered columns as their cells need.
    pub fn write(&mut self, lines: &[Vec<String>]) -> String {
        for line in lines {
            // The last cell of a line is not in a column: it is never padded.
            for (i, cell) in line.iter().enumerate().take(line.len().saturating_sub(1)) {
                if self.widths.len() <= i {
                    self.widths.resize(i + 1, MIN_WIDTH);
                }
                self.widths[i] = self.widths[i].max(cell.chars().count() + PADDING);
            }
        }
        let mut out = String::new();
        for line in lines {
            for (i, cell) in line.iter().enumerate() {
                out.push_str(cell);
                if i + 1 < line.len() {
                    let width = self.widths.get(i).copied().unwrap_or(MIN_WIDTH);
                    out.extend(std::iter::repeat_n(' ', width.saturating_sub(cell.chars().count())));
                }
            }
            out.push('\n');
        }
        out
    }
}
