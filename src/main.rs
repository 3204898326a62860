//! `roce-inspect` binary: parse the command line, run, map errors to exit codes
//! (0 ok, 1 runtime error, 2 usage error).

use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;
use roce_inspect::cli::{Cli, Command, capture, correlate, export, nccl, top};
use roce_inspect::pipeline::Outcome;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let result = match &cli.command {
        Command::Read(a) => roce_inspect::cli::read(a),
        Command::Capture(a) => capture::capture(a),
        Command::Export(a) => export::export(a),
        Command::Generate(a) => roce_inspect::generate::run(a).map(|()| Outcome::Ok),
        Command::Correlate(a) => correlate::run(a),
        Command::Nccl(a) => nccl::run(a),
        Command::List => capture::list(),
        Command::Plot(a) => roce_inspect::cli::plot::plot(a).map(|()| Outcome::Ok),
        Command::Top(a) => top::top(a),
    };
    match result {
        Ok(Outcome::Ok) | Ok(Outcome::ClosedPipe) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("roce-inspect: {e:#}");
            if roce_inspect::cli::is_usage_error(&e) {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// `--help`, `--version` and help for a bare `roce-inspect` print as clap prints them (a
/// failed write is one line on stderr and exit status 1, a closed pipe ends quietly); every
/// other command-line error is one line on stderr and exit status 2.
fn usage_error(e: clap::Error) -> ExitCode {
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => match e.print() {
            Ok(()) => ExitCode::from(e.exit_code().clamp(0, 255) as u8),
            Err(w) if w.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(w) => {
                eprintln!("roce-inspect: {}", roce_inspect::output::write_error(&w));
                ExitCode::FAILURE
            }
        },
        _ => {
            eprintln!("roce-inspect: {} (see --help)", one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// clap's message without its usage and tip paragraphs, on one line.
fn one_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let main = text.split("\n\n").next().unwrap_or_default();
    let main = main.strip_prefix("error: ").unwrap_or(main);
    main.split_whitespace().collect::<Vec<_>>().join(" ")
}
