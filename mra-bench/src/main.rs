//! mra-bench: the command line HPC people run. See `mra-bench --help`.

#[macro_use]
mod out;
mod api_sweep;
mod cli;
mod compile_cmd;
mod docs_cmd;
mod emit_cmd;
mod export_cmd;
mod hand_source;
mod levels_cmd;
mod npy;
mod op_args;
mod outfile;
mod output;
mod plot;
mod plot_cmd;
mod report_cmd;
mod run_cmd;
mod select;
mod session;
mod sweep_cmd;
mod sweep_op;
mod sweep_op_harness;
mod sweep_ranksum;
mod sweep_report;
mod transform_cmd;
mod tune_cmd;
mod tune_op;
mod validate_cmd;
mod validate_op;
mod write_defaults;

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
    // Ctrl-C or SIGTERM only sets a flag; the command stops at its next safe point and its
    // error comes back here (mra_runtime::interrupt says why not exit from the handler).
    if let Err(e) = mra_runtime::interrupt::install() {
        eprintln!("mra-bench: warning: cannot handle Ctrl-C ({e}): an interrupt may leave temporary files");
    }
    let mut cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => exit_on_usage_error(e),
    };
    select::set_verbose(cli.verbose);
    // A malformed MRA_TOOL_TIMEOUT is said once, up front: deep inside a toolchain probe it would
    // read as a missing toolchain.
    if let Err(e) = mra_runtime::process::limit() {
        eprintln!("mra-bench: error: {e}");
        std::process::exit(2);
    }
    if let Err(e) = cli.run.resolve() {
        eprintln!("mra-bench: error: {e}");
        std::process::exit(2);
    }
    let result = match cli.command {
        Some(cli::Command::Validate(a)) => validate_cmd::run(&a),
        Some(cli::Command::Levels(a)) => levels_cmd::run(&a),
        Some(cli::Command::Sweep(a)) => sweep_cmd::run(&a),
        Some(cli::Command::Tune(a)) => tune_cmd::run(&a),
        Some(cli::Command::Export(a)) => export_cmd::run(&a),
        Some(cli::Command::Transform(a)) => transform_cmd::run(&a),
        Some(cli::Command::NpyRandom(a)) => transform_cmd::npy_random(&a),
        Some(cli::Command::NpyCompare(a)) => transform_cmd::npy_compare(&a),
        Some(cli::Command::Plot(a)) => plot_cmd::run(&a),
        Some(cli::Command::Report(a)) => report_cmd::run(&a),
        Some(cli::Command::Completions(a)) => docs_cmd::completions(&a),
        Some(cli::Command::Man(a)) => docs_cmd::man(&a),
        None if cli.run.compile_only => compile_cmd::run(&cli.run),
        None if cli.run.emit_src => emit_cmd::run(&cli.run),
        None => run_cmd::run(&cli.run),
    };
    // Interrupted: whatever the command returned (a compiler stopped by the interrupt may read
    // as a compile error), the run stops here, with the scratch directories removed.
    if let Some(code) = mra_runtime::interrupt::exit_status() {
        mra_runtime::scratch::remove_all();
        eprintln!("mra-bench: interrupted");
        std::process::exit(code);
    }
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("mra-bench: error: {e}");
            // A malformed command line (select::Usage) exits 2 as clap's usage errors do.
            std::process::exit(if e.downcast_ref::<select::Usage>().is_some() { 2 } else { 1 });
        }
    }
}

/// Help and version go out as clap renders them, but through `out::write` (clap's own `exit`
/// ignores write errors: `--help > /dev/full` would claim success); a usage error becomes one
/// line and exit status 2: clap's message (its own layout spreads it over several lines, e.g.
/// the possible values), with the offending value cut short to its first line and 60 characters.
fn exit_on_usage_error(mut e: clap::Error) -> ! {
    use clap::error::{ContextKind, ContextValue, ErrorKind::*};
    if matches!(e.kind(), DisplayHelp | DisplayVersion) {
        use std::io::IsTerminal;
        let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let text = if color { e.render().ansi().to_string() } else { e.render().to_string() };
        if let Err(err) = out::write(&text) {
            eprintln!("mra-bench: error: {err}");
            std::process::exit(1);
        }
        std::process::exit(0);
    }
    if matches!(e.kind(), DisplayHelpOnMissingArgumentOrSubcommand) {
        // Help on standard error with status 2 (a usage error, as clap exits).
        e.exit();
    }
    for kind in [ContextKind::InvalidValue, ContextKind::InvalidArg, ContextKind::InvalidSubcommand] {
        if let Some(ContextValue::String(v)) = e.get(kind) {
            let short = cut_short(v, 60);
            e.insert(kind, ContextValue::String(short));
        }
    }
    let text = e.render().to_string();
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect();
    let line = parts.join(" ");
    let line = line.strip_prefix("error: ").unwrap_or(&line);
    eprintln!("mra-bench: error: {}; see mra-bench --help", cut_short(line, 300));
    std::process::exit(2);
}

/// The first line of `s`, at most `max` characters, with `…` where it was cut.
fn cut_short(s: &str, max: usize) -> String {
    let first = s.lines().next().unwrap_or_default();
    let shown: String = first.chars().take(max).collect();
    if shown.len() < s.len() { shown + "…" } else { shown }
}
