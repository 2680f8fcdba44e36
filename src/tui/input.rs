//! A line of text being typed: the `:` command line, the `/` filter, the wizard's fields.
//! A leaf, so that the screens' state and the wizard's can both hold one.

/// A line of text being typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Input {
    /// What has been typed so far.
    pub text: String,
}
