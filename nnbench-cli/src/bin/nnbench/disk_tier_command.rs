//! `nnbench disk-tier`: what the memos' disk tier holds, and keeping it small.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use clap::{Args, Subcommand, ValueEnum};
use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench_core::memo::{DiskEntry, DiskTier};
use nnbench_vocab::format_bytes;

/// Where the tier is, for every action.
#[derive(Args)]
pub(crate) struct DiskTierCommand {
    /// The tier's folder (default: target/nnbench/memo-cache in the
    /// target folder of the cargo project around the current folder, as
    /// its bench binaries keep it; theirs is `--disk-tier-dir`).
    #[arg(long, value_name = "DIR", global = true)]
    dir: Option<PathBuf>,
    /// How to list the entries.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    format: ListFormat,
    #[command(subcommand)]
    action: Option<TierAction>,
}

#[derive(Subcommand)]
pub(crate) enum TierAction {
    /// Remove the entries used least recently until the tier holds at most
    /// SIZE; an entry a process is writing stays.
    Prune {
        /// The size to keep the tier within, such as 50GiB.
        #[arg(long, value_name = "SIZE", value_parser = size)]
        max: u64,
    },
    /// Remove every entry; an entry a process is writing stays.
    Clear,
}

#[derive(Clone, Copy, ValueEnum)]
enum ListFormat {
    /// A table, most recently used first.
    Table,
    /// Every entry as JSON.
    Json,
}

fn size(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<bytesize::ByteSize>()
        .map(|s| s.as_u64())
        .map_err(|e| format!("{e} (write a size such as 50GiB or 512MiB)"))
}

pub(crate) fn run(command: DiskTierCommand) -> Result<ExitCode, String> {
    let tier = match &command.dir {
        Some(dir) => DiskTier::At(dir.clone()),
        // The project's own target folder: `target` relative to wherever
        // the tool is run would list an empty tier.
        None => match std::env::var_os("CARGO_TARGET_DIR") {
            Some(_) => DiskTier::Default,
            None => {
                let target = crate::build_base::target_dir().map_err(|e| {
                    format!(
                        "no cargo project here to find the tier in ({e}): give its folder with --dir"
                    )
                })?;
                DiskTier::At(target.join("nnbench").join("memo-cache"))
            }
        },
    };
    let shown = tier.dir().unwrap_or_default().display().to_string();
    let failed = |e: nnbench_core::Error| format!("{e:#}");
    match command.action {
        None => {
            let entries = tier.entries().map_err(failed)?;
            match command.format {
                ListFormat::Json => {
                    let text = serde_json::to_string_pretty(&entries).map_err(|e| e.to_string())?;
                    println!("{text}");
                }
                ListFormat::Table => {
                    if !entries.is_empty() {
                        println!("{}", table(&entries));
                    }
                    let bytes: u64 = entries.iter().map(|e| e.bytes).sum();
                    let missing = tier.dir().is_some_and(|dir| !dir.exists());
                    println!(
                        "{} {}, {} in {shown}{}",
                        entries.len(),
                        if entries.len() == 1 {
                            "entry"
                        } else {
                            "entries"
                        },
                        format_bytes(bytes),
                        if missing { " (no such folder yet)" } else { "" }
                    );
                }
            }
        }
        Some(TierAction::Prune { max }) => {
            let pruned = tier.prune(max).map_err(failed)?;
            let freed: u64 = pruned.removed.iter().map(|e| e.bytes).sum();
            println!(
                "removed {} {} ({}); {} left, {} in {shown}",
                pruned.removed.len(),
                if pruned.removed.len() == 1 {
                    "entry"
                } else {
                    "entries"
                },
                format_bytes(freed),
                pruned.kept,
                format_bytes(pruned.kept_bytes)
            );
        }
        Some(TierAction::Clear) => {
            let removed = tier.clear().map_err(failed)?;
            println!(
                "removed {removed} {} from {shown}",
                if removed == 1 { "entry" } else { "entries" }
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn table(entries: &[DiskEntry]) -> Table {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    table.set_header(["type", "memo", "size", "inputs", "last use"]);
    let now = SystemTime::now();
    for entry in entries {
        let (kind, memo) = match &entry.problem {
            Some(problem) => ("?".to_owned(), format!("unreadable: {problem}")),
            None => (entry.type_name.clone(), entry.memo.clone()),
        };
        let age = now.duration_since(entry.last_use).unwrap_or_default();
        table.add_row([
            kind,
            memo,
            format_bytes(entry.bytes),
            entry.inputs.join(", "),
            format!(
                "{} ago",
                humantime::format_duration(Duration::from_secs(age.as_secs()))
            ),
        ]);
    }
    table
}
