//! One module per subcommand.

pub mod certify;
pub mod continue_on;
pub mod doctor;
pub mod generate;
pub mod pick;
pub mod read;
pub mod recover;
pub mod sessions;
pub mod targets;
