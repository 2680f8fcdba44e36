//! The TUI as the benches drive it: its state on the local engine's header, and a 160×50
//! terminal whose crossterm backend writes into a sink (escape sequences encoded, nothing
//! printed), so frame times include ratatui's diffing and the encoding but no emulator.

use k8s_openapi::jiff::Timestamp;
use kubectl_crd::tui::state::{Connection as Conn, Namespaces, State, Target};
use kubectl_crd::tui::theme::Theme;
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

pub const WIDTH: u16 = 160;
pub const HEIGHT: u16 = 50;

pub type Term = Terminal<CrosstermBackend<std::io::Sink>>;

pub fn terminal() -> Term {
    let options = TerminalOptions { viewport: Viewport::Fixed(Rect::new(0, 0, WIDTH, HEIGHT)) };
    Terminal::with_options(CrosstermBackend::new(std::io::sink()), options).expect("terminal")
}

/// The TUI's state in namespace `bench`, sized to the terminal.
pub fn state() -> State {
    let target = Target {
        connection: Conn::Local,
        context: "local".into(),
        server: "bench".into(),
        shell: "kubectl crd".into(),
    };
    let mut s = State::new(target, Namespaces::One("bench".into()), false, Theme { color: true }, Timestamp::now());
    s.size = (WIDTH, HEIGHT);
    s
}
