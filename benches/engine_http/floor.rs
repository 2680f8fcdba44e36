//! The floor under the engine's watch latency on this machine: a server that does only
//! what any apiserver must do for a watched write, and nothing else. Same TLS
//! configuration and certificate, same hyper server, TCP_NODELAY, one durable 4 KiB write
//! (a direct write, then a flush, as the engine's log makes it), and the same event line
//! (the engine's own object, re-stamped) fanned out to every watch connection. No routing,
//! no schema, no store, no history, no committer thread: what it measures is what loopback
//! TCP, TLS, the disk and this VM's wake-ups cost by themselves.
//!
//! It runs as a child process (the bench binary started again with `FLOOR_ARG`), so it has
//! its own runtime and threads, as the engine has.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// The argument that makes the bench binary the floor server: `FLOOR_ARG <data dir>`.
pub const FLOOR_ARG: &str = "--floor-server";
/// The engine's object the floor re-stamps for every event, in the data directory.
pub const TEMPLATE_FILE: &str = "floor-object.json";

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

struct Floor {
    /// The object every write changes: the template, with each patch's annotations.
    object: Mutex<Value>,
    events: tokio::sync::broadcast::Sender<Bytes>,
    disk: Mutex<Durable>,
}

/// One 4 KiB block made durable per write, as the engine's log does it: a direct write
/// (a plain one on a file system without direct I/O, as the log falls back to), then a
/// flush of the device's cache.
pub struct Durable {
    file: std::fs::File,
    flush: std::fs::File,
    /// Two blocks' room, so one block of it is aligned for direct I/O: at `aligned`.
    buffer: Vec<u8>,
    aligned: usize,
    next: u64,
}

impl Durable {
    const BLOCK: usize = 4096;

    /// Its two files in `dir` (a temporary directory, which removes them).
    pub fn open(dir: &std::path::Path) -> Durable {
        use std::os::unix::fs::OpenOptionsExt;
        let path = dir.join("durable-blocks");
        // Allocated and durable beforehand, so a write changes only data, as the log's do.
        std::fs::write(&path, vec![0u8; 256 * Self::BLOCK]).expect("write the blocks file");
        std::fs::File::open(&path).and_then(|f| f.sync_all()).expect("sync the blocks file");
        let mut direct = std::fs::OpenOptions::new();
        direct.write(true);
        #[cfg(target_os = "linux")]
        direct.custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32);
        let file = direct.open(&path).or_else(|_| std::fs::OpenOptions::new().write(true).open(&path)).expect("open");
        let flush = std::fs::File::create(dir.join("durable-flush")).expect("flush file");
        let buffer = vec![b'x'; 2 * Self::BLOCK];
        let aligned = buffer.as_ptr().align_offset(Self::BLOCK);
        Durable { file, flush, buffer, aligned, next: 0 }
    }

    pub fn write(&mut self) {
        use std::os::unix::fs::FileExt;
        let block = &self.buffer[self.aligned..self.aligned + Self::BLOCK];
        self.file.write_all_at(block, (self.next % 256) * Self::BLOCK as u64).expect("direct write");
        self.flush.sync_data().expect("flush");
        self.next += 1;
    }
}

/// The floor server's process: serves on an ephemeral loopback port, prints the address on
/// stdout, runs until killed.
pub fn run(dir: &std::path::Path) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let names = kubectl_crd::serve::tls::serving_names("127.0.0.1", [127, 0, 0, 1].into());
        let material = kubectl_crd::serve::tls::load_or_create(dir, &names).expect("TLS material");
        let tls = tokio_rustls::TlsAcceptor::from(kubectl_crd::serve::tls::server_config_for(&material).expect("TLS"));
        let template = std::fs::read(dir.join(TEMPLATE_FILE)).expect("template");
        let floor = Arc::new(Floor {
            object: Mutex::new(serde_json::from_slice(&template).expect("template JSON")),
            events: tokio::sync::broadcast::channel(1024).0,
            disk: Mutex::new(Durable::open(dir)),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let mut out = std::io::stdout();
        writeln!(out, "{}", listener.local_addr().expect("addr")).expect("stdout");
        out.flush().expect("stdout");
        let builder = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
        loop {
            let Ok((tcp, _)) = listener.accept().await else { continue };
            tcp.set_nodelay(true).expect("nodelay");
            let (tls, builder, floor) = (tls.clone(), builder.clone(), Arc::clone(&floor));
            tokio::spawn(async move {
                let Ok(stream) = tls.accept(tcp).await else { return };
                let service = hyper::service::service_fn(move |req| answer(Arc::clone(&floor), req));
                let _ = builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service).await;
            });
        }
    });
}

/// The floor's whole API, as much as the bench uses: a watch (every event line from now
/// on), a list (empty, for the watch's resourceVersion), and a merge patch of annotations
/// (the watched write: durable, then fanned out, then answered).
async fn answer(floor: Arc<Floor>, req: hyper::Request<Incoming>) -> Result<hyper::Response<Body>, Infallible> {
    let full = |value: Value| Full::new(Bytes::from(value.to_string())).boxed();
    let watch = req.uri().query().is_some_and(|q| q.contains("watch=1"));
    let mut status = hyper::StatusCode::OK;
    let body = match *req.method() {
        hyper::Method::GET if watch => {
            let events = floor.events.subscribe();
            let lines = futures::stream::unfold(events, |mut events| async move {
                let line = events.recv().await.ok()?;
                Some((Ok::<_, Infallible>(Frame::data(line)), events))
            });
            StreamBody::new(lines).boxed()
        }
        hyper::Method::GET => full(
            json!({"apiVersion": "stable.example.com/v1", "kind": "WidgetList", "metadata": {"resourceVersion": "1"}, "items": []}),
        ),
        hyper::Method::PATCH => {
            let patch: Value = match req.into_body().collect().await {
                Ok(body) => serde_json::from_slice(&body.to_bytes()).unwrap_or_default(),
                Err(_) => Value::Null,
            };
            let object = {
                let mut object = floor.object.lock().expect("object");
                object["metadata"]["annotations"] = patch["metadata"]["annotations"].clone();
                object.clone()
            };
            floor.disk.lock().expect("disk").write();
            let mut line = serde_json::to_vec(&json!({"type": "MODIFIED", "object": object})).expect("line");
            line.push(b'\n');
            let _ = floor.events.send(Bytes::from(line));
            full(object)
        }
        _ => {
            status = hyper::StatusCode::METHOD_NOT_ALLOWED;
            full(json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 405}))
        }
    };
    let mut res = hyper::Response::new(body);
    *res.status_mut() = status;
    res.headers_mut().insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    Ok(res)
}
