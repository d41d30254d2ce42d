//! The built-in corpus: canonical transcripts every plugin must carry (where it declares the parts).
//!
//! The files live in `conformance/corpus/` and are compiled in, so the `conformance` binary needs
//! no source tree.

use std::sync::OnceLock;

use handoff_host::Transcript;

/// One corpus transcript.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Its name (the file stem), e.g. `parallel-tool-calls`.
    pub name: &'static str,
    /// The transcript.
    pub transcript: Transcript,
}

macro_rules! corpus_files {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("../corpus/", $name, ".json")))),*]
    };
}

const FILES: &[(&str, &str)] = corpus_files![
    "plain-chat",
    "parallel-tool-calls",
    "tool-error",
    "interleaved-text-tool-text",
    "images",
    "thinking-signed-anthropic",
    "thinking-signed-openai",
    "compaction",
    "unicode",
    "large-text",
    "two-authors",
    "empty-tool-output",
    "tool-arguments",
    "freeform-tool-call",
    "web-search",
];

/// Every corpus entry, parsed once.
pub fn entries() -> &'static [Entry] {
    static ENTRIES: OnceLock<Vec<Entry>> = OnceLock::new();
    ENTRIES.get_or_init(|| {
        FILES
            .iter()
            .map(|(name, text)| Entry {
                name,
                transcript: Transcript::from_json(text)
                    .unwrap_or_else(|e| panic!("corpus/{name}.json is not a transcript: {e}")),
            })
            .collect()
    })
}

/// The corpus entry with this name.
pub fn entry(name: &str) -> Option<&'static Entry> {
    entries().iter().find(|e| e.name == name)
}

#[cfg(test)]
mod tests {
    use handoff_host::Feature;

    use super::*;

    #[test]
    fn every_entry_is_valid() {
        for e in entries() {
            e.transcript
                .validate()
                .unwrap_or_else(|err| panic!("{}: {err}", e.name));
        }
    }

    #[test]
    fn the_corpus_covers_every_feature() {
        let mut used: Vec<Feature> = entries()
            .iter()
            .flat_map(|e| e.transcript.features())
            .collect();
        used.sort();
        used.dedup();
        let missing: Vec<_> = Feature::ALL
            .iter()
            .filter(|f| !used.contains(f) && **f != Feature::ImageUrl)
            .collect();
        assert!(missing.is_empty(), "no corpus entry uses {missing:?}");
    }

    #[test]
    fn big_numbers_survive_parsing_exactly() {
        let e = entry("tool-arguments").unwrap();
        let text = serde_json::to_string(&e.transcript).unwrap();
        assert!(text.contains("12345678901234567890123"));
        assert!(text.contains("-9007199254740993"));
    }
}
