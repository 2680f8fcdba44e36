//! The TUI as the benches drive it: the local engine, its state on that engine's header, and a 160×50
//! terminal whose crossterm backend writes into a sink (escape sequences encoded, nothing
//! printed), so frame times include ratatui's diffing and the encoding but no emulator.

use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, PostParams};
use kubectl_crd::cluster::{ConnectOptions, Connection, Target as ClusterTarget};
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

/// The local engine on `dir`, with the namespace `bench` the TUI's state shows.
pub async fn local_engine(dir: &std::path::Path) -> Connection {
    let options = ConnectOptions {
        target: ClusterTarget::Local { data_dir: dir.to_path_buf() },
        namespace: None,
        request_timeout: None,
    };
    let conn = Connection::open(&options).await.expect("local engine");
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(conn.client().clone());
    let ns = serde_json::from_value(serde_json::json!({"metadata": {"name": "bench"}})).expect("ns");
    namespaces.create(&PostParams::default(), &ns).await.expect("namespace");
    conn
}
