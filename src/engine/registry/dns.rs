//! The name formats CRD validation relies on (apimachinery's `util/validation`), with the
//! exact sentences kube-apiserver returns.
//!
//! Each check returns the list of problems (empty when the value is fine) rather than a
//! bool, because kube joins or repeats these sentences verbatim in its field errors.
//! The grammars are checked by hand instead of with a regex: they are tiny and fixed.

/// `IsDNS1123Subdomain`'s regex sentence.
pub const DNS1123_SUBDOMAIN_MSG: &str = r"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// `IsDNS1035Label`'s regex sentence (the double space after `'my-name',` is kube's).
pub const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

const DNS1123_SUBDOMAIN_MAX: usize = 253;
const DNS1035_LABEL_MAX: usize = 63;

fn max_len_error(max: usize) -> String {
    format!("must be no more than {max} characters")
}

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn is_rfc1123_label_shape(label: &[u8]) -> bool {
    match (label.first(), label.last()) {
        (Some(&first), Some(&last)) => {
            is_lower_alnum(first) && is_lower_alnum(last) && label.iter().all(|&b| is_lower_alnum(b) || b == b'-')
        }
        _ => false,
    }
}

/// Problems with `value` as a DNS-1123 subdomain (`example.com`); empty when valid.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX));
    }
    if !value.split('.').all(|label| is_rfc1123_label_shape(label.as_bytes())) {
        errs.push(DNS1123_SUBDOMAIN_MSG.to_string());
    }
    errs
}

/// Problems with `value` as a DNS-1035 label (`my-name`); empty when valid.
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1035_LABEL_MAX {
        errs.push(max_len_error(DNS1035_LABEL_MAX));
    }
    let bytes = value.as_bytes();
    let shape_ok = bytes.first().is_some_and(u8::is_ascii_lowercase) && is_rfc1123_label_shape(bytes);
    if !shape_ok {
        errs.push(DNS1035_LABEL_MSG.to_string());
    }
    errs
}

/// apimachinery's `NameIsDNSSubdomain`: for a `generateName` prefix a trailing `-` is
/// allowed, because a random suffix will follow it.
pub fn name_is_dns_subdomain(name: &str, prefix: bool) -> Vec<String> {
    if prefix && name.len() > 1 && name.ends_with('-') {
        let masked = format!("{}a", &name[..name.len() - 1]);
        return is_dns1123_subdomain(&masked);
    }
    is_dns1123_subdomain(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomains() {
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
    fn dns1035_labels() {
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
