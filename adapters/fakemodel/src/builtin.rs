//! Scenarios shipped inside the binary (`scenarios/*.toml`).

/// Names of the embedded scenarios, in a stable order.
pub const NAMES: &[&str] = &[
    "plain_answer",
    "write_file",
    "write_read_shell",
    "shell_fail",
    "five_tool_rounds",
    "rate_limit_then_success",
    "rate_limit_retry_info",
    "server_error_always",
    "stream_cut",
    "resume",
    "escapes_unicode",
    "task_fix_cycle",
];

/// The TOML source of an embedded scenario.
pub fn source(name: &str) -> Option<&'static str> {
    let text = match name {
        "plain_answer" => include_str!("../scenarios/plain_answer.toml"),
        "write_file" => include_str!("../scenarios/write_file.toml"),
        "write_read_shell" => include_str!("../scenarios/write_read_shell.toml"),
        "shell_fail" => include_str!("../scenarios/shell_fail.toml"),
        "five_tool_rounds" => include_str!("../scenarios/five_tool_rounds.toml"),
        "rate_limit_then_success" => include_str!("../scenarios/rate_limit_then_success.toml"),
        "rate_limit_retry_info" => include_str!("../scenarios/rate_limit_retry_info.toml"),
        "server_error_always" => include_str!("../scenarios/server_error_always.toml"),
        "stream_cut" => include_str!("../scenarios/stream_cut.toml"),
        "resume" => include_str!("../scenarios/resume.toml"),
        "escapes_unicode" => include_str!("../scenarios/escapes_unicode.toml"),
        "task_fix_cycle" => include_str!("../scenarios/task_fix_cycle.toml"),
        _ => return None,
    };
    Some(text)
}
