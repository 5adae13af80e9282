//! mra-bench: the command line HPC people run. See `mra-bench --help`.

mod cli;
mod compile_cmd;
mod docs_cmd;
mod emit_cmd;
mod levels_cmd;
mod output;
mod plot;
mod plot_cmd;
mod run_cmd;
mod select;
mod session;
mod sweep_cmd;
mod validate_cmd;

use clap::error::ErrorKind;
use clap::Parser;

fn main() {
    let mut cli = parse_or_exit();
    if let Err(e) = cli.run.resolve() {
        eprintln!("mra-bench: error: {e}");
        std::process::exit(2);
    }
    let result = match cli.command {
        Some(cli::Command::Validate(a)) => validate_cmd::run(&a),
        Some(cli::Command::Levels(a)) => levels_cmd::run(&a),
        Some(cli::Command::Sweep(a)) => sweep_cmd::run(&a),
        Some(cli::Command::Plot(a)) => plot_cmd::run(&a),
        Some(cli::Command::Completions(a)) => docs_cmd::completions(&a),
        Some(cli::Command::Man(a)) => docs_cmd::man(&a),
        None if cli.run.compile_only => compile_cmd::run(&cli.run),
        None if cli.run.emit_src => emit_cmd::run(&cli.run),
        None => run_cmd::run(&cli.run),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("mra-bench: error: {e}");
            std::process::exit(1);
        }
    }
}

/// Parses the command line; a usage error becomes one line on stderr (clap's own layout spreads
/// it over four), help and version print as clap prints them.
fn parse_or_exit() -> cli::Cli {
    match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) => e.exit(),
        Err(e) => {
            let text = e.render().to_string();
            let parts: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .filter(|l| !l.is_empty())
                .collect();
            let line = parts.join(" ");
            eprintln!("mra-bench: error: {}; see --help", line.strip_prefix("error: ").unwrap_or(&line));
            std::process::exit(2);
        }
    }
}
