//! Bearer tokens as kube-apiserver reads them: the engine has one user, and the tokens that
//! name it are whatever its host accepts (`serve`'s; none in process). `serve` checks every
//! request's token with [`bearer_token`] and [`constant_time_eq`]; TokenReviews ask
//! [`Tokens::review`] about a token someone else was given.

use std::sync::RwLock;

/// The audiences kube-apiserver's tokens are meant for when a review names none: its
/// `--api-audiences`, which default to its service-account issuer (this URL under kubeadm,
/// kind and the oracle).
pub const API_AUDIENCES: [&str; 1] = ["https://kubernetes.default.svc.cluster.local"];

/// The token of an `Authorization` header's value, as kube's bearer-token authenticator
/// cuts it: the value trimmed, the scheme `bearer` in any case, then everything up to the
/// next space. `None` when there is no token to check (kube then tries no authenticator, so
/// says no more than "not authenticated").
pub fn bearer_token(value: &str) -> Option<&str> {
    let mut parts = value.trim().splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Compares two byte strings in time that depends only on their lengths, so a wrong token
/// does not reveal how many of its leading bytes were right.
pub fn constant_time_eq(expected: &[u8], given: &[u8]) -> bool {
    if expected.len() != given.len() {
        return false;
    }
    let diff = expected.iter().zip(given).fold(0u8, |acc, (a, b)| acc | (a ^ b));
    // `black_box` keeps the optimiser from turning the fold into an early-exit comparison.
    std::hint::black_box(diff) == 0
}

/// What a TokenReview learns of its token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenVerdict {
    /// It names the engine's user.
    Authenticated {
        /// The audiences it is good for.
        audiences: Vec<String>,
    },
    /// It was checked and names no one (or not for the audiences asked): kube's
    /// `invalid bearer token`.
    Invalid,
    /// Nothing was left to check once cut as a header (a token starting with a space).
    Unread,
}

/// The tokens that name the engine's user.
#[derive(Debug, Default)]
pub struct Tokens {
    accepted: RwLock<Vec<String>>,
}

impl Tokens {
    /// From now on, `token` names the engine's user.
    pub fn accept(&self, token: &str) {
        let mut accepted = self.accepted.write().unwrap_or_else(|e| e.into_inner());
        if !accepted.iter().any(|t| t == token) {
            accepted.push(token.to_string());
        }
    }

    fn names_the_user(&self, token: &str) -> bool {
        let accepted = self.accepted.read().unwrap_or_else(|e| e.into_inner());
        // Every accepted token is compared, so the time taken does not say which matched.
        accepted.iter().fold(false, |found, t| constant_time_eq(t.as_bytes(), token.as_bytes()) | found)
    }

    /// kube's TokenReview: the token goes into a header of its own and through the bearer
    /// authenticator, whose static tokens know no audiences of their own and so are good for
    /// the API audiences asked for (all of them when the review names none), in the order
    /// asked, repeats kept.
    pub fn review(&self, token: &str, audiences: &[String]) -> TokenVerdict {
        let header = format!("Bearer {token}");
        let Some(token) = bearer_token(&header) else {
            return TokenVerdict::Unread;
        };
        let audiences: Vec<String> = if audiences.is_empty() {
            API_AUDIENCES.iter().map(|a| a.to_string()).collect()
        } else {
            audiences.iter().filter(|a| API_AUDIENCES.contains(&a.as_str())).cloned().collect()
        };
        if audiences.is_empty() || !self.names_the_user(token) {
            return TokenVerdict::Invalid;
        }
        TokenVerdict::Authenticated { audiences }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_s_token_is_cut_as_kube_cuts_it() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("  bEaReR abc  "), Some("abc"));
        assert_eq!(bearer_token("Bearer abc def"), Some("abc"), "up to the next space");
        assert_eq!(bearer_token("Bearer  abc"), None, "two spaces: an empty token");
        assert_eq!(bearer_token("Bearer \tabc"), Some("\tabc"), "only spaces separate");
        assert_eq!(bearer_token("Bearer"), None);
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token(""), None);
    }

    #[test]
    fn constant_time_eq_is_equality() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn a_review_authenticates_accepted_tokens_for_the_api_audiences() {
        let tokens = Tokens::default();
        let api = API_AUDIENCES[0].to_string();
        assert_eq!(tokens.review("secret-token", &[]), TokenVerdict::Invalid, "none accepted yet");
        tokens.accept("secret-token");
        let all = TokenVerdict::Authenticated { audiences: vec![api.clone()] };
        assert_eq!(tokens.review("secret-token", &[]), all);
        assert_eq!(tokens.review("secret-token and more", &[]), all, "cut at the space");
        assert_eq!(tokens.review(" secret-token", &[]), TokenVerdict::Unread);
        assert_eq!(tokens.review("secret-tokem", &[]), TokenVerdict::Invalid);
        assert_eq!(tokens.review("secret-token", &["other".into()]), TokenVerdict::Invalid);
        let asked = ["other".to_string(), api.clone(), api.clone()];
        assert_eq!(
            tokens.review("secret-token", &asked),
            TokenVerdict::Authenticated { audiences: vec![api.clone(), api] },
            "the API audiences among those asked, repeats kept"
        );
    }
}
