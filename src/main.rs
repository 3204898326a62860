//! `roce-inspect` binary: parse the command line, run, map errors to exit codes
//! (0 ok, 1 runtime error, 2 usage error — clap's).

use std::process::ExitCode;

use clap::Parser;
use roce_inspect::cli::capture;
use roce_inspect::cli::pipeline::{self, Outcome};
use roce_inspect::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Read(a) => pipeline::read_file(a.path(), &a.display),
        Command::Generate(a) => roce_inspect::generate::run(a).map(|()| Outcome::Ok),
        Command::Capture(a) => capture::capture(a),
        Command::List => capture::list(),
    };
    match result {
        Ok(Outcome::Ok) | Ok(Outcome::ClosedPipe) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("roce-inspect: {e:#}");
            ExitCode::FAILURE
        }
    }
}
