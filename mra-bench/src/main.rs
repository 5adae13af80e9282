//! mra-bench: the command line HPC people run. See `mra-bench --help`.

mod cli;
mod compile_cmd;
mod levels_cmd;
mod output;
mod run_cmd;
mod select;
mod session;
mod sweep_cmd;
mod tune_cmd;
mod tuned;
mod validate_cmd;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    let result = match cli.command {
        Some(cli::Command::Validate(a)) => validate_cmd::run(&a),
        Some(cli::Command::Levels(a)) => levels_cmd::run(&a),
        Some(cli::Command::Sweep(a)) => sweep_cmd::run(&a),
        Some(cli::Command::Tune(a)) => tune_cmd::run(&a),
        None if cli.run.compile_only => compile_cmd::run(&cli.run),
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
