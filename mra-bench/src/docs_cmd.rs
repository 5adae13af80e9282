//! `mra-bench completions SHELL` and `mra-bench man`: generated from the clap definitions, so
//! they list exactly the options `--help` does.

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::select::CmdResult;
use clap::CommandFactory;
use std::path::Path;

pub fn completions(args: &CompletionsArgs) -> CmdResult {
    let mut cmd = public(Cli::command());
    // Rendered in memory, then written through the checked stdout writer (out.rs).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "mra-bench", &mut script);
    crate::out::write(&String::from_utf8_lossy(&script))?;
    Ok(0)
}

pub fn man(args: &ManArgs) -> CmdResult {
    let cmd = Cli::command();
    match &args.output {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create the directory `{dir}`: {e}"))?;
            let mut cmd = cmd.disable_help_subcommand(true);
            cmd.build();
            write_pages(&cmd, Path::new(dir)).map_err(|e| format!("cannot write man pages to `{dir}`: {e}"))?;
            eprintln!("# man pages written to {dir}");
        }
        None => crate::out::write(&render(cmd)?)?,
    }
    Ok(0)
}

/// One page per (sub)command, as `clap_mangen::generate_to` names them, each written atomically.
fn write_pages(cmd: &clap::Command, dir: &Path) -> Result<(), String> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir)?;
    }
    let man = clap_mangen::Man::new(cmd.clone());
    let path = dir.join(man.get_filename());
    crate::outfile::write_atomically(&path, render(cmd.clone())?.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}

/// `cmd` without its hidden subcommands (the test helpers `npy-random` and `npy-compare`):
/// clap's completion generators list every subcommand, hidden or not.
fn public(cmd: clap::Command) -> clap::Command {
    let subs: Vec<clap::Command> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned().collect();
    let mut out = clap::Command::new("mra-bench").args(cmd.get_arguments().filter(|a| !a.is_hide_set()).cloned()).subcommands(subs);
    if let Some(about) = cmd.get_about() {
        out = out.about(about.clone());
    }
    out
}

fn render(cmd: clap::Command) -> Result<String, String> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut page).map_err(|e| e.to_string())?;
    Ok(String::from_utf8_lossy(&page).into_owned())
}
