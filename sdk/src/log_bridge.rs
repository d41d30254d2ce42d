//! The plugin end of the log bridge.
//!
//! A shared library has its own copy of `tracing`'s globals, so a plugin's events would reach no
//! subscriber. When the host hands over its log callback, this installs a small subscriber in the
//! library's globals that formats each event and passes it to the host.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use handoff_abi::abi_stable::std_types::RStr;
use handoff_abi::module::HostLogger;
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Installs the bridge as this library's global subscriber (once; later calls are ignored).
pub(crate) fn install(logger: HostLogger) {
    let bridge = Bridge {
        logger,
        next_span: AtomicU64::new(1),
    };
    let _ = tracing::subscriber::set_global_default(bridge);
}

struct Bridge {
    logger: HostLogger,
    next_span: AtomicU64,
}

fn level_code(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

impl Subscriber for Bridge {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        level_code(metadata.level()) <= self.logger.max_level
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(match self.logger.max_level {
            0 => LevelFilter::OFF,
            1 => LevelFilter::ERROR,
            2 => LevelFilter::WARN,
            3 => LevelFilter::INFO,
            4 => LevelFilter::DEBUG,
            _ => LevelFilter::TRACE,
        })
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(self.next_span.fetch_add(1, Ordering::Relaxed))
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut message = Message::default();
        event.record(&mut message);
        let metadata = event.metadata();
        // Looked up per event: the manifest's name is known only once the plugin exists.
        let plugin = crate::export::plugin_name();
        (self.logger.log)(
            RStr::from_str(&plugin),
            level_code(metadata.level()),
            RStr::from_str(metadata.target()),
            RStr::from_str(&message.text),
        );
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// The event's message first, then its other fields as `name=value`.
#[derive(Default)]
struct Message {
    text: String,
}

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let fields = std::mem::take(&mut self.text);
            let _ = write!(self.text, "{value:?}");
            if !fields.is_empty() {
                self.text.push(' ');
                self.text.push_str(&fields);
            }
        } else {
            if !self.text.is_empty() {
                self.text.push(' ');
            }
            let _ = write!(self.text, "{}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.record_debug(field, &format_args!("{value}"));
        } else {
            self.record_debug(field, &value);
        }
    }
}
