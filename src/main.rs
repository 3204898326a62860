//! Temporary entry point for manual testing of `generate`; the CLI skeleton replaces it.

use clap::{Parser, Subcommand};
use roce_inspect::generate::{self, GenerateArgs};

#[derive(Parser)]
#[command(name = "roce-inspect", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Send RDMA WRITE traffic to a peer (client) or receive it (server).
    Generate(GenerateArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Generate(args) => generate::run(args),
    };
    if let Err(e) = result {
        eprintln!("roce-inspect: {e:#}");
        std::process::exit(1);
    }
}
