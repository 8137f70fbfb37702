//! `forge-code-agent`: everything lives in the library so it can be embedded and tested.

fn main() -> std::process::ExitCode {
    forge_cli::main()
}
