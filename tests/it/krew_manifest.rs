//! Checks the krew plugin manifest `krew/crd.yaml` and the script that fills it,
//! `scripts/krew-release.sh`. krew only finds a broken manifest when someone runs
//! `kubectl krew install` (or the krew-index CI), long after the release is cut, so
//! this test re-implements krew's validation rules (`ValidatePlugin` and the
//! `validate-krew-manifest` checks: API version and kind, plugin name, semver version
//! with a leading `v`, one-line short description, platform selectors, `uri`, `sha256`,
//! `bin`, file operations, a LICENSE among the installed files, line lengths,
//! overlapping selectors) plus this project's own expectations (the four platforms,
//! archive names, the version matching Cargo.toml). Every violation names its rule.
//! It then runs the release script against a fake binary in a temporary target
//! directory and checks the archive it builds and the manifest it rewrites.

mod rules;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

const API_VERSION: &str = "krew.googlecontainertools.github.com/v1alpha2";
const BINARY: &str = "kubectl-crd";
/// kubectl's plugin completion (`kubectl crd <TAB>`), installed beside the binary.
const COMPLETER: &str = "kubectl_complete-crd";
const DEFAULT_BASE_URL: &str = "https://github.com/kubectl-crd/kubectl-crd/releases/download";
/// The `<os, arch>` pairs the manifest must serve, one platform each.
const PLATFORMS: [(&str, &str); 4] = [("linux", "amd64"), ("linux", "arm64"), ("darwin", "amd64"), ("darwin", "arm64")];
/// The `<os, arch>` pairs krew itself knows (`validate-krew-manifest`'s `allPlatforms`).
const KREW_PLATFORMS: [(&str, &str); 11] = [
    ("windows", "386"),
    ("windows", "amd64"),
    ("windows", "arm64"),
    ("linux", "386"),
    ("linux", "amd64"),
    ("linux", "arm"),
    ("linux", "arm64"),
    ("linux", "ppc64le"),
    ("darwin", "386"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
];
/// File names krew accepts as the license (`validateLicenseFileExists`), lower-cased.
const LICENSE_FILES: [&str; 8] =
    ["license", "license.txt", "license.md", "licenses", "licenses.txt", "licenses.md", "copying", "copying.txt"];
/// Names Windows reserves, which krew refuses as plugin names.
const WINDOWS_FORBIDDEN: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "LPT1", "LPT2",
    "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];
const SHORT_DESCRIPTION_MAX: usize = 50;
const DESCRIPTION_LINE_MAX: usize = 80;

// krew decodes manifests strictly, so unknown fields are errors here too.

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Plugin {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    metadata: Metadata,
    spec: Spec,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Metadata {
    #[serde(default)]
    name: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Spec {
    #[serde(default)]
    version: String,
    #[serde(default)]
    homepage: String,
    #[serde(default)]
    short_description: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    caveats: String,
    #[serde(default)]
    platforms: Vec<Platform>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Platform {
    selector: Option<Selector>,
    #[serde(default)]
    uri: String,
    #[serde(default)]
    sha256: String,
    #[serde(default)]
    bin: String,
    files: Option<Vec<FileOperation>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Selector {
    match_labels: Option<BTreeMap<String, String>>,
    match_expressions: Option<Vec<serde_json::Value>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileOperation {
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
}

impl Platform {
    /// The `os` and `arch` match labels, when both are set.
    fn os_arch(&self) -> Option<(&str, &str)> {
        let labels = self.selector.as_ref()?.match_labels.as_ref()?;
        Some((labels.get("os")?.as_str(), labels.get("arch")?.as_str()))
    }

    fn describe(&self, index: usize) -> String {
        match self.os_arch() {
            Some((os, arch)) => format!("spec.platforms[{index}] ({os}/{arch})"),
            None => format!("spec.platforms[{index}]"),
        }
    }
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn manifest_path() -> PathBuf {
    repo_root().join("krew").join("crd.yaml")
}

fn load_manifest(path: &Path) -> Plugin {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    parse_manifest(&text).unwrap_or_else(|e| panic!("[strict-decode] {}: {e}", path.display()))
}

fn parse_manifest(text: &str) -> Result<Plugin, serde_saphyr::Error> {
    serde_saphyr::from_str(text)
}

// --- the rules ------------------------------------------------------------------

/// Every violation of krew's rules and of this project's expectations for any
/// release of the manifest at `path` (a previous release's uri may be kept, so the
/// version in each uri is checked separately, by [`release_violations`]).
fn krew_violations(path: &Path, plugin: &Plugin) -> Vec<String> {
    let mut out = Vec::new();
    check_header(path, plugin, &mut out);
    check_texts(&plugin.spec, &mut out);
    check_version(&plugin.spec.version, &mut out);
    if plugin.spec.platforms.is_empty() {
        out.push("[platforms-present] spec.platforms must not be empty".to_owned());
    }
    for (index, platform) in plugin.spec.platforms.iter().enumerate() {
        check_platform(index, platform, &mut out);
    }
    check_platform_coverage(&plugin.spec.platforms, &mut out);
    out
}

/// Rules that hold for a manifest whose every platform belongs to one release:
/// the version is Cargo.toml's and each uri names it.
fn release_violations(plugin: &Plugin, cargo_version: &str) -> Vec<String> {
    let mut out = Vec::new();
    let version = &plugin.spec.version;
    if version.strip_prefix('v') != Some(cargo_version) {
        out.push(format!(
            "[version-matches-cargo] spec.version {version:?} must be \"v{cargo_version}\" (Cargo.toml's package version)"
        ));
    }
    for (index, platform) in plugin.spec.platforms.iter().enumerate() {
        let Some((os, arch)) = platform.os_arch() else {
            continue;
        };
        let expected = release_uri(DEFAULT_BASE_URL, version, os, arch);
        if platform.uri != expected {
            out.push(format!(
                "[uri-names-release] {}: uri {:?} must be {expected:?}",
                platform.describe(index),
                platform.uri
            ));
        }
    }
    out
}

fn check_header(path: &Path, plugin: &Plugin, out: &mut Vec<String>) {
    if plugin.api_version != API_VERSION {
        out.push(format!("[api-version] apiVersion {:?} must be {API_VERSION:?}", plugin.api_version));
    }
    if plugin.kind != "Plugin" {
        out.push(format!("[kind] kind {:?} must be \"Plugin\"", plugin.kind));
    }
    let name = &plugin.metadata.name;
    if !is_safe_plugin_name(name) {
        out.push(format!("[name-safe] metadata.name {name:?} must match ^[\\w-]+$ and not be a reserved Windows name"));
    }
    if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
        out.push(format!("[file-extension] {} must end in .yaml", path.display()));
    }
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    if name != stem {
        out.push(format!(
            "[name-matches-file] metadata.name {name:?} must equal the file name without .yaml ({stem:?})"
        ));
    }
}

fn check_texts(spec: &Spec, out: &mut Vec<String>) {
    let short = &spec.short_description;
    if short.trim().is_empty() {
        out.push("[short-description] spec.shortDescription must be set".to_owned());
    }
    if short.contains(['\r', '\n']) {
        out.push("[short-description] spec.shortDescription must be a single line".to_owned());
    }
    if short.chars().count() > SHORT_DESCRIPTION_MAX {
        out.push(format!(
            "[short-description] spec.shortDescription has {} characters, at most {SHORT_DESCRIPTION_MAX} allowed",
            short.chars().count()
        ));
    }
    if spec.description.trim().lines().count() < 2 {
        out.push("[description] spec.description must be a multi-line text".to_owned());
    }
    if spec.caveats.trim().is_empty() {
        out.push("[caveats] spec.caveats must be set".to_owned());
    }
    for (field, text) in [("description", &spec.description), ("caveats", &spec.caveats)] {
        for line in long_lines(text, DESCRIPTION_LINE_MAX) {
            out.push(format!("[line-length] a spec.{field} line is over {DESCRIPTION_LINE_MAX} characters: {line:?}"));
        }
    }
    if !spec.homepage.starts_with("https://") {
        out.push(format!("[homepage] spec.homepage {:?} must be an https URL", spec.homepage));
    }
}

fn check_version(version: &str, out: &mut Vec<String>) {
    match version.strip_prefix('v') {
        None => out.push(format!("[version-semver] spec.version {version:?} must start with 'v'")),
        Some(rest) if !is_semver(rest) => {
            out.push(format!("[version-semver] spec.version {version:?} is not a semantic version"))
        }
        Some(_) => {}
    }
}

fn check_platform(index: usize, platform: &Platform, out: &mut Vec<String>) {
    let at = platform.describe(index);
    check_selector(&at, platform.selector.as_ref(), out);
    if !platform.uri.starts_with("https://") {
        out.push(format!("[uri] {at}: uri {:?} must be an https URL", platform.uri));
    }
    if let Some((os, arch)) = platform.os_arch() {
        let suffix = format!("_{os}_{arch}.tar.gz");
        let archive = platform.uri.rsplit('/').next().unwrap_or_default();
        if !(archive.starts_with("kubectl-crd_v") && archive.ends_with(&suffix)) {
            out.push(format!(
                "[uri-archive-name] {at}: uri must end in kubectl-crd_<version>{suffix}, got {:?}",
                platform.uri
            ));
        }
    }
    if !is_sha256(&platform.sha256) {
        out.push(format!("[sha256] {at}: sha256 {:?} must match ^[a-f0-9]{{64}}$", platform.sha256));
    }
    if platform.bin.is_empty() {
        out.push(format!("[bin] {at}: bin must be set"));
    } else if platform.bin != BINARY {
        out.push(format!("[bin] {at}: bin {:?} must be {BINARY:?}", platform.bin));
    }
    check_files(&at, platform, out);
}

fn check_selector(at: &str, selector: Option<&Selector>, out: &mut Vec<String>) {
    let Some(selector) = selector else {
        out.push(format!("[selector] {at}: selector must be set"));
        return;
    };
    let labels = selector.match_labels.as_ref();
    let expressions = selector.match_expressions.as_ref();
    if labels.is_none() && expressions.is_none_or(Vec::is_empty) {
        out.push(format!("[selector] {at}: selector must not be empty"));
    }
    if labels.is_some_and(BTreeMap::is_empty) {
        out.push(format!("[selector] {at}: matchLabels is specified but empty"));
    }
    if expressions.is_some_and(Vec::is_empty) {
        out.push(format!("[selector] {at}: matchExpressions is specified but empty"));
    }
    let label_keys = labels.into_iter().flat_map(BTreeMap::keys).map(String::as_str);
    let expression_keys =
        expressions.into_iter().flatten().map(|e| e.get("key").and_then(serde_json::Value::as_str).unwrap_or_default());
    for key in label_keys.chain(expression_keys) {
        if key != "os" && key != "arch" {
            out.push(format!("[selector] {at}: selector key {key:?} is not os or arch"));
        }
    }
    if labels.is_some_and(|l| !l.contains_key("os") || !l.contains_key("arch")) {
        out.push(format!("[selector] {at}: matchLabels must set both os and arch"));
    }
}

fn check_files(at: &str, platform: &Platform, out: &mut Vec<String>) {
    let Some(files) = &platform.files else {
        out.push(format!("[files] {at}: files must install {BINARY} and LICENSE (krew needs the license installed)"));
        return;
    };
    if files.is_empty() {
        out.push(format!("[files] {at}: files must be unspecified or non-empty"));
    }
    for op in files {
        if op.from.is_empty() || op.to.is_empty() {
            out.push(format!("[files] {at}: every file operation needs from and to, got {op:?}"));
        }
    }
    let installed = |name: &str| files.iter().any(|op| op.from == name && op.to == ".");
    if !installed(&platform.bin) {
        out.push(format!("[files-bin] {at}: files must install the bin {:?} ({{from: {0:?}, to: .}})", platform.bin));
    }
    if !installed(COMPLETER) {
        out.push(format!("[files-completion] {at}: files must install {COMPLETER} ({{from: {COMPLETER}, to: .}})"));
    }
    let has_license = files.iter().any(|op| {
        let base = op.from.rsplit('/').next().unwrap_or_default();
        LICENSE_FILES.contains(&base.to_lowercase().as_str())
    });
    if !has_license || !installed("LICENSE") {
        out.push(format!("[license] {at}: files must install LICENSE ({{from: LICENSE, to: .}})"));
    }
}

/// krew refuses platforms no known `<os, arch>` selects and pairs selected twice;
/// this project ships exactly [`PLATFORMS`].
fn check_platform_coverage(platforms: &[Platform], out: &mut Vec<String>) {
    let mut seen = BTreeSet::new();
    for (index, platform) in platforms.iter().enumerate() {
        let Some(pair) = platform.os_arch() else {
            continue;
        };
        if !KREW_PLATFORMS.contains(&pair) {
            out.push(format!(
                "[platform-supported] spec.platforms[{index}] selects {}/{}, which krew does not know",
                pair.0, pair.1
            ));
        }
        if !seen.insert(pair) {
            out.push(format!("[platform-overlap] {}/{} is selected by more than one platform", pair.0, pair.1));
        }
    }
    for (os, arch) in PLATFORMS {
        if !seen.contains(&(os, arch)) {
            out.push(format!("[platform-coverage] no platform for {os}/{arch}"));
        }
    }
}

fn is_safe_plugin_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !WINDOWS_FORBIDDEN.iter().any(|f| f.eq_ignore_ascii_case(name))
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Semantic versioning 2.0.0, without the leading `v`.
fn is_semver(s: &str) -> bool {
    let (rest, build) = match s.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (s, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (rest, None),
    };
    let numeric =
        |id: &str| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) && (id == "0" || !id.starts_with('0'));
    let identifier = |id: &str| !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let core_ok = core.split('.').count() == 3 && core.split('.').all(numeric);
    let pre_ok = pre.is_none_or(|p| {
        p.split('.').all(|id| identifier(id) && (!id.bytes().all(|b| b.is_ascii_digit()) || numeric(id)))
    });
    let build_ok = build.is_none_or(|b| b.split('.').all(identifier));
    core_ok && pre_ok && build_ok
}

/// Lines over `max` characters that contain a space (krew lets one long word through).
fn long_lines(text: &str, max: usize) -> Vec<&str> {
    text.lines().filter(|line| line.chars().count() > max && line.trim().contains(' ')).collect()
}

fn release_uri(base: &str, version: &str, os: &str, arch: &str) -> String {
    format!("{base}/{version}/kubectl-crd_{version}_{os}_{arch}.tar.gz")
}

fn assert_no_violations(what: &str, violations: &[String]) {
    assert!(violations.is_empty(), "{what} breaks {} rule(s):\n  {}", violations.len(), violations.join("\n  "));
}

/// Asserts that `violations` contains one for `rule` (the tests of the checker itself).
fn assert_flags(rule: &str, violations: &[String]) {
    let tag = format!("[{rule}]");
    assert!(violations.iter().any(|v| v.starts_with(&tag)), "expected a {tag} violation, got: {violations:#?}");
}
