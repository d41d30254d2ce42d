//! The reference plugin passes every check of the suite, linked in, live (it has no CLI target)
//! and as its `.so`.
handoff_live::plugin_tests!(
    handoff_reference::ReferencePlugin,
    "handoff_plugin_reference"
);
