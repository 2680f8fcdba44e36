//! The reference corpus reader: turns the `NN-name.http` recordings of a real kube-apiserver 1.32
//! (see `INDEX.md` next to them) into [`Exchange`] values, so fidelity tests can replay each
//! recorded request against our engine and compare the answer. It owns the knowledge of the file
//! layout written by `_tools/fmt.py` (request head, request body, response head, response body,
//! recorder notes) and of where the corpus lives (`$CARGO_MANIFEST_DIR/../shared/reference/
//! kube-apiserver-1.32`, or `$KUBECTL_CRD_REFERENCE_DIR`). A missing corpus is a test failure,
//! never a skip: CI always has it. Tests reach it as `crate::support::reference`.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Environment variable that overrides where the corpus is read from.
pub const DIR_ENV: &str = "KUBECTL_CRD_REFERENCE_DIR";

/// The corpus location relative to the crate root (CI clones `shared/` as a sibling).
pub const DEFAULT_RELATIVE_DIR: &str = "../shared/reference/kube-apiserver-1.32";

const TRUNCATED_MARKER: &str = "[... truncated by the recorder";
const TRIMMED_MARKER: &str = "[trimmed by the recorder:";

/// One recorded request and the real server's answer to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// File name inside the corpus, e.g. `15-widget-create.http`.
    pub file: String,
    pub request: RecordedRequest,
    pub response: RecordedResponse,
}

/// The request exactly as curl sent it (the bearer token shows as `<token>`).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    pub path_and_query: String,
    /// Header lines in the order sent.
    pub headers: Vec<(String, String)>,
    /// Raw bytes as sent (JSON or YAML), trailing newline restored from `Content-Length`.
    pub body: Option<Vec<u8>>,
}

/// The real server's response.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedResponse {
    pub status: u16,
    pub reason_phrase: String,
    /// Header lines in the order received (`Date` and `Audit-Id` were dropped by the recorder;
    /// duplicate `Vary` lines are real).
    pub headers: Vec<(String, String)>,
    pub body: Body,
    /// The recorder cut or trimmed the body: exact body comparisons must be skipped.
    pub truncated: bool,
    /// The recorder's `[... truncated ...]` / `[trimmed ...]` line, when there is one.
    pub recorder_note: Option<String>,
}

/// A response body, decoded the same way for recordings and for our engine's answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// A JSON document (pretty-printed in the files, so only its value is meaningful).
    Json(Value),
    /// A watch stream: one JSON event per line, in order.
    WatchLines(Vec<Value>),
    /// Any other text, trailing newlines removed (as the recorder did).
    Text(String),
    /// A YAML document, kept raw (trailing newlines removed).
    Yaml(String),
    Empty,
}

impl Body {
    /// Decodes a raw body: a watch stream (when `watch`) becomes one event per line, YAML
    /// content types stay raw text, anything that parses as JSON is JSON (the server sends some
    /// JSON as `text/plain`, e.g. `/openapi/v3`), the rest is text.
    pub fn decode(content_type: Option<&str>, raw: &[u8], watch: bool) -> Body {
        let text = String::from_utf8_lossy(raw);
        let text = text.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            return Body::Empty;
        }
        if watch && let Some(events) = parse_watch_lines(text) {
            return Body::WatchLines(events);
        }
        if content_type.is_some_and(is_yaml_media_type) {
            return Body::Yaml(text.to_string());
        }
        match serde_json::from_str(text) {
            Ok(value) => Body::Json(value),
            Err(_) => Body::Text(text.to_string()),
        }
    }

    /// A short name of the variant, for failure messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Body::Json(_) => "Json",
            Body::WatchLines(_) => "WatchLines",
            Body::Text(_) => "Text",
            Body::Yaml(_) => "Yaml",
            Body::Empty => "Empty",
        }
    }

    /// The JSON value; panics (naming the variant) for any other body.
    pub fn json(&self) -> &Value {
        match self {
            Body::Json(value) => value,
            other => panic!("expected a Json body, found {}: {other:?}", other.kind()),
        }
    }

    /// The watch events; panics (naming the variant) for any other body.
    pub fn watch_events(&self) -> &[Value] {
        match self {
            Body::WatchLines(events) => events,
            other => panic!("expected a WatchLines body, found {}: {other:?}", other.kind()),
        }
    }

    /// The YAML document parsed into a JSON value (for value comparisons).
    pub fn yaml_value(&self) -> Value {
        match self {
            Body::Yaml(text) => {
                serde_saphyr::from_str(text).unwrap_or_else(|err| panic!("recorded YAML does not parse: {err}"))
            }
            other => panic!("expected a Yaml body, found {}: {other:?}", other.kind()),
        }
    }
}

impl Exchange {
    /// The file name without `.http`, e.g. `15-widget-create`.
    pub fn name(&self) -> &str {
        self.file.strip_suffix(".http").unwrap_or(&self.file)
    }
}

impl RecordedRequest {
    /// First value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        header_values(&self.headers, name).into_iter().next()
    }

    /// The path without the query string.
    pub fn path(&self) -> &str {
        self.path_and_query.split('?').next().unwrap_or_default()
    }

    /// The raw (still percent-encoded) query string, if any.
    pub fn query(&self) -> Option<&str> {
        self.path_and_query.split_once('?').map(|(_, query)| query)
    }

    /// True for `?watch=1` / `?watch=true` requests (their bodies are streams of lines).
    pub fn is_watch(&self) -> bool {
        self.query().is_some_and(|query| query.split('&').any(|pair| matches!(pair, "watch=1" | "watch=true")))
    }

    /// The request ready to replay: same method, target, headers and body, with the recorded
    /// `<token>` placeholder replaced by `token`.
    pub fn to_http_request(&self, token: &str) -> http::Request<Vec<u8>> {
        let mut builder = http::Request::builder().method(self.method.as_str()).uri(self.path_and_query.as_str());
        for (name, value) in &self.headers {
            builder = builder.header(name.as_str(), value.replace("<token>", token));
        }
        builder
            .body(self.body.clone().unwrap_or_default())
            .unwrap_or_else(|err| panic!("recorded request cannot be rebuilt: {err}"))
    }
}

impl RecordedResponse {
    /// First value of a header (name compared case-insensitively).
    pub fn header(&self, name: &str) -> Option<&str> {
        header_values(&self.headers, name).into_iter().next()
    }
}

/// Every value of a header, in order (name compared case-insensitively).
pub fn header_values<'a>(headers: &'a [(String, String)], name: &str) -> Vec<&'a str> {
    headers.iter().filter(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str()).collect()
}

/// The corpus directory (`$KUBECTL_CRD_REFERENCE_DIR` wins); panics, saying where it looked,
/// when it does not exist.
pub fn reference_dir() -> PathBuf {
    locate_reference_dir(std::env::var_os(DIR_ENV).map(PathBuf::from))
}

/// The corpus directory given an optional override; panics, saying where it looked, when the
/// directory does not exist.
pub fn locate_reference_dir(override_dir: Option<PathBuf>) -> PathBuf {
    let (dir, source) = match override_dir {
        Some(dir) => (dir, format!("${DIR_ENV}")),
        None => (
            Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_RELATIVE_DIR),
            format!("$CARGO_MANIFEST_DIR/{DEFAULT_RELATIVE_DIR}"),
        ),
    };
    assert!(
        dir.is_dir(),
        "reference corpus not found: looked in {} (from {source}); clone `shared/` next to the \
         repository or set {DIR_ENV}",
        dir.display()
    );
    dir
}

/// The `.http` file names of the corpus, sorted (file order is recording order).
pub fn exchange_files() -> Vec<String> {
    let dir = reference_dir();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|err| panic!("cannot list {}: {err}", dir.display()));
    let mut files: Vec<String> = entries
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".http"))
        .collect();
    files.sort();
    files
}

/// Every recorded exchange, in file order; panics on the first file that does not parse.
pub fn load_all() -> Vec<Exchange> {
    exchange_files().iter().map(|file| load_file(file)).collect()
}

/// The one exchange whose file name starts with `prefix` (`"15-widget-create"` or just `"15"`).
pub fn load(prefix: &str) -> Exchange {
    let files = exchange_files();
    let matches: Vec<&String> = files.iter().filter(|file| file.starts_with(prefix)).collect();
    match matches.as_slice() {
        [file] => load_file(file),
        [] => panic!("no reference exchange starts with {prefix:?}"),
        many => panic!("{prefix:?} is ambiguous, it matches {many:?}"),
    }
}

/// Reads and parses one corpus file by name (e.g. `15-widget-create.http`).
pub fn load_file(file: &str) -> Exchange {
    let path = reference_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    parse_exchange(file, &text).unwrap_or_else(|err| panic!("{file}: {err}"))
}

/// Parses the text of one `.http` file.
pub fn parse_exchange(file: &str, text: &str) -> Result<Exchange, String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let (method, path_and_query) = parse_request_line(lines.first().copied().unwrap_or_default())?;
    let (request_headers, after_head) = parse_headers(&lines, 1)?;
    let status_at = find_status_line(&lines, after_head)?;
    let request = RecordedRequest {
        method,
        path_and_query,
        body: request_body(&lines[after_head..status_at], &request_headers),
        headers: request_headers,
    };
    let (status, reason_phrase) = parse_status_line(lines[status_at])?;
    let (headers, body_at) = parse_headers(&lines, status_at + 1)?;
    let (body_text, recorder_note) = split_recorder_note(&lines[body_at.min(lines.len())..]);
    let body = Body::decode(
        header_values(&headers, "content-type").first().copied(),
        body_text.as_bytes(),
        request.is_watch(),
    );
    let response =
        RecordedResponse { status, reason_phrase, headers, body, truncated: recorder_note.is_some(), recorder_note };
    Ok(Exchange { file: file.to_string(), request, response })
}

/// `POST /apis/... HTTP/1.1` → method and target.
fn parse_request_line(line: &str) -> Result<(String, String), String> {
    let mut parts = line.split(' ');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(method), Some(target), Some(version)) if version.starts_with("HTTP/") => {
            Ok((method.to_string(), target.to_string()))
        }
        _ => Err(format!("line 1: not a request line: {line:?}")),
    }
}

/// `HTTP/1.1 422 Unprocessable Entity` → status and reason phrase.
fn parse_status_line(line: &str) -> Result<(u16, String), String> {
    let mut parts = line.splitn(3, ' ');
    let _version = parts.next();
    let status =
        parts.next().and_then(|code| code.parse().ok()).ok_or_else(|| format!("not a status line: {line:?}"))?;
    Ok((status, parts.next().unwrap_or_default().to_string()))
}

/// Header lines from `start` up to the blank line; returns them and the index after the blank.
fn parse_headers(lines: &[&str], start: usize) -> Result<(Vec<(String, String)>, usize), String> {
    let mut headers = Vec::new();
    for (index, line) in lines.iter().enumerate().skip(start) {
        if line.is_empty() {
            return Ok((headers, index + 1));
        }
        let (name, value) =
            line.split_once(':').ok_or_else(|| format!("line {}: not a header: {line:?}", index + 1))?;
        headers.push((name.to_string(), value.trim_start().to_string()));
    }
    Err("header block does not end with a blank line".to_string())
}

/// Index of the response status line: the first `HTTP/` line that follows a blank line.
fn find_status_line(lines: &[&str], from: usize) -> Result<usize, String> {
    (from..lines.len())
        .find(|&index| lines[index].starts_with("HTTP/") && (index == from || lines[index - 1].is_empty()))
        .ok_or_else(|| "no response status line".to_string())
}

/// The request body lines (ending with the blank separator line) back into the bytes sent.
/// The recorder stripped trailing newlines; `Content-Length` tells how many to restore.
fn request_body(lines: &[&str], headers: &[(String, String)]) -> Option<Vec<u8>> {
    let lines = lines.strip_suffix(&[""]).unwrap_or(lines);
    if lines.is_empty() {
        return None;
    }
    let mut body = lines.join("\n").into_bytes();
    let declared: Option<usize> =
        header_values(headers, "content-length").first().and_then(|length| length.parse().ok());
    if let Some(declared) = declared {
        body.resize(declared.max(body.len()), b'\n');
    }
    Some(body)
}

/// Separates the response body text from a trailing recorder note, if any.
fn split_recorder_note(lines: &[&str]) -> (String, Option<String>) {
    let mut lines = trim_trailing_blank(lines);
    let note = lines
        .last()
        .filter(|last| last.starts_with(TRUNCATED_MARKER) || last.starts_with(TRIMMED_MARKER))
        .map(ToString::to_string);
    if note.is_some() {
        lines = trim_trailing_blank(&lines[..lines.len() - 1]);
    }
    (lines.join("\n"), note)
}

fn trim_trailing_blank<'a, 'b>(mut lines: &'a [&'b str]) -> &'a [&'b str] {
    while let Some((last, rest)) = lines.split_last() {
        if !last.is_empty() {
            break;
        }
        lines = rest;
    }
    lines
}

/// One JSON value per non-empty line, or `None` when any line is not JSON.
fn parse_watch_lines(text: &str) -> Option<Vec<Value>> {
    text.lines().filter(|line| !line.trim().is_empty()).map(|line| serde_json::from_str(line).ok()).collect()
}

/// `application/yaml` (with or without parameters) and `application/*+yaml` types.
fn is_yaml_media_type(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/yaml") || essence.ends_with("+yaml")
}
