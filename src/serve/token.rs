//! The bearer token that guards the server: 32 random bytes from the operating system,
//! base64url without padding, made on the first start and kept in `DIR/token` (mode 0600) so
//! kubeconfigs written earlier keep working after a restart. This module owns the token's
//! shape and its storage; [`super::auth`] owns the comparison.

use super::files::{self, FileError};
use base64::Engine as _;
use rand::TryRngCore;
use std::fmt;
use std::path::Path;

use crate::datadir::TOKEN_FILE;

/// Random bytes in a new token.
const TOKEN_BYTES: usize = 32;

/// Why the token could not be had.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    #[error(transparent)]
    File(#[from] FileError),
    #[error("{} does not hold a usable token ({why}); delete it and a new token is made on the next start", path.display())]
    Invalid { path: std::path::PathBuf, why: &'static str },
    #[error("the operating system's random number generator failed: {0}")]
    Random(String),
}

/// A bearer token. `Debug` does not show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A fresh token from the operating system's random source.
    pub fn generate() -> Result<Self, TokenError> {
        let mut bytes = [0u8; TOKEN_BYTES];
        rand::rngs::OsRng.try_fill_bytes(&mut bytes).map_err(|e| TokenError::Random(e.to_string()))?;
        Ok(Token(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)))
    }

    /// Checks a token read from a file: one line of visible ASCII, long enough to be a secret.
    pub fn parse(text: &str) -> Result<Self, &'static str> {
        let text = text.trim();
        if text.is_empty() {
            return Err("it is empty");
        }
        if !text.bytes().all(|b| b.is_ascii_graphic()) {
            return Err("it has spaces or characters that cannot go into an HTTP header");
        }
        if text.len() < 16 {
            return Err("it is shorter than 16 characters");
        }
        Ok(Token(text.to_string()))
    }

    /// The token text, as it goes after `Bearer `.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// The token kept in `dir`, made and stored first if there is none.
pub fn load_or_create(dir: &Path) -> Result<Token, TokenError> {
    let path = dir.join(TOKEN_FILE);
    if let Some(bytes) = files::read_if_exists(&path)? {
        let text =
            String::from_utf8(bytes).map_err(|_| TokenError::Invalid { path: path.clone(), why: "it is not text" })?;
        return Token::parse(&text).map_err(|why| TokenError::Invalid { path, why });
    }
    let token = Token::generate()?;
    files::write_atomic(&path, format!("{}\n", token.as_str()).as_bytes(), files::PRIVATE)?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_long_distinct_and_header_safe() {
        let a = Token::generate().expect("token");
        let b = Token::generate().expect("token");
        assert_ne!(a, b);
        assert_eq!(a.as_str().len(), 43, "32 bytes in unpadded base64");
        assert_eq!(Token::parse(a.as_str()), Ok(a.clone()));
        assert!(!format!("{a:?}").contains(a.as_str()), "Debug hides the token");
    }

    #[test]
    fn parse_rejects_what_cannot_be_a_token() {
        assert_eq!(Token::parse("  \n"), Err("it is empty"));
        assert!(Token::parse("short").is_err());
        assert!(Token::parse("has a space in the middle").is_err());
        assert_eq!(
            Token::parse("0123456789abcdef\n").map(|t| t.as_str().to_string()),
            Ok("0123456789abcdef".to_string())
        );
    }

    #[test]
    fn token_is_kept_across_calls() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = load_or_create(dir.path()).expect("created");
        let second = load_or_create(dir.path()).expect("loaded");
        assert_eq!(first, second);
    }

    #[test]
    fn a_damaged_token_file_says_what_to_do() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join(TOKEN_FILE), "").expect("write");
        let err = load_or_create(dir.path()).expect_err("empty token");
        assert!(err.to_string().contains("delete it"), "{err}");
    }
}
