//! `forge-code-agent`: everything lives in the library so it can be embedded and tested.

/// mimalloc, not the system allocator: a run keeps every tool call it decodes until its
/// result is built and frees them together, a pattern glibc's malloc handles slowly (chunk
/// consolidation on free took a fifth of the decoders' time; the decode benches, which
/// declare the same allocator, measured 1.5x the throughput with it).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    forge_cli::main()
}
