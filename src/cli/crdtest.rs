//! `kubectl crd test`: finds the case files (`*.test.yaml`) and the CRDs under the given
//! directories, runs the cases ([`crate::crdtest`]) and prints `PASS`/`FAIL` per case and
//! the counts, or JUnit XML (`-o junit`). Exit codes: 0 when every case passes, 1 when any
//! fails (or a CRD is refused), 2 for unreadable input or a malformed case file.

use super::args::{OutputFormat, TestArgs};
use super::config::Config;
use super::validate::is_crd;
use super::{CliError, Reported};
use crate::cluster::apply::Document;
use crate::crdtest::{Case, Outcome, Ready, RunReport, is_case_file, parse, resolve, run as run_cases};
use crate::validate::Checked;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs `kubectl crd test`.
pub fn run(config: &Config, args: &TestArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let junit = match config.output {
        OutputFormat::Table | OutputFormat::Wide => false,
        OutputFormat::Junit => true,
        _ => return Err(CliError::Usage("kubectl crd test prints text or -o junit".into()).into()),
    };
    let (mut files, mut crd_files) = (Vec::new(), Vec::new());
    for path in &args.paths {
        walk(Path::new(path), &mut files)?;
    }
    for path in &args.crd {
        walk(Path::new(path), &mut crd_files)?;
    }
    // Cases come from the DIR arguments only; --crd adds CRDs and nothing else.
    let (case_files, mut other_files): (Vec<PathBuf>, Vec<PathBuf>) = files.into_iter().partition(|f| is_case_file(f));
    other_files.extend(crd_files.into_iter().filter(|f| !is_case_file(f)));
    if case_files.is_empty() {
        return Err(usage(format!("no test cases (*.test.yaml) in {}", args.paths.join(", "))));
    }
    let mut crds = Vec::new();
    for file in &other_files {
        crds.extend(crds_in(file)?);
    }
    let mut cases: Vec<Case> = Vec::new();
    for file in &case_files {
        let source = file.display().to_string();
        cases.extend(parse(&read(file)?, &source).map_err(|e| usage(e.to_string()))?);
    }
    let read_object = |path: &Path| std::fs::read_to_string(path).map_err(|e| e.to_string());
    let ready = cases
        .iter()
        .map(|case| {
            let (object, old) = resolve(case, &read_object).map_err(|e| usage(e.to_string()))?;
            Ok(Ready { case, object, old })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let report = super::runtime()?.block_on(run_cases(&crds, &ready))?;
    let text = if junit { render_junit(&report) } else { render_text(&report) };
    out.write_all(text.as_bytes())?;
    if failed(&report) == 0 { Ok(()) } else { Err(Reported.into()) }
}

fn usage(message: String) -> anyhow::Error {
    CliError::Usage(message).into()
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| usage(format!("cannot read {}: {e}", path.display())))
}

/// The .yaml, .yml and .json files of `path` (itself, or under it), sorted.
fn walk(path: &Path, files: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if !path.is_dir() {
        if !path.exists() {
            return Err(usage(format!("{}: no such file or directory", path.display())));
        }
        files.push(path.to_path_buf());
        return Ok(());
    }
    let entries = std::fs::read_dir(path).map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
    let mut entries: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            walk(&entry, files)?;
        } else if matches!(entry.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json")) {
            files.push(entry);
        }
    }
    Ok(())
}

/// The CRDs among `file`'s documents (the others are the cases' objects, or anything).
fn crds_in(file: &Path) -> anyhow::Result<Vec<Document>> {
    let source = file.display().to_string();
    let values = kubectl_crd_engine::manifests::from_yaml_documents(&read(file)?)
        .map_err(|e| usage(format!("{source}: not valid YAML: {e}")))?;
    Ok(values
        .into_iter()
        .enumerate()
        .filter(|(_, v)| is_crd(v))
        .map(|(i, value)| Document { origin: format!("{source} (document {})", i + 1), value })
        .collect())
}

/// Refused CRDs count as failures: their cases could not run as meant.
fn refused_crds(report: &RunReport) -> impl Iterator<Item = &Checked> {
    report.crds.iter().filter(|c| !c.valid)
}

fn failed(report: &RunReport) -> usize {
    refused_crds(report).count() + report.outcomes.iter().filter(|o| !o.passed()).count()
}

/// A line per case, the reasons of a failure under it, then the counts.
fn render_text(report: &RunReport) -> String {
    let mut text = String::new();
    for crd in refused_crds(report) {
        text.push_str(&format!("FAIL crd {} ({}): {}\n", crd.name, crd.origin, crd.verdict()));
    }
    for outcome in &report.outcomes {
        match outcome.failures.split_first() {
            None => text.push_str(&format!("PASS {}\n", outcome.name)),
            Some((first, rest)) => {
                text.push_str(&format!("FAIL {}: {first}\n", outcome.name));
                text.extend(rest.iter().map(|r| format!("  {r}\n")));
                text.push_str(&format!("  in {}\n", outcome.file));
            }
        }
    }
    let failed = failed(report);
    let passed = report.outcomes.iter().filter(|o| o.passed()).count();
    text.push_str(&format!("{passed} passed, {failed} failed\n"));
    text
}

/// A JUnit testcase: its name and its failures (none when it passed).
type JunitCase = (String, Vec<String>);

/// JUnit XML: a testsuite per case file (and one for refused CRDs), a testcase per case.
fn render_junit(report: &RunReport) -> String {
    let mut files: Vec<&str> = Vec::new();
    for outcome in &report.outcomes {
        if !files.contains(&outcome.file.as_str()) {
            files.push(&outcome.file);
        }
    }
    let crd_cases: Vec<JunitCase> =
        refused_crds(report).map(|c| (format!("crd {}", c.name), vec![c.verdict()])).collect();
    let mut suites: Vec<(String, Vec<JunitCase>)> = Vec::new();
    if !crd_cases.is_empty() {
        suites.push(("CustomResourceDefinitions".into(), crd_cases));
    }
    for file in files {
        let of_file = report.outcomes.iter().filter(|o| o.file == file);
        suites.push((file.to_string(), of_file.map(|o: &Outcome| (o.name.clone(), o.failures.clone())).collect()));
    }
    let total: usize = suites.iter().map(|(_, cases)| cases.len()).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"kubectl crd test\" tests=\"{total}\" failures=\"{}\">\n",
        failed(report)
    ));
    for (suite, cases) in &suites {
        let failures = cases.iter().filter(|(_, f)| !f.is_empty()).count();
        xml.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">\n",
            escape(suite),
            cases.len()
        ));
        for (name, failures) in cases {
            let head = format!("    <testcase name=\"{}\" classname=\"{}\"", escape(name), escape(suite));
            match failures.first() {
                None => xml.push_str(&format!("{head}/>\n")),
                Some(first) => xml.push_str(&format!(
                    "{head}>\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                    escape(first),
                    escape(&failures.join("\n"))
                )),
            }
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// Text as XML character data or attribute value; characters XML 1.0 cannot hold at all
/// become U+FFFD.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' | '\r' => out.push_str(&format!("&#{};", u32::from(c))),
            c if u32::from(c) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_text_is_escaped() {
        assert_eq!(escape("a<b & \"c\" 'd'>\n\u{1}"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;&#10;\u{FFFD}");
    }
}
