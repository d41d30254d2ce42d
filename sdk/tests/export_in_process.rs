//! The export macro's output, exercised in-process: the declaration it fills in and the root
//! module behind the library header (the `.so` path is covered by handoff-conformance's tests).

use handoff_sdk::*;

struct Configured {
    name: String,
}

impl Configured {
    fn new(name: &str) -> Self {
        Configured { name: name.into() }
    }
}

impl Writer for Configured {
    fn create(
        &self,
        _: &StoreRoot,
        _: &str,
        _: &Transcript,
        _: &CreateOptions,
    ) -> Result<SessionRef, PluginError> {
        panic!("create is not for this test");
    }
    fn append(
        &self,
        _: &StoreRoot,
        _: &SessionRef,
        _: &[Event],
    ) -> Result<SessionRef, PluginError> {
        Err(PluginError::Other("no".into()))
    }
    fn remove(&self, _: &StoreRoot, _: &SessionRef) -> Result<(), PluginError> {
        Err(PluginError::Other("no".into()))
    }
}

impl Reader for Configured {
    fn read_each(
        &self,
        _: ReadFrom<'_>,
        _: &mut dyn FnMut(Event) -> bool,
    ) -> Result<ReadOutcome, PluginError> {
        Err(PluginError::Other("no".into()))
    }
    fn cwd(&self, _: ReadFrom<'_>) -> Result<Option<String>, PluginError> {
        Err(PluginError::Other("no".into()))
    }
    fn list(&self, _: &StoreRoot, _: &str) -> Result<Vec<SessionInfo>, PluginError> {
        Ok(vec![])
    }
}

impl Resumer for Configured {
    fn resolve(&self, _: &StoreRoot, _: &str, _: &str) -> Result<SessionRef, PluginError> {
        Err(PluginError::Other("no such session".into()))
    }
    fn plan(&self, _: &StoreRoot, _: &SessionRef, _: &str) -> Result<ResumePlan, PluginError> {
        Err(PluginError::Other("no".into()))
    }
}

impl Plugin for Configured {
    fn manifest(&self) -> Manifest {
        Manifest {
            name: self.name.clone(),
            version: "9.9.9".into(),
            api_requirement: API_REQUIREMENT.into(),
            targets: vec![],
        }
    }
    handoff_sdk::parts_are_self!();
}

// The constructor form.
handoff_sdk::export_plugin!(Configured, Configured::new("configured"));

#[test]
fn the_declaration_says_who_built_what() {
    let declaration =
        unsafe { handoff_abi::PluginDeclaration::read(&HANDOFF_PLUGIN_DECLARATION) }.unwrap();
    assert_eq!(declaration.name, "handoff-sdk");
    assert_eq!(declaration.api_requirement, API_REQUIREMENT);
    assert!(
        declaration.panic_unwind,
        "tests are built with panic=unwind"
    );
    assert!(
        declaration.rustc_version.starts_with("rustc "),
        "{}",
        declaration.rustc_version
    );
}

#[test]
fn the_root_module_answers_through_json_and_contains_panics() {
    use handoff_abi::abi_stable::std_types::{RResult, RStr};
    use handoff_abi::PluginModuleRef;

    let module = _1as_0lib_1header_0root_bmodule_bloader
        .init_root_module::<PluginModuleRef>()
        .unwrap();
    let RResult::ROk(manifest) = (module.manifest_json())() else {
        panic!("no manifest")
    };
    let manifest: Manifest = serde_json::from_str(&manifest).unwrap();
    assert_eq!(manifest.name, "configured");

    assert!(
        (module.get_capability())(RStr::from_str("transcript.writer.v9"))
            .into_option()
            .is_none()
    );
    let reader = (module.get_capability())(RStr::from_str("transcript.reader.v1"))
        .into_option()
        .unwrap();
    assert_eq!(reader.id().as_str(), "transcript.reader.v1");
    let root = std::env::temp_dir();
    let request = serde_json::json!({"method": "list", "root": root, "target": "t"}).to_string();
    let RResult::ROk(answer) = reader.call(RStr::from_str(&request)) else {
        panic!("list failed")
    };
    assert_eq!(answer.as_str(), "[]");

    // A v1 read names the session by id: the glue resolves it first (and stops at its error); a
    // v2 read hands over the resolved session, so only the reader runs.
    let error_of = |capability: &str, request: serde_json::Value| {
        let object = (module.get_capability())(RStr::from_str(capability))
            .into_option()
            .unwrap();
        let RResult::RErr(error) = object.call(RStr::from_str(&request.to_string())) else {
            panic!("{capability} read did not fail")
        };
        serde_json::from_str::<PluginError>(&error).unwrap()
    };
    let v1 = error_of(
        "transcript.reader.v1",
        serde_json::json!({"method": "read", "root": root, "target": "t", "id": "x"}),
    );
    assert_eq!(v1, PluginError::Other("no such session".into()));
    let session = serde_json::json!({"target": "t", "id": "x", "path": root.join("x")});
    let v2 = error_of(
        "transcript.reader.v2",
        serde_json::json!({"method": "read", "root": root, "session": session}),
    );
    assert_eq!(v2, PluginError::Other("no".into()));

    let writer = (module.get_capability())(RStr::from_str("transcript.writer.v1"))
        .into_option()
        .unwrap();
    let request = serde_json::json!({
        "method": "create", "root": root, "target": "t",
        "transcript": {"schema": SCHEMA, "events": []}, "options": {}
    })
    .to_string();
    let RResult::RErr(error) = writer.call(RStr::from_str(&request)) else {
        panic!("create did not fail")
    };
    let error: PluginError = serde_json::from_str(&error).unwrap();
    assert!(
        matches!(&error, PluginError::Panicked { plugin, method, .. } if plugin == "configured" && method == "create"),
        "{error}"
    );

    let RResult::RErr(error) = writer.call(RStr::from_str("{not json")) else {
        panic!("garbage accepted")
    };
    assert!(
        error.contains("cannot read a transcript.writer.v1 request"),
        "{error}"
    );
}
