//! Shell completion with values from where they live: contexts from the
//! kubeconfig, team profiles from config.toml, and namespaces, pods, nodes,
//! workloads and containers from the cluster, each within a short bound (a
//! shell waits on it; an unreachable cluster completes nothing, quietly).
//!
//! The shell asks by running `PODBAY_COMPLETE=bash podbay -- podbay debug …`
//! (clap_complete's engine); `podbay completions SHELL` prints the script
//! that makes it do so.

use std::ffi::OsStr;
use std::time::Duration;

use clap::CommandFactory as _;
use clap_complete::engine::{
    ArgValueCompleter, CompletionCandidate, PathCompleter, ValueCompleter as _,
};
use clap_complete::env::EnvCompleter;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use kube::api::{Api, ApiResource, DynamicObject, ListParams};

use crate::cluster::client::Target;

/// The variable that tells podbay the shell asks for completions.
const VAR: &str = "PODBAY_COMPLETE";

/// How long a completion waits for the cluster.
const BOUND: Duration = Duration::from_secs(2);

/// At most this many names of one kind: more than a shell shows.
const MOST: u32 = 500;

/// Answers the shell and exits if it asked for completions; else returns.
pub fn answer_if_asked() {
    clap_complete::CompleteEnv::with_factory(command)
        .var(VAR)
        .complete();
}

/// `podbay completions SHELL`: the script that makes the shell ask podbay.
pub fn registration(shell: clap_complete::Shell) -> Vec<u8> {
    let completer: &dyn EnvCompleter = match shell {
        clap_complete::Shell::Bash => &clap_complete::env::Bash,
        clap_complete::Shell::Zsh => &clap_complete::env::Zsh,
        clap_complete::Shell::Fish => &clap_complete::env::Fish,
        clap_complete::Shell::Elvish => &clap_complete::env::Elvish,
        _ => &clap_complete::env::Powershell,
    };
    let mut script = Vec::new();
    // Writing into memory cannot fail.
    let _ = completer.write_registration(VAR, "podbay", "podbay", "podbay", &mut script);
    script
}

/// podbay's command line, each value that names something completed from
/// where it lives.
pub fn command() -> clap::Command {
    with_values(crate::cli::Cli::command())
}

fn with_values(command: clap::Command) -> clap::Command {
    let name = command.get_name().to_string();
    command
        .mut_args(|arg| {
            let completer = match (name.as_str(), arg.get_id().as_str()) {
                ("debug" | "debuggers" | "top", "context") => ArgValueCompleter::new(context_list),
                (_, "context") => ArgValueCompleter::new(contexts),
                (_, "namespace") => ArgValueCompleter::new(namespaces),
                (_, "profile_name") => ArgValueCompleter::new(profiles),
                ("debug", "pods") => ArgValueCompleter::new(debug_targets),
                ("debug", "target") => ArgValueCompleter::new(containers),
                ("port-forward", "target") => ArgValueCompleter::new(forward_targets),
                ("cp", "source" | "destination") => ArgValueCompleter::new(copy_ends),
                ("stop", "pod") => ArgValueCompleter::new(pods),
                ("stop", "containers") => ArgValueCompleter::new(debuggers),
                _ => return arg,
            };
            arg.add(completer)
        })
        .mut_subcommands(with_values)
}

fn contexts(current: &OsStr) -> Vec<CompletionCandidate> {
    let line = Line::read();
    let names = line.target().contexts().unwrap_or_default();
    starting_with(current, names)
}

/// `--context a,b`: the word after the last comma, each context once.
fn context_list(current: &OsStr) -> Vec<CompletionCandidate> {
    let typed = current.to_string_lossy();
    if !typed.contains(',') {
        return contexts(current);
    }
    let names = Line::read().target().contexts().unwrap_or_default();
    after_the_last_comma(&typed, names)
}

fn after_the_last_comma(typed: &str, names: Vec<String>) -> Vec<CompletionCandidate> {
    let (before, last) = typed.rsplit_once(',').unwrap_or(("", typed));
    let given: Vec<&str> = before.split(',').collect();
    names
        .into_iter()
        .filter(|name| name.starts_with(last) && !given.contains(&name.as_str()))
        .map(|name| CompletionCandidate::new(format!("{before},{name}")))
        .collect()
}

fn profiles(current: &OsStr) -> Vec<CompletionCandidate> {
    let builtins = crate::model::debug::Profile::ALL.map(|p| p.name().to_string());
    let config = crate::config::Paths::discover().config;
    let team = crate::config::Config::load(&config)
        .ok()
        .and_then(|c| c.custom_profiles().ok())
        .unwrap_or_default()
        .into_iter()
        .map(|p| p.name);
    starting_with(current, builtins.into_iter().chain(team).collect())
}

fn namespaces(current: &OsStr) -> Vec<CompletionCandidate> {
    let names = Line::read()
        .ask(|client, _| async move { names_of(client, &erase::<Namespace>(), None).await });
    starting_with(current, names)
}

fn pods(current: &OsStr) -> Vec<CompletionCandidate> {
    let names = Line::read().ask(|client, namespace| async move {
        names_of(client, &erase::<Pod>(), Some(&namespace)).await
    });
    starting_with(current, names)
}

/// A pod, `node/NAME`, a Service's or a workload's pods (`svc/NAME`,
/// `deploy/NAME`, …) to debug.
fn debug_targets(current: &OsStr) -> Vec<CompletionCandidate> {
    kinds_or_names(
        current,
        &["node/", "svc/", "deploy/", "rs/", "sts/", "ds/", "job/"],
    )
}

fn forward_targets(current: &OsStr) -> Vec<CompletionCandidate> {
    kinds_or_names(current, &["svc/", "deploy/", "rs/", "sts/"])
}

/// `KIND/NAME` once a kind is typed; else the pods, and the kinds.
fn kinds_or_names(current: &OsStr, kinds: &[&str]) -> Vec<CompletionCandidate> {
    let text = current.to_string_lossy();
    let Some((kind, _)) = text.split_once('/') else {
        let mut candidates = pods(current);
        candidates.extend(starting_with(
            current,
            kinds.iter().map(|k| k.to_string()).collect(),
        ));
        return candidates;
    };
    let Some(resource) = resource_of(kind) else {
        return Vec::new();
    };
    let kind = kind.to_string();
    let names = Line::read().ask(move |client, namespace| async move {
        let scope = (resource.namespaced).then_some(namespace);
        names_of(client, &resource.api, scope.as_deref())
            .await
            .into_iter()
            .map(|n| format!("{kind}/{n}"))
            .collect()
    });
    starting_with(current, names)
}

/// cp's SOURCE and DESTINATION: `POD:` for a pod's files, else local paths.
fn copy_ends(current: &OsStr) -> Vec<CompletionCandidate> {
    if current.to_string_lossy().contains(':') {
        return Vec::new();
    }
    let mut candidates: Vec<CompletionCandidate> = pods(current)
        .into_iter()
        .map(|pod| CompletionCandidate::new(format!("{}:", pod.get_value().to_string_lossy())))
        .collect();
    candidates.extend(PathCompleter::any().complete(current));
    candidates
}

/// `--target`: the containers of the pod the line names.
fn containers(current: &OsStr) -> Vec<CompletionCandidate> {
    let line = Line::read();
    let Some(pod) = line.pod.clone() else {
        return Vec::new();
    };
    let names = line.ask(|client, namespace| async move {
        let Ok(pod) =
            crate::cluster::objects::get(&Api::<Pod>::namespaced(client, &namespace), &pod).await
        else {
            return Vec::new();
        };
        pod.spec
            .into_iter()
            .flat_map(|s| {
                s.containers
                    .into_iter()
                    .chain(s.init_containers.unwrap_or_default())
            })
            .map(|c| c.name)
            .collect()
    });
    starting_with(current, names)
}

/// `debuggers stop POD -c`: the debug containers of the pod the line names.
fn debuggers(current: &OsStr) -> Vec<CompletionCandidate> {
    let line = Line::read();
    let Some(pod) = line.pod.clone() else {
        return Vec::new();
    };
    let names = line.ask(|client, namespace| async move {
        crate::cluster::objects::get(&Api::<Pod>::namespaced(client, &namespace), &pod)
            .await
            .ok()
            .and_then(|pod| pod.spec?.ephemeral_containers)
            .unwrap_or_default()
            .into_iter()
            .map(|c| c.name)
            .collect()
    });
    starting_with(current, names)
}

/// What a word `KIND/` names, as kubectl's short and long names do.
struct Resource {
    api: ApiResource,
    namespaced: bool,
}

fn resource_of(kind: &str) -> Option<Resource> {
    use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
    use k8s_openapi::api::batch::v1::Job;
    let (api, namespaced) = match kind {
        "node" | "nodes" | "no" => (erase::<Node>(), false),
        "pod" | "pods" | "po" => (erase::<Pod>(), true),
        "svc" | "service" | "services" => (erase::<k8s_openapi::api::core::v1::Service>(), true),
        "deploy" | "deployment" | "deployments" => (erase::<Deployment>(), true),
        "rs" | "replicaset" | "replicasets" => (erase::<ReplicaSet>(), true),
        "sts" | "statefulset" | "statefulsets" => (erase::<StatefulSet>(), true),
        "ds" | "daemonset" | "daemonsets" => (erase::<DaemonSet>(), true),
        "job" | "jobs" => (erase::<Job>(), true),
        _ => return None,
    };
    Some(Resource { api, namespaced })
}

fn erase<K: kube::Resource<DynamicType = ()>>() -> ApiResource {
    ApiResource::erase::<K>(&())
}

/// One page of names of a kind, in a namespace or cluster-wide; none when
/// the server refuses (a restricted user) or fails. Untyped: one request
/// path in the binary for every kind.
async fn names_of(
    client: kube::Client,
    kind: &ApiResource,
    namespace: Option<&str>,
) -> Vec<String> {
    let api: Api<DynamicObject> = match namespace {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, kind),
        None => Api::all_with(client.clone(), kind),
    };
    let params = ListParams::default().limit(MOST);
    crate::cluster::objects::first_names(client, api.resource_url(), &params)
        .await
        .unwrap_or_default()
}

/// The names that start with what is typed, sorted, once each. A name
/// with a control character or a space is no Kubernetes name (a server
/// that lies): the shell would show it raw, so it is left out.
fn starting_with(current: &OsStr, mut names: Vec<String>) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    names.retain(|n| {
        n.starts_with(current.as_ref()) && !n.chars().any(|c| c.is_control() || c.is_whitespace())
    });
    names.sort();
    names.dedup();
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// What the words typed so far say of where to look: the kubeconfig,
/// context and namespace flags, and the pod named.
#[derive(Default)]
struct Line {
    kubeconfig: Option<std::path::PathBuf>,
    context: Option<String>,
    namespace: Option<String>,
    pod: Option<String>,
}

impl Line {
    /// The words the shell passed after `--` (the program's name first),
    /// parsed as far as they go.
    fn read() -> Line {
        let words = std::env::args_os().skip_while(|w| w != "--").skip(1);
        Line::parse(words)
    }

    fn parse(words: impl IntoIterator<Item = std::ffi::OsString>) -> Line {
        let Ok(matches) = crate::cli::Cli::command()
            .ignore_errors(true)
            .try_get_matches_from(words)
        else {
            return Line::default();
        };
        let mut line = Line::default();
        let mut level = Some(&matches);
        while let Some(matches) = level {
            let text = |id: &str| {
                matches
                    .try_get_one::<String>(id)
                    .ok()
                    .flatten()
                    .filter(|s| !s.is_empty())
                    .cloned()
            };
            // Of `--context a,b`, values are looked up in the first.
            line.context = text("context")
                .and_then(|c| crate::cli::contexts(Some(&c)).into_iter().next().flatten())
                .or(line.context);
            line.namespace = text("namespace").or(line.namespace);
            line.pod = text("pod").or(line.pod);
            if let Ok(Some(targets)) = matches.try_get_many::<crate::cli::DebugTarget>("pods") {
                line.pod = targets
                    .filter_map(|t| match t {
                        crate::cli::DebugTarget::Pod(name) => Some(name.clone()),
                        _ => None,
                    })
                    .next()
                    .or(line.pod);
            }
            if let Ok(Some(path)) = matches.try_get_one::<std::path::PathBuf>("kubeconfig") {
                line.kubeconfig = Some(path.clone());
            }
            level = matches.subcommand().map(|(_, sub)| sub);
        }
        line
    }

    /// The cluster the line names. A credential plugin never takes the
    /// terminal here: the shell is drawing its prompt.
    fn target(&self) -> Target {
        Target {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            plugins: crate::cluster::client::PluginTerminal::Withheld,
        }
    }

    /// Runs `read` with a client of the line's context and its namespace,
    /// within [`BOUND`]; nothing when the cluster is not there in time.
    fn ask<F, R>(&self, read: R) -> Vec<String>
    where
        R: FnOnce(kube::Client, String) -> F,
        F: std::future::Future<Output = Vec<String>>,
    {
        // The scheduler the rest of podbay runs on (a current-thread one
        // would be a second scheduler in the binary).
        let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
        else {
            return Vec::new();
        };
        let target = self.target();
        let namespace = self.namespace.clone();
        runtime.block_on(async move {
            let asked = async {
                let connection = target.connect().await.ok()?;
                let namespace = namespace.unwrap_or(connection.namespace);
                Some(read(connection.client, namespace).await)
            };
            crate::cluster::deadline::Deadline::none()
                .within(Some(BOUND))
                .bound(asked)
                .await
                .ok()
                .flatten()
                .unwrap_or_default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(words: &str) -> Line {
        Line::parse(words.split_whitespace().map(std::ffi::OsString::from))
    }

    #[test]
    fn the_line_says_where_to_look_whatever_the_subcommand() {
        let l = line("podbay --context prod -n shop");
        assert_eq!(
            (l.context.as_deref(), l.namespace.as_deref()),
            (Some("prod"), Some("shop"))
        );
        let l = line("podbay debug --kubeconfig /k --context=dev redis-0 -n shop --target");
        assert_eq!(
            (
                l.kubeconfig.as_deref(),
                l.context.as_deref(),
                l.namespace.as_deref(),
                l.pod.as_deref()
            ),
            (
                Some(std::path::Path::new("/k")),
                Some("dev"),
                Some("shop"),
                Some("redis-0")
            )
        );
        let l = line("podbay debuggers stop -n shop hello-1 -c");
        assert_eq!(
            (l.namespace.as_deref(), l.pod.as_deref()),
            (Some("shop"), Some("hello-1"))
        );
        // A node is no pod to take containers from.
        assert_eq!(line("podbay debug node/a1 --target").pod, None);
    }

    /// Every value the completers are given to exists by that name: a
    /// renamed flag would silently lose its completion.
    #[test]
    fn every_completed_value_names_an_argument_of_its_command() {
        fn completed(command: &clap::Command, found: &mut Vec<String>) {
            for arg in command.get_arguments() {
                if arg.get::<ArgValueCompleter>().is_some() {
                    found.push(format!("{} {}", command.get_name(), arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                completed(sub, found);
            }
        }
        let mut found = Vec::new();
        completed(&command(), &mut found);
        for expected in [
            "podbay context",
            "podbay namespace",
            "debug pods",
            "debug target",
            "debug profile_name",
            "cp source",
            "cp destination",
            "port-forward target",
            "stop pod",
            "stop containers",
            "debuggers context",
        ] {
            assert!(found.iter().any(|f| f == expected), "{expected}: {found:?}");
        }
    }

    #[test]
    fn a_context_list_completes_its_last_name_and_offers_each_context_once() {
        let names = vec!["prod-eu".into(), "prod-us".into(), "staging".into()];
        let offered: Vec<String> = after_the_last_comma("prod-eu,pr", names.clone())
            .iter()
            .map(|c| c.get_value().to_string_lossy().into_owned())
            .collect();
        assert_eq!(offered, ["prod-eu,prod-us"]);
        assert_eq!(after_the_last_comma("prod-eu,", names).len(), 2);
        let l = line("podbay debug --context staging,prod-eu redis-0 --target");
        assert_eq!(
            l.context.as_deref(),
            Some("staging"),
            "pods and containers are looked up in the first context"
        );
    }

    #[test]
    fn names_are_offered_by_the_prefix_typed_sorted_once() {
        let names = |c: Vec<CompletionCandidate>| -> Vec<String> {
            c.iter()
                .map(|c| c.get_value().to_string_lossy().into_owned())
                .collect()
        };
        let offered = starting_with(
            OsStr::new("re"),
            vec![
                "redis-1".into(),
                "web".into(),
                "redis-0".into(),
                "redis-0".into(),
            ],
        );
        assert_eq!(names(offered), ["redis-0", "redis-1"]);
        let hostile = starting_with(
            OsStr::new(""),
            vec![
                "ok".into(),
                "evil\x1b]52;c;aGk=\x07".into(),
                "two words".into(),
            ],
        );
        assert_eq!(names(hostile), ["ok"]);
    }
}
