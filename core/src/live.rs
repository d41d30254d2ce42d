//! How a CLI target runs for real against a loopback fake provider (the live tier).
//!
//! A plugin declares one [`LiveRecipe`] per CLI target in its manifest. The conformance suite's live
//! checks install nothing themselves: they find the program (see `scripts/install-clis.sh`), make a
//! temporary HOME, write the recipe's files into it, and run the target's resume plan with the
//! recipe's environment, then read the first request the fake provider received.

use serde::{Deserialize, Serialize};

/// How to run a CLI target against a fake provider. Strings may contain the placeholders
/// `{base_url}` (e.g. `http://127.0.0.1:PORT`), `{home}` (the temporary HOME) and `{store_root}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveRecipe {
    /// The npm package that provides the CLI, e.g. `@anthropic-ai/claude-code`.
    pub npm_package: String,
    /// The pinned version the target is tested against, e.g. `2.1.197`.
    pub version: String,
    /// The program name, e.g. `claude`.
    pub program: String,
    /// The wire dialect the CLI speaks to the provider.
    pub dialect: crate::dialect::Dialect,
    /// The store root relative to the temporary HOME, e.g. `.claude`.
    pub store_root: String,
    /// Environment to set (after HOME).
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// Files to write, as (path relative to HOME, contents).
    #[serde(default)]
    pub files: Vec<(String, String)>,
    /// Arguments to add to the resume plan's arguments (e.g. a pinned model).
    #[serde(default)]
    pub extra_args: Vec<String>,
    /// What the CLI adds to the history by itself (system prompt, environment context, tool
    /// definitions), described for people; the check sets these aside.
    #[serde(default)]
    pub injected: Vec<String>,
}
