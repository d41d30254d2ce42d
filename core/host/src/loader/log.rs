//! The host end of the log bridge: a plugin's `tracing` events arrive here and are re-emitted
//! into the host's own subscriber (a shared library has its own `tracing` globals).

use abi_stable::std_types::RStr;
use tracing::level_filters::LevelFilter;

use handoff_abi::HostLogger;

/// The callback handed to every loaded plugin, with the host's current maximum level.
pub(super) fn host_logger() -> HostLogger {
    HostLogger {
        log: host_log,
        max_level: level_code(LevelFilter::current()),
    }
}

fn level_code(filter: LevelFilter) -> u8 {
    match filter.into_level() {
        None => 0,
        Some(tracing::Level::ERROR) => 1,
        Some(tracing::Level::WARN) => 2,
        Some(tracing::Level::INFO) => 3,
        Some(tracing::Level::DEBUG) => 4,
        Some(tracing::Level::TRACE) => 5,
    }
}

extern "C" fn host_log(plugin: RStr<'_>, level: u8, target: RStr<'_>, message: RStr<'_>) {
    // A panic must not unwind across `extern "C"`; a subscriber that panics loses one line.
    let _ = std::panic::catch_unwind(|| {
        let (plugin, target, message) = (plugin.as_str(), target.as_str(), message.as_str());
        match level {
            1 => {
                tracing::error!(target: "handoff::plugin", plugin, plugin_target = target, "{message}")
            }
            2 => {
                tracing::warn!(target: "handoff::plugin", plugin, plugin_target = target, "{message}")
            }
            3 => {
                tracing::info!(target: "handoff::plugin", plugin, plugin_target = target, "{message}")
            }
            4 => {
                tracing::debug!(target: "handoff::plugin", plugin, plugin_target = target, "{message}")
            }
            _ => {
                tracing::trace!(target: "handoff::plugin", plugin, plugin_target = target, "{message}")
            }
        }
    });
}
