//! Command-line definitions.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "podbay",
    version,
    about = "A terminal console for debugging live Kubernetes pods"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the embedded simulated cluster in the foreground.
    Sim(SimArgs),
    /// Start the embedded cluster in-process and open podbay on it.
    Demo(DemoArgs),
}

#[derive(Debug, Args)]
pub struct SimArgs {
    /// Address to listen on; loopback only.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Where to write the kubeconfig (contexts sim, sim-viewer, sim-dev).
    #[arg(long)]
    pub kubeconfig_out: Option<PathBuf>,
    #[command(flatten)]
    pub scenario: ScenarioArgs,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub scenario: ScenarioArgs,
}

#[derive(Debug, Args)]
pub struct ScenarioArgs {
    /// Generate N pods over many namespaces instead of the demo scenario.
    #[arg(long, value_name = "N")]
    pub pods: Option<usize>,
    /// Simulated image pull time, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1500)]
    pub pull_delay: u64,
}

impl ScenarioArgs {
    pub fn pull_delay(&self) -> Duration {
        Duration::from_millis(self.pull_delay)
    }
}
