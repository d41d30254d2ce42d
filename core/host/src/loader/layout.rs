//! Turning abi_stable's error reports into one line.

/// Keeps the `Error:` lines of an abi_stable report (a layout mismatch prints pages of type
/// layouts around them), each with the first line of the `Expected:` / `Found:` values that
/// follow it, and joins them; falls back to the first non-empty line.
pub fn summarise_layout_error(report: &str) -> String {
    let lines: Vec<&str> = report.lines().map(str::trim).collect();
    let mut errors: Vec<String> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(error) = line.strip_prefix("Error:") else {
            continue;
        };
        let error = error.trim();
        if error.is_empty() {
            continue;
        }
        let mut summary = error.to_owned();
        let expected = value_after(&lines[index + 1..], "Expected:");
        let found = value_after(&lines[index + 1..], "Found:");
        if let (Some(expected), Some(found)) = (expected, found) {
            summary += &format!(" (expected {expected}, found {found})");
        }
        if !errors.contains(&summary) {
            errors.push(summary);
        }
    }
    if errors.is_empty() {
        let mut rest = lines.iter().filter(|l| !l.is_empty());
        let first = rest
            .next()
            .copied()
            .unwrap_or("(abi_stable gave no reason)");
        return match rest.next() {
            Some(second) if first.ends_with(':') => format!("{first} {second}"),
            _ => first.to_owned(),
        };
    }
    errors.join("; ")
}

/// The first line after `label` within the few lines that follow an `Error:` line, shortened.
fn value_after(lines: &[&str], label: &str) -> Option<String> {
    let window = &lines[..lines.len().min(8)];
    let at = window
        .iter()
        .take_while(|l| !l.starts_with("Error:"))
        .position(|l| *l == label)?;
    let value = window.get(at + 1).filter(|v| !v.is_empty())?;
    Some(value.chars().take(80).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_error_lines_with_what_was_expected() {
        let report = "\nCompared <this>:\n  --- big layout ---\n    Error:field count mismatch\n  more\n  Error: field count mismatch\nError:mismatched package\nExpected:\n    handoff-core\nFound:\n    other-core\n\n";
        assert_eq!(
            summarise_layout_error(report),
            "field count mismatch; mismatched package (expected handoff-core, found other-core)"
        );
    }

    #[test]
    fn falls_back_to_the_first_line() {
        assert_eq!(
            summarise_layout_error("\n\n'handoff plugin' library version mismatch:\nuser:1.0.0\n"),
            "'handoff plugin' library version mismatch: user:1.0.0"
        );
    }
}
