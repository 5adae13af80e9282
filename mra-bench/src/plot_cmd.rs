//! `mra-bench plot SWEEP_JSON -o OUT`: redraw a sweep's chart from its JSON file (no GPU).

use crate::cli::PlotArgs;
use crate::plot;
use crate::select::CmdResult;

pub fn run(args: &PlotArgs) -> CmdResult {
    let out = plot::check_target_for("-o", &args.output)?;
    let data = plot::load(&args.input)?;
    plot::render(&data, &out)?;
    eprintln!("# chart of {} ({} rows) written to {}", args.input, data.rows.len(), args.output);
    Ok(0)
}
