//! The README's library example, compiled with every `cargo test` so it stays true:
//! the provider, binary, model and limits come from configuration (forge.toml, FORGE_*,
//! CLAUDE_CLI_*), so swapping providers needs no code change.
//!
//! `FORGE_PROVIDER=codex cargo run -p forge-cli --example swap_provider -- "Fix the failing test"`

use forge_app::{CodeAgent, from_config::apply_request_defaults};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let prompt = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "Say hello".to_owned());
    let config = forge_cli::load_config(&forge_cli::ConfigFlags::default())?;
    let agent = CodeAgent::from_config(&config, forge_cli::registry(), forge_cli::runtime())?;
    let mut request = agent.request(prompt);
    apply_request_defaults(&config, &mut request);
    let result = agent.run(request).await;
    #[expect(clippy::print_stdout, reason = "an example prints its result")]
    {
        println!("{:?}: {}", result.status, result.content);
    }
    Ok(())
}
