use handoff_host::{Feature, Plugin, PLUGIN_API_VERSION};
use handoff_store::validate_component;

use super::Outcome;

pub(crate) fn check(plugin: &dyn Plugin) -> Outcome {
    let m = plugin.manifest();
    let mut problems = Vec::new();
    if validate_component("plugin name", &m.name).is_err() {
        problems.push(format!("plugin name {:?} is not a plain name", m.name));
    }
    if semver::Version::parse(&m.version).is_err() {
        problems.push(format!("version {:?} is not semver", m.version));
    }
    match semver::VersionReq::parse(&m.api_requirement) {
        Err(e) => problems.push(format!(
            "api_requirement {:?} is not a semver requirement: {e}",
            m.api_requirement
        )),
        Ok(req) => {
            let host = semver::Version::parse(PLUGIN_API_VERSION).expect("host version is semver");
            if !req.matches(&host) {
                problems.push(format!(
                    "needs plugin API {}, this host is {host}",
                    m.api_requirement
                ));
            }
        }
    }
    if m.targets.is_empty() {
        problems.push("the plugin names no target".into());
    }
    let mut names = Vec::new();
    for t in &m.targets {
        if validate_component("target name", &t.name).is_err() {
            problems.push(format!("target name {:?} is not a plain name", t.name));
        }
        if names.contains(&&t.name) {
            problems.push(format!("target {:?} is named twice", t.name));
        }
        names.push(&t.name);
        if t.provider.is_empty() {
            problems.push(format!("target {:?} names no provider", t.name));
        }
        if !t.carries.contains(&Feature::Text) {
            problems.push(format!(
                "target {:?} does not declare that it carries text",
                t.name
            ));
        }
    }
    if problems.is_empty() {
        Ok(vec![format!(
            "{} {} with targets {}",
            m.name,
            m.version,
            m.targets
                .iter()
                .map(|t| format!(
                    "{} (carries {})",
                    t.name,
                    t.carries
                        .iter()
                        .map(|f| f.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
                .collect::<Vec<_>>()
                .join("; ")
        )])
    } else {
        Err(problems)
    }
}
