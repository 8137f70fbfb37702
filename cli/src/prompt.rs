//! The prompt: the argument, or stdin for `-` or none.

use std::io::{IsTerminal, Read};

use crate::exit::Failure;

/// # Errors
/// [`Failure::Usage`] when there is no prompt (none given and stdin is a terminal) or
/// stdin cannot be read.
pub fn read_prompt(arg: Option<&str>) -> Result<String, Failure> {
    let prompt = match arg {
        Some(p) if p != "-" => p.to_owned(),
        _ => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() && arg.is_none() {
                return Err(Failure::Usage(
                    "no prompt: give it as an argument, or pipe it on stdin".into(),
                ));
            }
            let mut text = String::new();
            stdin
                .lock()
                .read_to_string(&mut text)
                .map_err(|e| Failure::Usage(format!("cannot read the prompt from stdin: {e}")))?;
            text
        }
    };
    // An empty prompt is not an error: the run succeeds with no content and starts no
    // process (the same rule as the HTTP API).
    Ok(prompt)
}
