//! mra-bench: the command line HPC people run. See `mra-bench --help`.

mod cli;
mod compile_cmd;
mod levels_cmd;
mod output;
mod plot;
mod plot_cmd;
mod run_cmd;
mod select;
mod session;
mod sweep_cmd;
mod validate_cmd;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    let result = match cli.command {
        Some(cli::Command::Validate(a)) => validate_cmd::run(&a),
        Some(cli::Command::Levels(a)) => levels_cmd::run(&a),
        Some(cli::Command::Sweep(a)) => sweep_cmd::run(&a),
        Some(cli::Command::Plot(a)) => plot_cmd::run(&a),
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
