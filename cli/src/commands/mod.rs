//! One module per subcommand.

pub mod certify;
pub mod continue_on;
pub mod read;
pub mod recover;
pub mod sessions;
pub mod targets;

/// Prints `value` as pretty JSON on stdout.
pub fn print_json(value: &impl serde::Serialize) {
    println!(
        "{}",
        serde_json::to_string_pretty(value).expect("command output always serialises")
    );
}
