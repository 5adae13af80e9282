//! mra-bench: the command line HPC people run. See `mra-bench --help`.

#[macro_use]
mod out;
mod cli;
mod compile_cmd;
mod levels_cmd;
mod outfile;
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
    // Last resort: a panic (a bug, or a library cudarc finds lacking a function past our probes)
    // is still one line on stderr and exit status 1, never a backtrace dump.
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let what = what.lines().next().unwrap_or_default().to_string();
        eprintln!("mra-bench: error: internal failure: {what} (a broken GPU library or a bug; please report it)");
        std::process::exit(1);
    }));
    // Ctrl-C or SIGTERM: remove the scratch directories of compiles in flight, then stop.
    let _ = ctrlc::set_handler(|| {
        mra_runtime::scratch::remove_all();
        eprintln!("mra-bench: interrupted");
        std::process::exit(130);
    });
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => exit_on_usage_error(e),
    };
    select::set_verbose(cli.verbose);
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

/// Help and version go out as clap prints them; a usage error becomes one line (clap's first
/// line, the offending value cut short) and exit status 2.
fn exit_on_usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind::*;
    if matches!(e.kind(), DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand) {
        e.exit();
    }
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or_default();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let shown: String = first.chars().take(200).collect();
    let cut = if shown.len() < first.len() { "…" } else { "" };
    eprintln!("mra-bench: error: {shown}{cut}; see mra-bench --help");
    std::process::exit(2);
}
