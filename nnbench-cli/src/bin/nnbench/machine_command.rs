//! `nnbench machine`: this machine's key and roofs, measured once and kept
//! where its bench binaries find them.

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench_core::record::RoofRates;
use nnbench_vocab::format_rate;

#[derive(Args)]
pub(crate) struct MachineCommand {
    /// Measure the roofs again, even where they are kept for this machine.
    #[arg(long)]
    measure_again: bool,
    /// How to print them.
    #[arg(long, value_enum, default_value_t = MachineFormat::Table)]
    format: MachineFormat,
}

#[derive(Clone, Copy, ValueEnum)]
enum MachineFormat {
    /// A table of the roofs.
    Table,
    /// The machine's key, description and roofs, as JSON.
    Json,
}

pub(crate) fn run(command: MachineCommand) -> Result<ExitCode, String> {
    let here = nnbench_core::machine::this_machine();
    let roofs =
        nnbench_core::machine::roofs(&here, command.measure_again).map_err(|e| e.to_string())?;
    let (key, description) = (here.machine_key(), here.machine_description());
    if let MachineFormat::Json = command.format {
        let json = serde_json::json!({"key": key, "description": description, "roofs": roofs});
        let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
        println!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(["roof", "one core", "all cores"]);
    let row = |name: &str, rates: RoofRates, unit: &str| {
        [
            name.to_owned(),
            format_rate(rates.one_core, unit),
            format_rate(rates.all_cores, unit),
        ]
    };
    table.add_row(row("f32 compute", roofs.flops_f32, "FLOP"));
    table.add_row(row("f64 compute", roofs.flops_f64, "FLOP"));
    table.add_row(row("memory (triad)", roofs.bandwidth, "B"));
    let method = &roofs.method;
    println!("{key}: {description}\n{table}");
    println!(
        "{} kernels on {} core{}, triad arrays of {} MiB; measured {}{}{}",
        method.units,
        method.cores,
        if method.cores == 1 { "" } else { "s" },
        method.triad_array_bytes >> 20,
        method.measured_at,
        if method.cached {
            " (kept; --measure-again measures them again)"
        } else {
            ""
        },
        if method.noisy {
            ", on a busy machine: they may read low"
        } else {
            ""
        }
    );
    Ok(ExitCode::SUCCESS)
}
