//! The JUnit XML form of a run, for CI systems.

use handoff_conformance::report::{CheckResult, Status};

/// One `<testsuite>` with a `<testcase>` per check.
pub fn render(suite_name: &str, checks: &[CheckResult]) -> String {
    let failures = checks.iter().filter(|c| c.status == Status::Fail).count();
    let skipped = checks.iter().filter(|c| c.status == Status::Skip).count();
    let seconds: f64 = checks.iter().map(|c| c.duration_ms).sum::<f64>() / 1e3;
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml += &format!(
        "<testsuites name=\"handoff conformance\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{seconds:.3}\">\n",
        checks.len()
    );
    xml += &format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{seconds:.3}\">\n",
        escape(suite_name),
        checks.len()
    );
    for check in checks {
        xml += &format!(
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
            escape(suite_name),
            escape(&check.id),
            check.duration_ms / 1e3
        );
        let first = check.evidence.first().map(String::as_str).unwrap_or("");
        match check.status {
            Status::Pass => xml += "/>\n",
            Status::Fail => {
                xml += &format!(
                    ">\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                    escape(first),
                    escape(&check.evidence.join("\n"))
                );
            }
            Status::Skip => {
                xml += &format!(
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                    escape(first)
                );
            }
        }
    }
    xml += "  </testsuite>\n</testsuites>\n";
    xml
}

/// Escapes text for an XML attribute or element; characters XML 1.0 cannot hold become `?`.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_escaped_and_counted() {
        let checks = vec![
            CheckResult {
                id: "manifest".into(),
                status: Status::Pass,
                duration_ms: 1.0,
                evidence: vec![],
            },
            CheckResult {
                id: "round_trip/x".into(),
                status: Status::Fail,
                duration_ms: 2.0,
                evidence: vec!["a <b> & \"c\"\u{1}".into()],
            },
        ];
        let xml = render("demo", &checks);
        assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
        assert!(xml.contains("a &lt;b&gt; &amp; &quot;c&quot;?"), "{xml}");
        assert!(xml.contains("<testcase classname=\"demo\" name=\"manifest\" time=\"0.001\"/>"));
    }
}
