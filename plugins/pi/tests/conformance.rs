//! The conformance suite on the pi plugin: offline, live (the real pi 0.73.1 resuming what the
//! plugin wrote, against a fake provider) and on its shared library.
handoff_live::plugin_tests!(handoff_pi::PiPlugin, "handoff_plugin_pi");
