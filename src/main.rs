use std::path::PathBuf;

use anyhow::Context as _;
use clap::Parser as _;

use podbay::cli::{Cli, Command, ScenarioArgs, SimArgs};
use podbay::sim::{Sim, SimHandle, SimOptions};

fn main() {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("podbay: cannot start the async runtime: {e}");
            std::process::exit(1);
        }
    };
    let result = runtime.block_on(run(cli));
    if let Err(error) = result {
        eprintln!("podbay: {error:#}");
        std::process::exit(1);
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Some(Command::Sim(args)) => run_sim(args).await,
        Some(Command::Demo(args)) => run_demo(args).await,
        Some(Command::Debug(args)) => match podbay::commands::debug::run(args).await {
            Ok(code) => std::process::exit(code),
            Err(failure) => {
                eprintln!("podbay: {}", failure.sentence);
                std::process::exit(failure.code);
            }
        },
        None => anyhow::bail!(
            "the pod browser is not available in this build yet; run `podbay sim` or `podbay demo`"
        ),
    }
}

fn sim_options(scenario: &ScenarioArgs) -> SimOptions {
    SimOptions {
        pods: scenario.pods,
        pull_delay: scenario.pull_delay(),
        ..SimOptions::default()
    }
}

async fn start_sim(
    options: SimOptions,
    kubeconfig: Option<PathBuf>,
) -> anyhow::Result<(SimHandle, PathBuf)> {
    let sim = Sim::start(options).await?;
    let path = match kubeconfig {
        Some(path) => path,
        None => std::env::temp_dir().join(format!("podbay-sim-{}.kubeconfig", std::process::id())),
    };
    sim.write_kubeconfig(&path)
        .with_context(|| format!("cannot write the kubeconfig to {}", path.display()))?;
    Ok((sim, path))
}

async fn run_sim(args: SimArgs) -> anyhow::Result<()> {
    let options = SimOptions {
        listen: args.listen,
        ..sim_options(&args.scenario)
    };
    let (sim, path) = start_sim(options, args.kubeconfig_out).await?;
    println!("server: {}", sim.url());
    println!("kubeconfig: {}", path.display());
    println!("contexts: sim (admin), sim-viewer (read-only), sim-dev (namespace shop only)");
    println!("try: KUBECONFIG={} kubectl get pods -A", path.display());
    wait_for_shutdown().await;
    Ok(())
}

async fn run_demo(args: podbay::cli::DemoArgs) -> anyhow::Result<()> {
    let (sim, path) = start_sim(sim_options(&args.scenario), None).await?;
    println!("The embedded cluster is running at {}.", sim.url());
    println!("kubeconfig: {}", path.display());
    println!("The pod browser is not in this build yet; press Ctrl-C to stop the cluster.");
    wait_for_shutdown().await;
    let _ = std::fs::remove_file(&path);
    Ok(())
}

async fn wait_for_shutdown() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let terminated = async {
        match term.as_mut() {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminated => {}
    }
}
