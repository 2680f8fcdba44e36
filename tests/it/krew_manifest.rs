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

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

const API_VERSION: &str = "krew.googlecontainertools.github.com/v1alpha2";
const BINARY: &str = "kubectl-crd";
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

// --- the committed manifest -----------------------------------------------------

#[test]
fn committed_manifest_follows_krew_rules() {
    let path = manifest_path();
    let plugin = load_manifest(&path);
    assert_no_violations(&path.display().to_string(), &krew_violations(&path, &plugin));
}

#[test]
fn committed_manifest_is_for_the_cargo_version() {
    let plugin = load_manifest(&manifest_path());
    assert_no_violations("krew/crd.yaml", &release_violations(&plugin, env!("CARGO_PKG_VERSION")));
}

#[test]
fn license_file_exists_at_the_repository_root() {
    let license = std::fs::read_to_string(repo_root().join("LICENSE"))
        .expect("[license] LICENSE must exist at the repository root: every archive ships it");
    assert!(
        license.contains("Apache License") && license.contains("Version 2.0, January 2004"),
        "[license] LICENSE must be the Apache License 2.0 text (Cargo.toml says Apache-2.0)"
    );
}

// --- the checker can fail ----------------------------------------------------------

/// The committed manifest, changed by `edit`, checked as if it were at `path`.
fn violations_after(path: &str, edit: impl FnOnce(&mut Plugin)) -> Vec<String> {
    let mut plugin = load_manifest(&manifest_path());
    edit(&mut plugin);
    krew_violations(Path::new(path), &plugin)
}

#[test]
fn checker_flags_broken_headers_and_texts() {
    let path = "krew/crd.yaml";
    assert_flags("api-version", &violations_after(path, |p| p.api_version = "v1".into()));
    assert_flags("kind", &violations_after(path, |p| p.kind = "Pod".into()));
    assert_flags("name-safe", &violations_after(path, |p| p.metadata.name = "a/b".into()));
    assert_flags("name-safe", &violations_after("krew/nul.yaml", |p| p.metadata.name = "nul".into()));
    assert_flags("name-matches-file", &violations_after("krew/other.yaml", |_| {}));
    assert_flags("file-extension", &violations_after("krew/crd.yml", |_| {}));
    assert_flags("version-semver", &violations_after(path, |p| p.spec.version = "0.1.0".into()));
    assert_flags("version-semver", &violations_after(path, |p| p.spec.version = "v0.1".into()));
    assert_flags("version-semver", &violations_after(path, |p| p.spec.version = "v01.0.0".into()));
    assert_flags(
        "short-description",
        &violations_after(path, |p| {
            p.spec.short_description = "x".repeat(SHORT_DESCRIPTION_MAX + 1);
        }),
    );
    assert_flags(
        "short-description",
        &violations_after(path, |p| {
            p.spec.short_description = "two\nlines".into();
        }),
    );
    assert_flags("description", &violations_after(path, |p| p.spec.description = "one".into()));
    assert_flags(
        "line-length",
        &violations_after(path, |p| {
            p.spec.caveats = format!("{}\n", "word ".repeat(20));
        }),
    );
    assert_flags("homepage", &violations_after(path, |p| p.spec.homepage = "http://x".into()));
    assert_flags("platforms-present", &violations_after(path, |p| p.spec.platforms.clear()));
}

#[test]
fn checker_flags_broken_platforms() {
    let path = "krew/crd.yaml";
    let first = |edit: fn(&mut Platform)| violations_after(path, |p| edit(&mut p.spec.platforms[0]));
    assert_flags("sha256", &first(|pl| pl.sha256 = "ABC".into()));
    assert_flags("sha256", &first(|pl| pl.sha256 = "A".repeat(64)));
    assert_flags("uri", &first(|pl| pl.uri = String::new()));
    assert_flags("uri-archive-name", &first(|pl| pl.uri = "https://x/kubectl-crd.zip".into()));
    assert_flags("bin", &first(|pl| pl.bin = String::new()));
    assert_flags("selector", &first(|pl| pl.selector = None));
    assert_flags(
        "selector",
        &first(|pl| {
            pl.selector = Some(Selector { match_labels: Some(BTreeMap::new()), match_expressions: None });
        }),
    );
    assert_flags(
        "selector",
        &first(|pl| {
            if let Some(labels) = pl.selector.as_mut().and_then(|s| s.match_labels.as_mut()) {
                labels.insert("distro".into(), "debian".into());
            }
        }),
    );
    assert_flags("files", &first(|pl| pl.files = Some(Vec::new())));
    assert_flags("files", &first(|pl| pl.files = None));
    assert_flags(
        "license",
        &first(|pl| {
            pl.files = Some(vec![FileOperation { from: BINARY.into(), to: ".".into() }]);
        }),
    );
    assert_flags(
        "files-bin",
        &first(|pl| {
            pl.files = Some(vec![FileOperation { from: "LICENSE".into(), to: ".".into() }]);
        }),
    );
    assert_flags(
        "platform-overlap",
        &violations_after(path, |p| {
            let copy = p.spec.platforms[0].clone();
            p.spec.platforms.push(copy);
        }),
    );
    assert_flags(
        "platform-coverage",
        &violations_after(path, |p| {
            p.spec.platforms.pop();
        }),
    );
}

#[test]
fn checker_flags_stale_release_fields() {
    let mut plugin = load_manifest(&manifest_path());
    plugin.spec.version = "v9.9.9".into();
    let violations = release_violations(&plugin, env!("CARGO_PKG_VERSION"));
    assert_flags("version-matches-cargo", &violations);
    assert_flags("uri-names-release", &violations);
}

#[test]
fn strict_decoding_rejects_unknown_fields() {
    let text = std::fs::read_to_string(manifest_path()).expect("read krew/crd.yaml");
    let broken = text.replacen("  homepage:", "  homepages: x\n  homepage:", 1);
    assert_ne!(broken, text, "the manifest should have a spec.homepage line to edit");
    assert!(
        parse_manifest(&broken).is_err(),
        "[strict-decode] an unknown spec field must be rejected, as krew's strict decoding does"
    );
}

#[test]
fn semver_parser_follows_the_spec() {
    for good in ["0.1.0", "1.2.3-rc.1", "1.0.0-alpha-1.0", "1.0.0+build.5", "10.20.30-x.7+y"] {
        assert!(is_semver(good), "{good} is a semantic version");
    }
    for bad in ["", "1", "1.2", "1.2.3.4", "01.2.3", "1.2.3-", "1.2.3-01", "1.2.3+", "a.b.c"] {
        assert!(!is_semver(bad), "{bad:?} is not a semantic version");
    }
}

// --- the release script --------------------------------------------------------------

#[cfg(unix)]
mod release_script {
    use super::*;

    use std::os::unix::fs::PermissionsExt;
    use std::process::{Command, Output};

    const TEST_VERSION: &str = "v0.0.0-krew.test";
    const HOST_TARGET: &str = "x86_64-unknown-linux-gnu";
    const FAKE_BINARY: &str = "#!/bin/sh\necho 'kubectl-crd (test stand-in)'\n";

    /// A temporary tree: a cargo-like target dir with a fake binary, a copy of the
    /// manifest under `krew/crd.yaml`, and an empty output directory.
    struct Sandbox {
        dir: tempfile::TempDir,
    }

    impl Sandbox {
        fn new() -> Self {
            let dir = tempfile::tempdir().expect("create a temp dir");
            let sandbox = Self { dir };
            let binary = sandbox.target_dir().join(HOST_TARGET).join("release").join(BINARY);
            std::fs::create_dir_all(binary.parent().expect("binary has a parent")).expect("create the fake target dir");
            std::fs::write(&binary, FAKE_BINARY).expect("write the fake binary");
            std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755))
                .expect("make the fake binary executable");
            std::fs::create_dir_all(sandbox.manifest().parent().expect("manifest has a parent"))
                .expect("create the manifest dir");
            std::fs::copy(manifest_path(), sandbox.manifest()).expect("copy krew/crd.yaml");
            sandbox
        }

        fn target_dir(&self) -> PathBuf {
            self.dir.path().join("target")
        }

        fn manifest(&self) -> PathBuf {
            self.dir.path().join("krew").join("crd.yaml")
        }

        fn out(&self, name: &str) -> PathBuf {
            self.dir.path().join(name)
        }

        /// Runs the script with the sandbox's target dir, manifest and `out` dir.
        fn run(&self, out: &str, extra: &[&str]) -> Output {
            Command::new(script_path())
                .arg(TEST_VERSION)
                .arg("--manifest")
                .arg(self.manifest())
                .arg("--out")
                .arg(self.out(out))
                .args(extra)
                .env("KUBECTL_CRD_TARGET_DIR", self.target_dir())
                .env_remove("KUBECTL_CRD_RELEASE_BASE_URL")
                .output()
                .expect("run scripts/krew-release.sh")
        }

        fn archive(&self, out: &str) -> PathBuf {
            self.out(out).join(format!("kubectl-crd_{TEST_VERSION}_linux_amd64.tar.gz"))
        }
    }

    fn script_path() -> PathBuf {
        repo_root().join("scripts").join("krew-release.sh")
    }

    fn stderr(output: &Output) -> String {
        String::from_utf8_lossy(&output.stderr).into_owned()
    }

    fn run_tool(program: &str, args: &[&str], path: &Path) -> String {
        let output =
            Command::new(program).args(args).arg(path).output().unwrap_or_else(|e| panic!("run {program}: {e}"));
        assert!(output.status.success(), "{program} {args:?} failed: {}", stderr(&output));
        String::from_utf8(output.stdout).expect("tool output is UTF-8")
    }

    fn sha256_of(path: &Path) -> String {
        let line = run_tool("sha256sum", &[], path);
        line.split_whitespace().next().expect("sha256sum prints a hash").to_owned()
    }

    fn archive_entries(archive: &Path) -> Vec<String> {
        let mut names: Vec<String> = run_tool("tar", &["-tzf"], archive).lines().map(str::to_owned).collect();
        names.sort();
        names
    }

    fn platform<'a>(plugin: &'a Plugin, os: &str, arch: &str) -> &'a Platform {
        plugin
            .spec
            .platforms
            .iter()
            .find(|p| p.os_arch() == Some((os, arch)))
            .unwrap_or_else(|| panic!("the manifest has a platform for {os}/{arch}"))
    }

    fn require_readme() {
        assert!(
            repo_root().join("README.md").is_file(),
            "README.md must exist at the repository root: the release script packages it"
        );
    }

    #[test]
    fn script_is_executable() {
        let mode = std::fs::metadata(script_path()).expect("scripts/krew-release.sh exists").permissions().mode();
        assert!(mode & 0o111 != 0, "scripts/krew-release.sh must be executable (mode {mode:o})");
    }

    #[test]
    fn packages_the_host_target_and_fills_the_manifest() {
        require_readme();
        let sandbox = Sandbox::new();
        let before = load_manifest(&sandbox.manifest());

        let output = sandbox.run("dist", &["--allow-missing", "--targets", HOST_TARGET]);
        assert!(output.status.success(), "the script failed: {}", stderr(&output));

        let archive = sandbox.archive("dist");
        assert!(archive.is_file(), "no archive at {}", archive.display());
        assert_eq!(
            archive_entries(&archive),
            ["LICENSE", "README.md", BINARY],
            "the archive must hold exactly the binary, LICENSE and README.md, at its root"
        );
        let binary = Command::new("tar").arg("-xOzf").arg(&archive).arg(BINARY).output().expect("extract the binary");
        assert_eq!(binary.stdout, FAKE_BINARY.as_bytes(), "the archive must hold the binary as built");

        let after = load_manifest(&sandbox.manifest());
        assert_eq!(after.spec.version, TEST_VERSION, "spec.version must be the released version");
        let linux = platform(&after, "linux", "amd64");
        assert_eq!(linux.sha256, sha256_of(&archive), "linux/amd64 sha256 must be the archive's");
        assert_eq!(linux.uri, release_uri(DEFAULT_BASE_URL, TEST_VERSION, "linux", "amd64"));
        for (os, arch) in PLATFORMS.into_iter().filter(|&p| p != ("linux", "amd64")) {
            let (old, new) = (platform(&before, os, arch), platform(&after, os, arch));
            assert_eq!((&old.uri, &old.sha256), (&new.uri, &new.sha256), "{os}/{arch} must be kept");
        }
        assert_no_violations("the rewritten manifest", &krew_violations(&sandbox.manifest(), &after));
    }

    #[test]
    fn archives_are_reproducible() {
        require_readme();
        let sandbox = Sandbox::new();
        for out in ["first", "second"] {
            // Let the clock move on, so that a timestamp leaking into the archive shows.
            std::thread::sleep(std::time::Duration::from_millis(1100));
            let output = sandbox.run(out, &["--allow-missing", "--targets", HOST_TARGET]);
            assert!(output.status.success(), "the script failed: {}", stderr(&output));
        }
        let listing = run_tool("tar", &["--utc", "--numeric-owner", "-tvzf"], &sandbox.archive("first"));
        for entry in listing.lines() {
            assert!(
                entry.contains(" 0/0 ") && entry.contains(" 1970-01-01 00:00 "),
                "every entry must be owned by 0/0 with mtime 0: {entry:?}"
            );
        }
        let first = std::fs::read(sandbox.archive("first")).expect("read the first archive");
        let second = std::fs::read(sandbox.archive("second")).expect("read the second archive");
        assert!(first == second, "two runs over the same inputs must give byte-identical archives");
    }

    #[test]
    fn missing_binaries_fail_without_allow_missing() {
        require_readme();
        let sandbox = Sandbox::new();
        let before = std::fs::read_to_string(sandbox.manifest()).expect("read the manifest copy");

        let output = sandbox.run("dist", &[]);
        assert!(!output.status.success(), "missing targets must make the script fail");
        let message = stderr(&output);
        for missing in ["aarch64-unknown-linux-gnu", "x86_64-apple-darwin", "aarch64-apple-darwin"] {
            assert!(message.contains(missing), "the error must name {missing}: {message}");
        }
        let after = std::fs::read_to_string(sandbox.manifest()).expect("read the manifest copy");
        assert_eq!(before, after, "a failed run must leave the manifest alone");
        assert!(!sandbox.archive("dist").exists(), "a failed run must not write archives");
    }
}
