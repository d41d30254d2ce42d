//! Turning abi_stable's error reports into one line.

/// Keeps the `Error:` lines of an abi_stable report (a layout mismatch prints pages of type
/// layouts around them) and joins them; falls back to the first non-empty line.
pub fn summarise_layout_error(report: &str) -> String {
    let errors: Vec<&str> = report
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("Error:"))
        .map(|line| line.trim_start_matches("Error:").trim())
        .filter(|line| !line.is_empty())
        .collect();
    let mut unique: Vec<&str> = Vec::new();
    for line in errors {
        if !unique.contains(&line) {
            unique.push(line);
        }
    }
    if unique.is_empty() {
        let mut lines = report.lines().map(str::trim).filter(|l| !l.is_empty());
        let first = lines.next().unwrap_or("(abi_stable gave no reason)");
        return match lines.next() {
            Some(second) if first.ends_with(':') => format!("{first} {second}"),
            _ => first.to_owned(),
        };
    }
    unique.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_error_lines() {
        let report = "\nCompared <this>:\n  --- big layout ---\n    Error:field count mismatch: expected 3 found 2\n  more\n  Error: field count mismatch: expected 3 found 2\nError:different name\n";
        assert_eq!(
            summarise_layout_error(report),
            "field count mismatch: expected 3 found 2; different name"
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
