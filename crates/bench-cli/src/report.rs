//! `softrouter report RESULTS.json... -o report.html`: the HTML report
//! ([`bench::html`]) of one or more results files, and the writer that
//! `softrouter bench --report FILE` uses at the end of a run.
//!
//! Exit codes: 0 written; 2 bad input (a results file that cannot be read
//! or parsed, a bad `--papers` file), named with the file; 1 the page
//! could not be written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use bench::html::{self, Experiment};
use bench::results::BenchResults;
use bench::settings::{PaperValue, PapersFile};

/// Options of `softrouter report`.
#[derive(Args, Debug, Clone)]
#[command(
    about = "One self-contained HTML page (inline SVG and CSS, no script) from bench results files"
)]
pub struct ReportArgs {
    /// Results files as `softrouter bench --json` writes them; one section
    /// each, in this order.
    #[arg(required = true, value_name = "RESULTS.json")]
    pub results: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,
    /// Published figures to set beside the measured ones: a TOML file of
    /// `[[paper]]` rows (as in an experiment file; see docs/bench-results.md).
    #[arg(long, value_name = "FILE.toml")]
    pub papers: Option<PathBuf>,
    /// Page title (default: "softrouter bench report").
    #[arg(long)]
    pub title: Option<String>,
}

/// Runs `softrouter report`.
pub fn run(args: ReportArgs) -> ExitCode {
    let input = || -> Result<(Vec<Experiment>, Vec<PaperValue>)> {
        let mut exps = Vec::new();
        for p in &args.results {
            exps.push(Experiment {
                name: name_of(p),
                results: BenchResults::read_json(p)?,
            });
        }
        let papers = match &args.papers {
            Some(p) => read_papers(p)?,
            None => Vec::new(),
        };
        Ok((exps, papers))
    };
    let (exps, papers) = match input() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("softrouter report: {e:#}");
            return ExitCode::from(2);
        }
    };
    let title = args.title.as_deref().unwrap_or("softrouter bench report");
    match write(&args.output, title, &exps, &papers) {
        Ok(()) => {
            eprintln!(
                "softrouter report: {} experiment(s) in {}",
                exps.len(),
                args.output.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("softrouter report: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// `[[paper]]` rows of a TOML file.
pub fn read_papers(p: &Path) -> Result<Vec<PaperValue>> {
    let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
    PapersFile::from_toml_str(&text, &p.display().to_string())
        .map(|f| f.paper)
        .map_err(anyhow::Error::msg)
}

/// Writes the page.
pub fn write(path: &Path, title: &str, exps: &[Experiment], papers: &[PaperValue]) -> Result<()> {
    std::fs::write(path, html::page(title, exps, papers))
        .with_context(|| format!("writing {}", path.display()))
}

/// The file name, as the page names the experiment.
pub fn name_of(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
