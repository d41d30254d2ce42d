//! The live tier: the real CLIs resume what a plugin wrote, against a loopback fake provider.
pub mod cli;
