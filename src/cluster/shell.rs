//! Commands the tools print for the user to paste (`kubectl crd migrate resume --journal
//! DIR`): they must reach the cluster the tool was connected to, so they carry the
//! connection flags that were given (`--local=DIR`, `--kubeconfig`, `--context`), and every
//! word is quoted for a POSIX shell where it needs it. Pure functions.

use super::connect::Target;
use std::path::Path;

/// `word` as a POSIX shell reads it back: unchanged when it holds only characters the
/// shell leaves alone, else in double quotes when nothing in it is special there, else in
/// single quotes (a `'` inside written `'\''`). Double quotes first because printed
/// commands sit between single quotes in our messages.
pub fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else if !word.contains(['"', '$', '`', '\\', '!']) {
        format!("\"{word}\"")
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A path, made absolute (a printed command may be pasted in another directory), quoted.
pub fn quote_path(path: &Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    quote(&absolute.display().to_string())
}

/// `kubectl crd` with the flags that reach `target` again: `--local=DIR`, or the
/// `--kubeconfig` and `--context` that were given (none given: the kubeconfig's current
/// context, as for the command that printed it).
pub fn command(target: &Target) -> String {
    let mut words = vec!["kubectl crd".to_string()];
    match target {
        Target::Local { data_dir } => words.push(format!("--local={}", quote_path(data_dir))),
        Target::Live { kubeconfig, context } => {
            if let Some(k) = kubeconfig {
                words.push(format!("--kubeconfig {}", quote_path(k)));
            }
            if let Some(c) = context {
                words.push(format!("--context {}", quote(c)));
            }
        }
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn words_are_quoted_only_when_the_shell_would_read_them_otherwise() {
        assert_eq!(quote("/var/lib/kubectl-crd/a_b.c"), "/var/lib/kubectl-crd/a_b.c");
        assert_eq!(quote("/tmp/my data"), "\"/tmp/my data\"");
        assert_eq!(quote("it's"), "\"it's\"");
        assert_eq!(quote("$HOME's"), r"'$HOME'\''s'");
        assert_eq!(quote(""), "\"\"");
    }

    #[test]
    fn commands_carry_the_connection_flags_that_were_given() {
        let local = Target::Local { data_dir: PathBuf::from("/srv/my data") };
        assert_eq!(command(&local), "kubectl crd --local=\"/srv/my data\"");
        let live = Target::Live { kubeconfig: Some("/k/config".into()), context: Some("prod east".into()) };
        assert_eq!(command(&live), "kubectl crd --kubeconfig /k/config --context \"prod east\"");
        assert_eq!(command(&Target::Live { kubeconfig: None, context: None }), "kubectl crd");
        let relative = command(&Target::Local { data_dir: PathBuf::from("data") });
        assert!(relative.starts_with("kubectl crd --local=/") && relative.ends_with("/data"), "{relative}");
    }
}
