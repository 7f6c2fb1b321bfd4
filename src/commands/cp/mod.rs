//! `podbay cp`: reads the two arguments, finds the container, decides
//! whether tar runs in it or in a debug container that targets it (or
//! mounts its volumes, when it is not running), and copies through the
//! transfer engine ([`crate::engine::transfer`]), saying what was done.

use std::path::PathBuf;

use k8s_openapi::api::core::v1::Pod;

use super::debug::{self as debug_cmd, Defaults, Failure, Job, Sinks, Voice, exit, fail};
use crate::cli::{CpArgs, DebugArgs};
use crate::cluster::deadline::Deadline;
use crate::engine::transfer::progress::Meter;
use crate::engine::transfer::{Bounds, Copied, Reach, copy_in, copy_out, joined, local_name};
use crate::model::text::sanitize;
use crate::model::transfer::{
    Location, PodPath, Route, Split, lower_case_pod, mount_holding, split,
};

pub use crate::engine::transfer::codes;

/// Which way the bytes go.
enum Plan {
    /// Out of the pod into a local path, or onto stdout as tar.
    Out { from: Split, to: Option<PathBuf> },
    /// Into the pod from a local path (named `name` there), or from a tar
    /// stream on stdin (unpacked into `dir`).
    In {
        from: Option<PathBuf>,
        dir: String,
        name: String,
    },
}

impl Plan {
    /// The path on the pod's side, as the user gave it (without `./`).
    fn pod_path(&self) -> String {
        match self {
            Plan::Out { from, .. } => joined(from),
            Plan::In { dir, name, .. } => joined(&Split {
                dir: dir.clone(),
                name: name.clone(),
            }),
        }
    }
}

/// The copy, or a signal (ctrl-c, SIGTERM, SIGHUP, SIGQUIT): then what
/// was staged is removed and podbay exits 128 + the signal's number. Past
/// `--max-time`, the same with exit 124.
pub async fn run(args: CpArgs, defaults: &Defaults) -> Result<(), Failure> {
    let upload = matches!(Location::parse(&args.destination), Location::Pod(_));
    let stopped = crate::tty::termination();
    let deadline = Deadline::none().within(args.max_time);
    let kept = if upload {
        "part of the copy may be in the container already"
    } else {
        "nothing was kept"
    };
    tokio::select! {
        done = deadline.bound(copy(args, defaults)) => done.unwrap_or_else(|why| {
            crate::local::remove_stages();
            Err(fail(exit::TIMEOUT, format!("The copy was stopped: {why} (--max-time); {kept}.")))
        }),
        () = stopped => {
            crate::local::remove_stages();
            let signal = crate::tty::stopped_by().unwrap_or(nix::libc::SIGINT);
            Err(fail(
                128 + signal,
                if upload {
                    "Interrupted; part of the copy may be in the container already."
                } else {
                    "Interrupted; nothing was kept."
                },
            ))
        }
    }
}

async fn copy(args: CpArgs, defaults: &Defaults) -> Result<(), Failure> {
    let (at, plan) = plan(&args)?;
    let connection = debug_cmd::connect(&DebugArgs::for_copy(&args, "", "", None)).await?;
    let namespace = at
        .namespace
        .clone()
        .or(args.namespace.clone())
        .unwrap_or(connection.namespace.clone());
    let client = connection.client.clone();
    let mut debug_args = DebugArgs::for_copy(&args, &at.pod, &namespace, None);
    let voice = Voice::Stderr;
    let deadline = tokio::time::Instant::now() + args.timeout;
    let probe = job(&debug_args, &at.pod, &namespace, None);
    let pod = debug_cmd::get_pod(&client, &probe, &connection.server, deadline).await?;
    let container = container_of(&pod, args.container.as_deref(), &voice)?;
    let detail = crate::model::PodDetail::from_pod(&pod);
    if let Some(info) = detail
        .container(&container)
        .filter(|c| !c.state.is_running())
    {
        // Not running: only the volumes it mounts are left to reach.
        let upload = matches!(plan, Plan::In { .. });
        let mounts = volumes_for(&detail, info, &plan.pod_path(), upload)?;
        let names: Vec<&str> = mounts.iter().map(|(volume, _)| volume.as_str()).collect();
        voice.say(&sanitize(&format!(
            "container {container} is not running ({}); {} is on its volume {}: copying through a debug container that mounts it",
            info.state.summary(),
            plan.pod_path(),
            names.join(", ")
        )));
        debug_args.mounts = mounts;
        debug_args.user_of = Some(container.clone());
        let reach = debugger(
            &client,
            &debug_args,
            &pod,
            defaults,
            deadline,
            Route::Direct,
        )
        .await?;
        return match carry(&client, &reach, &plan, bounds(&args)).await? {
            Copied::Done(done) => {
                voice.say(&done);
                Ok(())
            }
            Copied::NoTar => Err(no_tar(&reach)),
        };
    }
    let direct = Reach {
        namespace: namespace.clone(),
        pod: at.pod.clone(),
        runs_in: container.clone(),
        route: Route::Direct,
    };
    let done = match carry(&client, &direct, &plan, bounds(&args)).await? {
        Copied::Done(done) => done,
        Copied::NoTar => {
            voice.say(format!(
                "container {container} has no tar (a distroless image?): copying through a debug container that targets it"
            ));
            debug_args.target = Some(container.clone());
            let through = debugger(
                &client,
                &debug_args,
                &pod,
                defaults,
                deadline,
                Route::Through,
            )
            .await?;
            match carry(&client, &through, &plan, bounds(&args)).await? {
                Copied::Done(done) => done,
                Copied::NoTar => {
                    return Err(fail(
                        exit::UNSUPPORTED,
                        format!(
                            "Neither container {container} nor debug container {} has tar; pass --image with one that does (busybox:1.36).",
                            through.runs_in
                        ),
                    ));
                }
            }
        }
    };
    voice.say(&done);
    Ok(())
}

/// The copy `plan` by `reach`.
async fn carry(
    client: &kube::Client,
    reach: &Reach,
    plan: &Plan,
    bounds: Bounds,
) -> Result<Copied, Failure> {
    let meter = Meter::on_stderr();
    match plan {
        Plan::Out { from, to } => {
            copy_out(client, reach, from, to.as_deref(), bounds, &meter).await
        }
        Plan::In { from, dir, name } => {
            copy_in(client, reach, from.as_deref(), dir, name, bounds, &meter).await
        }
    }
}

/// What `--max-size` and `--stall` allow a copy.
fn bounds(args: &CpArgs) -> Bounds {
    Bounds {
        bytes: args.max_size,
        stall: args.stall,
    }
}

fn no_tar(reach: &Reach) -> Failure {
    fail(
        exit::UNSUPPORTED,
        format!(
            "Debug container {} has no tar; pass --image with one that does (busybox:1.36).",
            reach.runs_in
        ),
    )
}

/// The volumes (name, path) to mount to reach `path` of a container that
/// is not running: the one that holds it, and those mounted below it (a
/// directory copy is then whole). Its own files are gone until it runs
/// again, but the pod's volumes it mounts outlive it (a core file, a heap
/// dump on an emptyDir), and a debug container that mounts them at the
/// same paths reaches them. In a pod that has ended, nothing can start.
fn volumes_for(
    detail: &crate::model::PodDetail,
    info: &crate::model::ContainerInfo,
    path: &str,
    upload: bool,
) -> Result<Vec<(String, String)>, Failure> {
    let ended = matches!(detail.phase.as_str(), "Succeeded" | "Failed");
    let spec = detail.manifest.spec.as_ref();
    let mounts: Vec<&k8s_openapi::api::core::v1::VolumeMount> = spec
        .into_iter()
        .flat_map(|s| {
            s.containers
                .iter()
                .chain(s.init_containers.iter().flatten())
        })
        .filter(|c| c.name == info.name)
        .flat_map(|c| c.volume_mounts.iter().flatten())
        .collect();
    let stopped = |why: String| {
        fail(
            exit::NOT_RUNNING,
            format!(
                "Container {} of pod {} is not running ({}); {why}.",
                info.name,
                detail.key.name,
                sanitize(&info.state.summary())
            ),
        )
    };
    if ended {
        return Err(stopped(format!(
            "pod {} has ended, so nothing can be started in it to reach its files",
            detail.key.name
        )));
    }
    let Some((volume, at)) = mount_holding(&info.mounts, path) else {
        let volumes: Vec<String> = info
            .mounts
            .iter()
            .map(|(volume, at)| sanitize(&format!("{at} (volume {volume})")).into_owned())
            .collect();
        return Err(stopped(if volumes.is_empty() {
            "files can be copied only while it runs".to_string()
        } else {
            format!(
                "its own files are gone until it runs again, but its volumes can be read: {}",
                volumes.join(", ")
            )
        }));
    };
    let below = |m: &&&k8s_openapi::api::core::v1::VolumeMount| {
        (m.name == *volume && m.mount_path == *at)
            || mount_holding(&[(String::new(), path.to_string())], &m.mount_path).is_some()
    };
    let mut wanted = Vec::new();
    for m in mounts.iter().filter(below) {
        let sub_path = m.sub_path.as_deref().or(m.sub_path_expr.as_deref());
        if sub_path.is_some_and(|p| !p.is_empty()) {
            return Err(fail(
                exit::UNSUPPORTED,
                sanitize(&format!(
                    "Container {} mounts only part of volume {} at {} (subPath), and a debug container cannot (Kubernetes forbids subPath there); copy it while {} runs.",
                    info.name, m.name, m.mount_path, info.name
                ))
                .into_owned(),
            ));
        }
        if upload && m.read_only == Some(true) {
            return Err(fail(
                exit::UNSUPPORTED,
                sanitize(&format!(
                    "Container {} mounts volume {} read-only at {}; podbay will not write there behind its back.",
                    info.name, m.name, m.mount_path
                ))
                .into_owned(),
            ));
        }
        wanted.push((m.name.clone(), m.mount_path.clone()));
    }
    Ok(wanted)
}

/// Reads the two arguments: exactly one side in a pod.
fn plan(args: &CpArgs) -> Result<(PodPath, Plan), Failure> {
    let usage = |s: &str| fail(codes::USAGE, s.to_string());
    match (
        Location::parse(&args.source),
        Location::parse(&args.destination),
    ) {
        (Location::Pod(at), to @ (Location::Local(_) | Location::Stdio)) => {
            let from = split(&at.path).map_err(|s| usage(&s))?;
            let to = match to {
                Location::Local(path) => Some(path),
                _ if std::io::IsTerminal::is_terminal(&std::io::stdout()) => {
                    return Err(usage(
                        "The destination - writes a tar stream to stdout, which is a terminal; pipe it (| tar xf -) or give a path.",
                    ));
                }
                _ => None,
            };
            Ok((at, Plan::Out { from, to }))
        }
        (from @ (Location::Local(_) | Location::Stdio), Location::Pod(at)) => {
            let from = match from {
                Location::Local(path) => Some(path),
                _ => None,
            };
            let into_dir = at.path.ends_with('/') || from.is_none();
            let (dir, name) = if into_dir {
                let name = from
                    .as_deref()
                    .map(local_name)
                    .transpose()
                    .map_err(|s| usage(&s))?
                    .unwrap_or_default();
                (at.path.trim_end_matches('/').to_string(), name)
            } else {
                let s = split(&at.path).map_err(|s| usage(&s))?;
                (s.dir, s.name)
            };
            let dir = if into_dir && dir.is_empty() && at.path.starts_with('/') {
                "/".to_string()
            } else {
                dir
            };
            Ok((at, Plan::In { from, dir, name }))
        }
        (Location::Pod(_), Location::Pod(_)) => Err(usage(
            "Both SOURCE and DESTINATION are in pods; copy through this machine: podbay cp POD:PATH ./x, then podbay cp ./x OTHER:PATH.",
        )),
        _ => Err(usage(&match [&args.source, &args.destination]
                .into_iter()
                .find_map(|arg| Some((arg, lower_case_pod(arg)?)))
            {
                Some((given, meant)) => format!(
                    "No pod can be named as in {given}: pod names are lower case. Did you mean {meant}?"
                ),
                None => "Neither SOURCE nor DESTINATION is in a pod; write the pod's side as [NAMESPACE/]POD:PATH.".to_string(),
            })),
    }
}

fn job<'a>(args: &'a DebugArgs, pod: &str, namespace: &str, target: Option<String>) -> Job<'a> {
    Job {
        args,
        pod: pod.to_string(),
        namespace: namespace.to_string(),
        target,
        voice: Voice::Stderr,
        input: None,
        policies: None,
    }
}

/// `-c`, else the pod's default container (kubectl's annotation), else
/// its first, said when there was a choice; one it has, or one sentence.
fn container_of(pod: &Pod, asked: Option<&str>, voice: &Voice) -> Result<String, Failure> {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let detail = crate::model::PodDetail::from_pod(pod);
    let names: Vec<&str> = detail.containers.iter().map(|c| c.name.as_str()).collect();
    let chosen = match asked {
        Some(asked) => asked.to_string(),
        None => {
            let spec = pod.spec.as_ref();
            let regular: Vec<String> = spec
                .map(|s| s.containers.iter().map(|c| c.name.clone()).collect())
                .unwrap_or_default();
            let annotated = pod
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get("kubectl.kubernetes.io/default-container"))
                .filter(|c| regular.contains(c));
            let chosen = annotated
                .or(regular.first())
                .cloned()
                .ok_or_else(|| fail(exit::INVALID, format!("Pod {name} has no containers.")))?;
            if annotated.is_none() && regular.len() > 1 {
                voice.say(format!(
                    "container {chosen} chosen, out of: {} (pass -c to choose)",
                    regular.join(", ")
                ));
            }
            chosen
        }
    };
    if detail.container(&chosen).is_none() {
        return Err(fail(
            exit::INVALID,
            format!(
                "Pod {name} has no container {chosen:?}; its containers are: {}.",
                names.join(", ")
            ),
        ));
    }
    Ok(chosen)
}

/// A running debug container, reused or added: one that targets
/// `args.target` (`Route::Through`), or mounts `args.mounts`
/// (`Route::Direct`: the files are at the same paths in it).
async fn debugger(
    client: &kube::Client,
    args: &DebugArgs,
    pod: &Pod,
    defaults: &Defaults,
    deadline: tokio::time::Instant,
    route: Route,
) -> Result<Reach, Failure> {
    let namespace = args.namespace.clone().unwrap_or_default();
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    let shares_processes = pod
        .spec
        .as_ref()
        .and_then(|s| s.share_process_namespace)
        .unwrap_or(false);
    if route == Route::Through && shares_processes {
        return Err(fail(
            exit::UNSUPPORTED,
            format!(
                "Container {} has no tar, and pod {pod_name} shares one process namespace, where its files are not at /proc/1/root of a debug container; copy from a container that has tar.",
                args.target.as_deref().unwrap_or_default()
            ),
        ));
    }
    let job = job(args, &pod_name, &namespace, args.target.clone());
    let image = debug_cmd::chosen_image(args, defaults, &job.voice);
    let (mut out, mut err) = (std::io::sink(), std::io::sink());
    let sinks = Sinks {
        out: &mut out,
        err: &mut err,
    };
    let finished = debug_cmd::run_job(client, &job, pod, image, defaults, sinks, deadline).await?;
    if finished.terminated() {
        return Err(fail(
            exit::START_FAILED,
            format!(
                "Debug container {} ended before the copy could use it (exit code {}).",
                finished.container, finished.exit_code
            ),
        ));
    }
    Ok(Reach {
        namespace,
        pod: pod_name,
        runs_in: finished.container,
        route,
    })
}

impl DebugArgs {
    /// What `podbay debug` would be given to add the debug container a
    /// copy goes through: an interactive shell with a terminal (so it
    /// stays up, and can be attached to later), not attached, reused.
    pub fn for_copy(args: &CpArgs, pod: &str, namespace: &str, target: Option<String>) -> Self {
        let mut debug = DebugArgs::for_pod(pod, namespace, args.timeout);
        debug.clusters.context = args.context.clone();
        debug.clusters.kubeconfig = args.kubeconfig.clone();
        debug.target = target;
        debug.image = args.image.clone();
        debug.profile = args.profile;
        debug.as_target_user = args.as_target_user;
        debug.interactive = true;
        debug.tty = true;
        debug.no_attach = true;
        debug.reuse = true;
        debug
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// A crash-looping pod whose container mounts: log at /var/log, app
    /// below it, part of data (subPath), config read-only.
    fn stopped_pod() -> crate::model::PodDetail {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-1", "namespace": "shop"},
            "spec": {"containers": [{"name": "app", "image": "x", "volumeMounts": [
                {"name": "log", "mountPath": "/var/log"},
                {"name": "app-log", "mountPath": "/var/log/app"},
                {"name": "data", "mountPath": "/data", "subPath": "web"},
                {"name": "config", "mountPath": "/etc/web", "readOnly": true},
            ]}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "app", "image": "x",
                "imageID": "", "ready": false, "restartCount": 4,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]},
        }))
        .unwrap();
        crate::model::PodDetail::from_pod(&pod)
    }

    #[test]
    fn a_stopped_containers_volumes_are_mounted_whole_or_refused() {
        let detail = stopped_pod();
        let info = detail.container("app").unwrap();
        let names = |path: &str, upload: bool| -> Result<Vec<String>, String> {
            volumes_for(&detail, info, path, upload)
                .map(|m| m.into_iter().map(|(v, _)| v).collect())
                .map_err(|f| f.sentence.to_string())
        };
        assert_eq!(
            names("/var/log/app/today.log", false),
            Ok(vec!["app-log".into()])
        );
        assert_eq!(
            names("/var/log", false),
            Ok(vec!["log".into(), "app-log".into()]),
            "what is mounted below comes along"
        );
        assert_eq!(names("/var/log/other", true), Ok(vec!["log".into()]));
        assert!(names("/data/x", false).unwrap_err().contains("subPath"));
        assert!(
            names("/", false)
                .unwrap_err()
                .contains("can be read: /var/log (volume log)")
        );
        assert_eq!(names("/etc/web/app.yaml", false), Ok(vec!["config".into()]));
        assert!(
            names("/etc/web/app.yaml", true)
                .unwrap_err()
                .contains("read-only")
        );
        let elsewhere = names("/etc/passwd", false).unwrap_err();
        assert!(
            elsewhere.contains("is not running (Waiting CrashLoopBackOff)")
                && elsewhere.contains("/var/log (volume log)"),
            "{elsewhere}"
        );
    }

    fn args(source: &str, destination: &str) -> CpArgs {
        CpArgs {
            source: source.into(),
            destination: destination.into(),
            container: None,
            namespace: None,
            context: None,
            kubeconfig: None,
            image: None,
            profile: None,
            as_target_user: Default::default(),
            timeout: Duration::from_secs(60),
            max_size: None,
            max_time: None,
            stall: Duration::from_secs(60),
        }
    }

    #[test]
    fn one_side_must_be_a_pod() {
        let Err(both) = plan(&args("a:/x", "b:/y")) else {
            panic!()
        };
        assert_eq!(both.code, codes::USAGE);
        assert!(both.sentence.as_str().contains("Both"));
        let Err(neither) = plan(&args("./a", "./b")) else {
            panic!()
        };
        assert!(neither.sentence.as_str().contains("[NAMESPACE/]POD:PATH"));
        let Err(capital) = plan(&args("payments/api-qv8lX:/var/dump", "./dump")) else {
            panic!()
        };
        assert_eq!(
            capital.sentence.as_str(),
            "No pod can be named as in payments/api-qv8lX:/var/dump: pod names are lower case. Did you mean payments/api-qv8lx:/var/dump?"
        );
    }

    #[test]
    fn uploads_name_the_item_by_the_destination_or_keep_the_local_name() {
        let Ok((_, Plan::In { dir, name, .. })) = plan(&args("Cargo.toml", "web-0:/tmp/x.toml"))
        else {
            panic!()
        };
        assert_eq!((dir.as_str(), name.as_str()), ("/tmp", "x.toml"));
        let Ok((_, Plan::In { dir, name, .. })) = plan(&args("Cargo.toml", "web-0:/tmp/")) else {
            panic!()
        };
        assert_eq!((dir.as_str(), name.as_str()), ("/tmp", "Cargo.toml"));
        let Ok((_, Plan::In { dir, name, from })) = plan(&args("-", "web-0:/srv")) else {
            panic!()
        };
        assert_eq!((dir.as_str(), name.as_str(), from), ("/srv", "", None));
        let Ok((_, Plan::In { dir, .. })) = plan(&args("Cargo.toml", "web-0:/")) else {
            panic!()
        };
        assert_eq!(dir, "/");
    }
}
