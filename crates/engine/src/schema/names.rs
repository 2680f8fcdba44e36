//! The name grammars object metadata relies on (apimachinery's `util/validation`), with
//! the exact sentences kube-apiserver returns: DNS-1123 labels and subdomains, DNS-1035
//! labels, qualified names (label and annotation keys, finalizers), label values and
//! path-segment names.
//!
//! Each check returns its problems (empty when the value is fine): kube repeats these
//! sentences verbatim, one field error per sentence. The one copy in the engine: object
//! metadata, CRD validation and conversion all check names here.

/// `IsDNS1123Subdomain`'s regex sentence.
pub const DNS1123_SUBDOMAIN_MSG: &str = r"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// `IsDNS1123Label`'s regex sentence (the double space after `'my-name',` is kube's).
pub const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/// `IsDNS1035Label`'s regex sentence.
pub const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

fn max_len(n: usize) -> String {
    format!("must be no more than {n} characters")
}

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn is_label_shape(s: &[u8]) -> bool {
    match (s.first(), s.last()) {
        (Some(&f), Some(&l)) => {
            is_lower_alnum(f) && is_lower_alnum(l) && s.iter().all(|&b| is_lower_alnum(b) || b == b'-')
        }
        _ => false,
    }
}

/// `IsDNS1123Label`: `my-name`, at most 63 characters. A valid subdomain that is no
/// label can only have dots, and kube says so rather than quoting the regex.
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63));
    }
    if !is_label_shape(value.as_bytes()) {
        if value.split('.').all(|l| is_label_shape(l.as_bytes())) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(DNS1123_LABEL_MSG.to_string());
        }
    }
    errs
}

/// `IsDNS1123Subdomain`: `example.com`, at most 253 characters.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len(253));
    }
    if !value.split('.').all(|l| is_label_shape(l.as_bytes())) {
        errs.push(DNS1123_SUBDOMAIN_MSG.to_string());
    }
    errs
}

/// `IsDNS1035Label`: a DNS-1123 label that starts with a letter.
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63));
    }
    let b = value.as_bytes();
    if !(b.first().is_some_and(u8::is_ascii_lowercase) && is_label_shape(b)) {
        errs.push(DNS1035_LABEL_MSG.to_string());
    }
    errs
}

/// A `generateName` may end with `-`: a random suffix follows it.
fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(base) if name.len() > 1 => format!("{base}a"),
        _ => name.to_string(),
    }
}

/// A name validator: `(name, is_generate_name_prefix) -> problems`.
pub type NameFn = fn(&str, bool) -> Vec<String>;

/// `NameIsDNSSubdomain`, what custom resources and most kinds use.
pub fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    if prefix { is_dns1123_subdomain(&mask_trailing_dash(name)) } else { is_dns1123_subdomain(name) }
}

/// `NameIsDNSLabel`, what namespaces use.
pub fn name_is_dns_label(name: &str, prefix: bool) -> Vec<String> {
    if prefix { is_dns1123_label(&mask_trailing_dash(name)) } else { is_dns1123_label(name) }
}

/// `ValidatePathSegmentName`: the weakest rule, any name that fits in a URL path segment.
pub fn validate_path_segment_name(name: &str, prefix: bool) -> Vec<String> {
    if !prefix && let Some(bad) = [".", ".."].into_iter().find(|bad| name == *bad) {
        return vec![format!("may not be '{bad}'")];
    }
    ["/", "%"].into_iter().filter(|c| name.contains(c)).map(|c| format!("may not contain '{c}'")).collect()
}

fn is_qualified_name_part(name: &str) -> bool {
    let b = name.as_bytes();
    let ext = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => f.is_ascii_alphanumeric() && l.is_ascii_alphanumeric() && b.iter().all(ext),
        _ => false,
    }
}

/// `IsQualifiedName`: `[prefix/]name`, as label keys, annotation keys and finalizers are.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(is_dns1123_subdomain(prefix).into_iter().map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len(63)));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!("name part {QUALIFIED_NAME_MSG}"));
    }
    errs
}

/// `IsValidLabelValue`.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len(63));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(LABEL_VALUE_MSG.to_string());
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomains_and_labels() {
        assert!(name_is_dns_subdomain("widgets.example.com", false).is_empty());
        assert_eq!(name_is_dns_subdomain("Bad_Name", false), [DNS1123_SUBDOMAIN_MSG]);
        assert!(name_is_dns_subdomain("gen-", true).is_empty());
        assert_eq!(is_dns1123_subdomain(&"a".repeat(254)), ["must be no more than 253 characters"]);
        // A subdomain that is no label can only have dots, and kube says so.
        assert_eq!(name_is_dns_label("a.b", false), ["must not contain dots"]);
        assert_eq!(name_is_dns_label("a_b", false), [DNS1123_LABEL_MSG]);
        assert_eq!(is_dns1035_label("1abc"), [DNS1035_LABEL_MSG]);
    }

    #[test]
    fn qualified_names() {
        assert!(is_qualified_name("app").is_empty());
        assert!(is_qualified_name("example.com/App_1").is_empty());
        assert_eq!(
            is_qualified_name("-bad"),
            [
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ]
        );
        assert_eq!(is_qualified_name("/x"), ["prefix part must be non-empty"]);
        assert_eq!(is_qualified_name("a/b/c").len(), 1);
        assert_eq!(is_qualified_name(&"a".repeat(64)), ["name part must be no more than 63 characters"]);
    }

    #[test]
    fn label_values_and_path_segments() {
        assert!(is_valid_label_value("").is_empty());
        assert!(is_valid_label_value("v1.2_3").is_empty());
        assert_eq!(is_valid_label_value("bad value").len(), 1);
        assert_eq!(validate_path_segment_name("..", false), ["may not be '..'"]);
        assert_eq!(validate_path_segment_name("a/b%", false), ["may not contain '/'", "may not contain '%'"]);
    }

    #[test]
    fn subdomains_one_by_one() {
        for ok in ["example.com", "stable.example.com", "a", "0", "a-b.c-d", "widgets.stable.example.com"] {
            assert!(is_dns1123_subdomain(ok).is_empty(), "{ok}");
        }
        for bad in ["", "Example.com", "a..b", ".a", "a.", "-a", "a-", "a_b", "a.b-"] {
            assert_eq!(is_dns1123_subdomain(bad), vec![DNS1123_SUBDOMAIN_MSG.to_string()], "{bad}");
        }
        let long = "a".repeat(254);
        assert_eq!(is_dns1123_subdomain(&long), vec!["must be no more than 253 characters".to_string()]);
    }

    #[test]
    fn dns1035_labels_one_by_one() {
        for ok in ["v1", "widgets", "a", "my-name", "v1beta1"] {
            assert!(is_dns1035_label(ok).is_empty(), "{ok}");
        }
        for bad in ["", "1v", "V1", "a.b", "a-", "-a", "wid_gets"] {
            assert_eq!(is_dns1035_label(bad), vec![DNS1035_LABEL_MSG.to_string()], "{bad}");
        }
        let long = "a".repeat(64);
        assert_eq!(is_dns1035_label(&long), vec!["must be no more than 63 characters".to_string()]);
    }

    #[test]
    fn generate_name_prefix_may_end_with_dash() {
        assert!(name_is_dns_subdomain("widgets-", true).is_empty());
        assert_eq!(name_is_dns_subdomain("widgets-", false), vec![DNS1123_SUBDOMAIN_MSG.to_string()]);
    }
}
