//! The checks of the committed manifest, and of the checker itself.

use super::*;

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
        "files-completion",
        &first(|pl| {
            pl.files = Some(vec![
                FileOperation { from: BINARY.into(), to: ".".into() },
                FileOperation { from: "LICENSE".into(), to: ".".into() },
            ]);
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
            ["LICENSE", "README.md", BINARY, COMPLETER],
            "the archive must hold exactly the binary, its completer, LICENSE and README.md, at its root"
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
