//! What `podbay` does with its arguments: the subcommands that run
//! without the TUI, the simulator, the demo, and the browser.

use std::path::PathBuf;

use anyhow::Context as _;

use crate::app::restore::RestoreChoice;
use crate::cli::{BrowseArgs, Cli, Command, DemoArgs, ScenarioArgs, SimArgs};
use crate::cluster::client::Target;
use crate::commands::clusters::all_contexts;
use crate::config::{Config, Paths};
use crate::model::text::Printable;
use crate::sim::{Sim, SimHandle, SimOptions};
use crate::theme::Theme;
use crate::tui::{self, TuiOptions};

/// Writes `bytes` to stdout. A reader that stops early (`podbay man |
/// head`) is not an error: podbay ends quietly, as a program killed by
/// SIGPIPE does.
fn print_all(bytes: &[u8], what: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            crate::print::say(&format!("cannot write {what}: {e}").into());
            std::process::exit(1);
        }
    }
}

/// podbay, from its arguments to its exit status: the subcommands, the
/// simulator and the TUI. Everything runs from here, in the library, so
/// that the async code is compiled once: the library's `async fn`s the
/// binary awaited were compiled again into the binary crate (the debug
/// commands, the port-forward and a second copy of the Pod decoders:
/// the release binary was 1.78 MB bigger).
pub fn main() {
    // The simulator's container shim and its distroless workloads are this
    // binary too; both must run before any thread exists.
    let mut args = std::env::args();
    if args.nth(1).as_deref() == Some(crate::sim::sandbox::shim::ARG) {
        crate::sim::sandbox::shim::main(args.next().as_deref());
    }
    if let Ok(name) = std::env::var(crate::sim::images::WORKLOAD_ENV) {
        crate::sim::workload::run(&name);
    }
    exit_on_any_panic();
    crate::commands::complete::answer_if_asked();
    let cli = crate::cli::parse();
    let paths = Paths::discover();
    if cli.browse.print_paths {
        let lines = paths.to_string();
        crate::print::stdout(&Printable::lines(lines.lines().map(Printable::from)));
        return;
    }
    match &cli.command {
        Some(Command::Completions { shell }) => {
            let script = crate::commands::complete::registration(*shell);
            print_all(&script, "the completion script");
            return;
        }
        Some(Command::Man) => {
            let mut page = Vec::new();
            // Writing into memory cannot fail.
            let _ = crate::commands::man::render(&mut page);
            print_all(&page, "the manual page");
            return;
        }
        _ => {}
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            crate::print::say(&format!("cannot start the async runtime: {e}").into());
            std::process::exit(1);
        }
    };
    let result = runtime.block_on(run(cli, paths));
    // Watch tasks may still be winding down; do not wait for them.
    runtime.shutdown_background();
    if let Err(error) = result {
        crate::print::say(&format!("{error:#}").into());
        std::process::exit(1);
    }
    if let Some(signal) = crate::tty::stopped_by() {
        // A download from the file browser may have been under way.
        crate::local::remove_stages();
        std::process::exit(128 + signal);
    }
}

/// A panic in any thread or task ends podbay with status 101, after the
/// message is printed (and the terminal restored, by the TUI's own hook
/// around this one): a runtime would otherwise swallow a task's panic and
/// leave a half-dead process drawing into a restored terminal.
fn exit_on_any_panic() {
    let print = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        tracing::error!("panic: {info}");
        print(info);
        std::process::exit(101);
    }));
}

async fn run(cli: Cli, paths: Paths) -> anyhow::Result<()> {
    match cli.command {
        // Printed before the runtime starts.
        Some(Command::Completions { .. } | Command::Man) => Ok(()),
        Some(Command::Sim(args)) => run_sim(args).await,
        Some(Command::Demo(args)) => run_demo(args, cli.browse, &paths).await,
        Some(Command::Debug(args)) => {
            let mut args = match resolve_profile(*args, &paths.config) {
                Ok(args) => args,
                Err(sentence) => {
                    crate::print::say(&sentence.into());
                    std::process::exit(crate::engine::outcome::exit::USAGE);
                }
            };
            exit_if_failed(all_contexts(&mut args.clusters));
            let defaults = debug_defaults(args.image.is_some() && args.profile.is_some(), &paths);
            debug_command(args, &defaults).await
        }
        Some(Command::Cp(args)) => {
            let defaults = debug_defaults(args.image.is_some() && args.profile.is_some(), &paths);
            let done = crate::commands::cp::run(*args, &defaults).await;
            exit_with(done.map(|()| 0))
        }
        Some(Command::Capture(args)) => exit_with(crate::commands::capture::run(*args).await),
        Some(Command::Debuggers(mut args)) => {
            exit_if_failed(all_contexts(&mut args.clusters));
            exit_with(crate::commands::debuggers::run(args).await)
        }
        Some(Command::Top(mut args)) => {
            exit_if_failed(all_contexts(&mut args.clusters));
            exit_with(crate::commands::top::run(args).await)
        }
        Some(Command::PortForward(args)) => {
            exit_with(crate::commands::port_forward::run(args).await)
        }
        None => {
            let mut browse_args = cli.browse;
            exit_if_failed(all_contexts(&mut browse_args.clusters));
            let target = Target {
                kubeconfig: browse_args.clusters.kubeconfig.clone(),
                context: browse_args.clusters.first_context(),
                ..Target::default()
            };
            browse(target, browse_args, &paths, false, None).await
        }
    }
}

/// Exits with a command's code, or says its failure and exits with that's.
/// Goes on if `step` did, else ends podbay with its failure.
fn exit_if_failed(step: Result<(), crate::engine::outcome::Failure>) {
    if let Err(failure) = step {
        exit_with(Err(failure));
    }
}

fn exit_with(result: Result<i32, crate::engine::outcome::Failure>) -> ! {
    let code = match result {
        Ok(code) => code,
        Err(failure) => {
            crate::print::say(&failure.sentence);
            failure.code
        }
    };
    std::process::exit(code)
}

/// The debug image and profile from the config, read only for what the
/// command line leaves out (`given`: both were given); a bad config ends
/// podbay with its sentence (exit 78).
fn debug_defaults(given: bool, paths: &Paths) -> crate::commands::debug::Defaults {
    if given {
        return crate::commands::debug::Defaults::default();
    }
    match load_debug_defaults(&paths.config) {
        Ok(defaults) => defaults,
        Err(sentence) => {
            crate::print::say(&sentence.into());
            std::process::exit(crate::engine::outcome::exit::CONFIG);
        }
    }
}

async fn browse(
    target: Target,
    args: BrowseArgs,
    paths: &Paths,
    demo: bool,
    notice: Option<String>,
) -> anyhow::Result<()> {
    let config = Config::load(&paths.config)?;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let theme_name = args.theme.clone().unwrap_or_else(|| config.theme.clone());
    let theme = Theme::load(&theme_name, Some(&paths.themes), no_color)?;
    let keymap = config.keymap()?;
    let panes = config.pane_options();
    // Checked when the file was read.
    let custom_profiles = config.custom_profiles().unwrap_or_default();
    let _log = crate::logging::init(&paths.log);
    let target_kubeconfig = target.kubeconfig.clone();
    let browser_pinned =
        target.context.is_some() || args.namespace.is_some() || args.all_namespaces;
    tui::run(TuiOptions {
        other_contexts: args.clusters.other_contexts(),
        panes,
        keepalive: crate::config::seconds(config.terminal.keepalive),
        recordings: paths.state.join("recordings"),
        notice,
        target,
        all_namespaces: args.all_namespaces
            || (args.namespace.is_none() && (config.all_namespaces || demo)),
        namespace: args.namespace,
        fallback_namespaces: config.namespaces,
        keymap,
        theme,
        debug_profile: config.debug.profile,
        custom_profiles,
        download_dir: match config.files.download_dir.strip_prefix("~/") {
            Some(rest) => std::env::var("HOME").map_or_else(
                |_| config.files.download_dir.clone(),
                |home| format!("{home}/{rest}"),
            ),
            None => config.files.download_dir.clone(),
        },
        launch_timeout: std::time::Duration::from_secs(config.debug.launch_timeout),
        debug_images: with_demo_image(
            crate::config::image_choices(
                &crate::config::image_history(&paths.image_history()),
                &config.debug.images,
            ),
            demo,
        ),
        image_history: Some(paths.image_history()),
        // The demo's cluster ends with podbay: nothing of it could come back.
        workspace: (!demo).then(|| tui::WorkspaceOptions {
            store: tui::kept::Store::for_kubeconfig(&paths.state, target_kubeconfig.as_deref()),
            restore: match (args.restore, args.no_restore) {
                (true, _) => RestoreChoice::Always,
                (_, true) => RestoreChoice::Never,
                _ => config.workspace.restore,
            },
            browser_pinned,
        }),
    })
    .await
}

fn sim_options(scenario: &ScenarioArgs) -> SimOptions {
    SimOptions {
        pods: scenario.pods,
        pull_delay: scenario.pull_delay(),
        churn: scenario.churn,
        replace_every: scenario.replace_every,
        namespaces: !scenario.no_namespaces,
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
        // In the simulator's private scratch directory, removed on exit.
        None => sim.sandbox_dir().join("kubeconfig"),
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
    let stopped = crate::tty::termination();
    let (sim, path) = start_sim(options, args.kubeconfig_out).await?;
    crate::print::stdout(&Printable::lines([
        sim.isolation().describe().into(),
        format!("server: {}", sim.url()).into(),
        format!("kubeconfig: {}", path.display()).into(),
        "contexts: sim (admin), sim-viewer (read-only), sim-dev (namespace shop only)".into(),
        format!("try: KUBECONFIG={} kubectl get pods -A", path.display()).into(),
    ]));
    stopped.await;
    Ok(())
}

/// The debug images offered; the demo's last is its private registry's
/// tools image, which pulls only with a pull secret.
fn with_demo_image(mut images: Vec<String>, demo: bool) -> Vec<String> {
    let private = format!("{}/tools/netshoot:1", crate::sim::images::PRIVATE_REGISTRY);
    if demo && !images.contains(&private) {
        images.push(private);
    }
    images
}

async fn run_demo(args: DemoArgs, browse_args: BrowseArgs, paths: &Paths) -> anyhow::Result<()> {
    let (sim, path) = start_sim(sim_options(&args.scenario), None).await?;
    let target = Target {
        kubeconfig: Some(path.clone()),
        context: browse_args.clusters.first_context(),
        ..Target::default()
    };
    let notice = match sim.isolation() {
        crate::sim::sandbox::Isolation::Processes { .. } => Some(sim.isolation().describe()),
        crate::sim::sandbox::Isolation::Namespaces { .. } => None,
    };
    let result = browse(target, browse_args, paths, true, notice).await;
    let _ = std::fs::remove_file(&path);
    drop(sim);
    result
}

/// The config's debug image and profile, or the sentence on what is wrong.
fn load_debug_defaults(path: &std::path::Path) -> Result<crate::commands::debug::Defaults, String> {
    let config = Config::load(path).map_err(|e| e.to_string())?;
    Ok(crate::commands::debug::Defaults {
        image: config.debug.images.first().cloned().unwrap_or_default(),
        profile: config.debug.profile,
    })
}

/// `--profile NAME`: a built-in profile; else a team profile of the
/// config's `[profiles.NAME]`, sent as `--custom` sends its partial
/// container over its base (as the TUI's launcher offers them, and never
/// swapped for another); else one sentence naming both kinds.
fn resolve_profile(
    mut args: crate::cli::DebugArgs,
    config: &std::path::Path,
) -> Result<crate::cli::DebugArgs, String> {
    let Some(name) = args.profile_name.clone() else {
        return Ok(args);
    };
    if let Ok(profile) = name.parse::<crate::model::debug::Profile>() {
        args.profile = Some(profile);
        return Ok(args);
    }
    let config = Config::load(config).map_err(|e| e.to_string())?;
    let teams = config.custom_profiles().map_err(|(team, why)| {
        format!("The config's [profiles.{team}] {why}; fix it or move it aside.")
    })?;
    let names: Vec<String> = teams.iter().map(|t| t.name.clone()).collect();
    let Some(team) = teams.into_iter().find(|t| t.name == name) else {
        let theirs = match names.as_slice() {
            [] => " (config.toml has no [profiles.NAME] of the team's)".to_string(),
            names => format!("; the team's: {}", names.join(", ")),
        };
        return Err(format!(
            "Unknown profile {name:?}: the built-in ones are general, baseline, restricted, netadmin, sysadmin{theirs}."
        ));
    };
    if args.custom.is_some() {
        return Err(format!(
            "--profile {name} is a team profile, which is a partial container as --custom is: give one of them."
        ));
    }
    args.profile = Some(team.base);
    args.custom = Some(crate::cli::CustomFile {
        name: team.name,
        container: team.container,
    });
    Ok(args)
}

/// `podbay debug`: exits with the container's exit code or podbay's own.
async fn debug_command(
    args: crate::cli::DebugArgs,
    defaults: &crate::commands::debug::Defaults,
) -> ! {
    if let Some(why) = args.inapplicable() {
        crate::print::say(&why.into());
        std::process::exit(crate::engine::outcome::exit::USAGE);
    }
    let own_pod = args.pod_flags.copy_to.is_some()
        || matches!(args.pods.first(), Some(crate::cli::DebugTarget::Node(_)));
    let run = if own_pod {
        crate::commands::debug_pod::run(args, defaults).await
    } else if args.is_fleet() {
        crate::commands::fleet::run(args, defaults).await
    } else {
        crate::commands::debug::run(args, defaults).await
    };
    match run {
        Ok(code) => std::process::exit(code),
        Err(failure) => {
            crate::print::say(&failure.sentence);
            std::process::exit(failure.code);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::resolve_profile;
    use crate::cli::{Cli, Command};
    use clap::Parser as _;

    fn debug_args(argv: &[&str]) -> crate::cli::DebugArgs {
        match Cli::try_parse_from(argv).unwrap().command {
            Some(Command::Debug(args)) => *args,
            _ => panic!("debug"),
        }
    }

    #[test]
    fn a_profile_is_built_in_or_the_teams_or_one_sentence() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        let built_in = resolve_profile(
            debug_args(&["podbay", "debug", "p", "--profile", "baseline"]),
            &config,
        )
        .unwrap();
        assert_eq!(
            built_in.profile,
            Some(crate::model::debug::Profile::Baseline)
        );
        assert!(built_in.custom.is_none());
        let unknown = resolve_profile(
            debug_args(&["podbay", "debug", "p", "--profile", "root"]),
            &config,
        )
        .unwrap_err();
        assert!(unknown.starts_with("Unknown profile \"root\""), "{unknown}");
        assert!(unknown.contains("no [profiles.NAME]"), "{unknown}");
        std::fs::write(&config, "[profiles.ops]\nbase = \"netadmin\"\n").unwrap();
        let team = resolve_profile(
            debug_args(&["podbay", "debug", "p", "--profile", "ops"]),
            &config,
        )
        .unwrap();
        assert_eq!(team.profile, Some(crate::model::debug::Profile::Netadmin));
        assert_eq!(team.custom.map(|c| c.name).as_deref(), Some("ops"));
    }
}
