//! The floor the decode benches print: the Python SDK's way of reading the same transcript,
//! as a whole process (`python3` start, file read, every line parsed), against forge's decoder.
//!
//! The Python Agent SDK reads each stdout line with `json.loads` and builds its message
//! objects from the dict (`claude_agent_sdk._internal.message_parser.parse_message`). When
//! that package is importable the script uses it for Claude lines; otherwise (and for the
//! other CLIs, whose SDKs do the same `json.loads` per line) the per-line `json.loads` alone
//! is measured, a cheaper baseline, so the printed floor is the harder one to meet.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SCRIPT: &str = r#"
import json, sys
parse = None
if sys.argv[2] == "claude":
    try:
        from claude_agent_sdk._internal.message_parser import parse_message as parse
    except Exception:
        parse = None
n = 0
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        line = line.strip()
        if not line:
            continue
        data = json.loads(line)
        if parse is not None:
            try:
                parse(data)
            except Exception:
                pass
        n += 1
print("sdk" if parse is not None else "json.loads", n)
"#;

/// The Python baseline's wall time and what it ran (`sdk` or `json.loads`), or why it could
/// not run (no `python3`, a failed script).
///
/// # Errors
/// A message when the baseline could not be measured.
pub fn measure(provider: &str, text: &str) -> Result<(Duration, String), String> {
    let dir = std::env::temp_dir().join(format!("forge-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join(format!("{provider}.jsonl"));
    let written = std::fs::File::create(&file)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| e.to_string());
    let result = written.and_then(|()| run_python(&file, provider));
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn run_python(file: &std::path::Path, provider: &str) -> Result<(Duration, String), String> {
    let start = Instant::now();
    let out = Command::new("python3")
        .arg("-c")
        .arg(SCRIPT)
        .arg(file)
        .arg(provider)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("python3: {e}"))?;
    let took = start.elapsed();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let said = String::from_utf8_lossy(&out.stdout);
    let kind = said.split_whitespace().next().unwrap_or("json.loads");
    Ok((took, kind.to_owned()))
}
