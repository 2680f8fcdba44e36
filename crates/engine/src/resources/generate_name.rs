//! Names for objects created with `metadata.generateName`, and kube's retry when one
//! collides.
//!
//! kube-apiserver's `SimpleNameGenerator` appends five random characters from an alphabet
//! without vowels (no words) or look-alikes, after cutting the prefix so that the name fits
//! 63 characters. 27^5 is about 14 million names per prefix, so collisions come by the
//! birthday bound: one in a thousand by ~500 names, half by ~4,500. Since 1.30
//! (`RetryGenerateName`, on by default in 1.31, locked in 1.32) its registry retries a
//! create whose generated name exists, with a fresh name, up to 8 attempts in all.
//!
//! The generator is a trait so that tests can force collisions; the engine uses
//! [`RandomSuffix`].

use rand::Rng;

/// kube's `names.SimpleNameGenerator` alphabet.
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// How many random characters follow the prefix.
const SUFFIX_LEN: usize = 5;
/// The longest prefix kept: a name is at most 63 characters.
const MAX_PREFIX_LEN: usize = 63 - SUFFIX_LEN;
/// kube's `maxNameGenerationCreateAttempts`: attempts in all, the first included.
pub const MAX_ATTEMPTS: usize = 8;

/// Makes a name from a `generateName` prefix.
pub trait NameGenerator: Send + Sync {
    /// A candidate name for `prefix`; the engine retries on collision up to [`MAX_ATTEMPTS`].
    fn generate(&self, prefix: &str) -> String;
}

/// kube's generator: the prefix (cut to 58 bytes) and five random characters.
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomSuffix;

impl NameGenerator for RandomSuffix {
    fn generate(&self, prefix: &str) -> String {
        let mut rng = rand::rng();
        let suffix: String = (0..SUFFIX_LEN).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect();
        format!("{}{suffix}", cut(prefix))
    }
}

/// The generator every engine uses unless told otherwise.
pub static RANDOM: RandomSuffix = RandomSuffix;

/// `prefix` cut to [`MAX_PREFIX_LEN`] bytes, as Go slices it (at a character boundary here:
/// a prefix that is not ASCII fails validation either way).
fn cut(prefix: &str) -> &str {
    if prefix.len() <= MAX_PREFIX_LEN {
        return prefix;
    }
    let mut end = MAX_PREFIX_LEN;
    while !prefix.is_char_boundary(end) {
        end -= 1;
    }
    &prefix[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_prefix_and_five_characters_of_kube_s_alphabet() {
        let name = RANDOM.generate("web-");
        assert_eq!(name.len(), 9);
        assert!(name.starts_with("web-"));
        assert!(name[4..].bytes().all(|b| ALPHABET.contains(&b)), "{name}");
    }

    #[test]
    fn long_prefixes_are_cut_so_the_name_fits_63_characters() {
        let name = RANDOM.generate(&"g".repeat(70));
        assert_eq!(name.len(), 63);
        assert!(name.starts_with(&"g".repeat(58)), "{name}");
        assert_eq!(cut(&format!("{}é", "a".repeat(57))), "a".repeat(57), "never inside a character");
    }
}
