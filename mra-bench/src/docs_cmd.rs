//! `mra-bench completions SHELL` and `mra-bench man`: generated from the clap definitions, so
//! they list exactly the options `--help` does.

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::select::CmdResult;
use clap::CommandFactory;

pub fn completions(args: &CompletionsArgs) -> CmdResult {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "mra-bench", &mut std::io::stdout());
    Ok(0)
}

pub fn man(args: &ManArgs) -> CmdResult {
    let cmd = Cli::command();
    match &args.output {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create the directory `{dir}`: {e}"))?;
            clap_mangen::generate_to(cmd, dir).map_err(|e| format!("cannot write man pages to `{dir}`: {e}"))?;
            eprintln!("# man pages written to {dir}");
        }
        None => clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?,
    }
    Ok(0)
}
