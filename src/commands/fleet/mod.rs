//! `podbay debug` across many pods: the troubleshooting proposal's
//! "automation" story (`for pod in …; do kubectl debug …; done`) done at
//! once. The pods come from names, a label selector or an owner's
//! selector; each runs as `podbay debug POD` would, a few at a time, its
//! lines after its name; a summary on stderr says what became of each.

pub mod summary;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use tokio::io::AsyncReadExt;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::Semaphore;

use summary::{Outcome, Result as PodResult};

use super::clusters;
use super::debug::{self, Defaults, Failure, Job, Sinks, Voice, exit};
use super::prefix::{Prefix, Stream};
use crate::cli::{DebugArgs, DebugTarget};
use crate::model::owner::{OwnerKind, service_selector, spec_selector};
use crate::model::text::Printable;

/// Standard input given to every pod with `-i` is read whole first; more
/// than this is refused rather than held.
const LARGEST_INPUT: u64 = 64 * 1024 * 1024;

/// A pod to run in: its namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PodRef {
    pub namespace: String,
    pub name: String,
}

pub async fn run(args: DebugArgs, defaults: &Defaults) -> std::result::Result<i32, Failure> {
    refuse_what_one_terminal_cannot_do(&args)?;
    let contexts = args.contexts();
    let across = contexts.len() > 1;
    let opened = clusters::in_each(
        args.kubeconfig.as_deref(),
        &contexts,
        args.timeout,
        "Finding the pods to debug",
        |context, connection| find(&args, context, connection),
    )
    .await;
    let mut clusters = Vec::new();
    let mut pods: Vec<(usize, PodRef)> = Vec::new();
    let mut unreached = Vec::new();
    for opened in opened {
        match opened {
            Ok((cluster, found)) => {
                pods.extend(found.into_iter().map(|pod| (clusters.len(), pod)));
                clusters.push(cluster);
            }
            Err(missed) if !across => return Err(missed.failure),
            Err(missed) => unreached.push(missed),
        }
    }
    let voice = if args.json() {
        Voice::Quiet
    } else {
        Voice::Stderr
    };
    for missed in &unreached {
        voice.say(format!(
            "{} No pod of that cluster is debugged.",
            missed.sentence()
        ));
    }
    let image = debug::chosen_image(&args, defaults, &voice);
    let input = if args.interactive && !pods.is_empty() {
        Some(read_input().await?)
    } else {
        None
    };
    let within = if across {
        format!(" in {} clusters", clusters.len())
    } else {
        String::new()
    };
    if !pods.is_empty() {
        voice.say(format!(
            "debugging {} pods{within}, {} at a time (ctrl-c stops launching more)",
            pods.len(),
            args.parallel.min(pods.len().try_into().unwrap_or(u16::MAX))
        ));
    }

    let namespaces: BTreeSet<&str> = pods.iter().map(|(_, p)| p.namespace.as_str()).collect();
    let labels: Vec<String> = pods
        .iter()
        .map(|(cluster, p)| match &clusters[*cluster].context {
            Some(context) if across => format!("{context}/{}/{}", p.namespace, p.name),
            _ if namespaces.len() > 1 => format!("{}/{}", p.namespace, p.name),
            _ => p.name.clone(),
        })
        .collect();
    // Prefixes show the names as printed (a hostile one escaped).
    let shown: Vec<Printable> = labels.iter().map(Printable::from).collect();
    let width = shown.iter().map(|l| l.chars().count()).max().unwrap_or(0);

    let shared = Arc::new(Shared {
        args,
        defaults: defaults.clone(),
        clusters,
        image,
        input,
    });
    // Listening before the first pod starts, and for the whole run: a
    // ctrl-c is never lost between two waits.
    let mut interrupts = signal(SignalKind::interrupt()).ok();
    let permits = Arc::new(Semaphore::new(shared.args.parallel.into()));
    // Whose run began: after a second ctrl-c those are left running, and
    // the others were never started.
    let began: Arc<Vec<AtomicBool>> =
        Arc::new(pods.iter().map(|_| AtomicBool::new(false)).collect());
    let mut tasks = tokio::task::JoinSet::new();
    let mut index_of = HashMap::new();
    // Each pod asks for its permit once the pod before it has one (or gave
    // up): pods start in name order, whichever task the runtime polls first.
    let mut before: Option<tokio::sync::oneshot::Receiver<()>> = None;
    for (index, ((cluster, pod), label)) in pods.iter().zip(&shown).enumerate() {
        let (shared, permits, began) = (shared.clone(), permits.clone(), began.clone());
        let (cluster, pod, prefix) = (*cluster, pod.clone(), Prefix::new(label, index, width));
        let (asked, next) = tokio::sync::oneshot::channel::<()>();
        let turn = before.replace(next);
        let task = tasks.spawn(async move {
            if let Some(turn) = turn {
                let _ = turn.await;
            }
            let permit = permits.acquire_owned().await;
            drop(asked);
            // Closed by ctrl-c: this pod's turn never comes.
            let Ok(_permit) = permit else {
                return (index, PodResult::NotStarted);
            };
            began[index].store(true, Ordering::SeqCst);
            (index, shared.run_one(cluster, pod, prefix).await)
        });
        index_of.insert(task.id(), index);
    }

    let mut results: Vec<Option<PodResult>> = (0..pods.len()).map(|_| None).collect();
    let mut interrupted = 0;
    loop {
        tokio::select! {
            joined = tasks.join_next_with_id() => match joined {
                Some(Ok((_, (index, result)))) => results[index] = Some(result),
                Some(Err(e)) if e.is_panic() => {
                    if let Some(&index) = index_of.get(&e.id()) {
                        results[index] = Some(PodResult::CouldNotRun(Failure {
                            code: summary::BUG,
                            sentence: "podbay itself failed on this pod (a bug: please report it, with podbay's log).".into(),
                        }));
                    }
                }
                // Aborted by a second ctrl-c: said below.
                Some(Err(_)) => {}
                None => break,
            },
            Some(()) = async { interrupts.as_mut()?.recv().await } => {
                interrupted += 1;
                if interrupted == 1 {
                    permits.close();
                    crate::print::say(&"stopping: no more pods are started; those running go on to their end (ctrl-c again leaves them running and ends podbay).".into());
                } else {
                    tasks.abort_all();
                }
            }
        }
    }
    let outcomes: Vec<Outcome> = pods
        .into_iter()
        .zip(labels)
        .zip(results)
        .enumerate()
        .map(|(index, (((cluster, pod), label), result))| Outcome {
            label,
            context: shared.clusters[cluster].context.clone().filter(|_| across),
            namespace: pod.namespace,
            pod: pod.name,
            result: result.unwrap_or(if began[index].load(Ordering::SeqCst) {
                PodResult::Left
            } else {
                PodResult::NotStarted
            }),
        })
        .collect();
    crate::print::stderr(&summary::table(&outcomes, &unreached));
    if shared.args.json() {
        crate::print::stdout(&Printable::json(&summary::document(&outcomes, &unreached)));
    }
    Ok(summary::status(&outcomes, &unreached))
}

/// One cluster's pods to debug, with `--namespace` else its default.
async fn find(
    args: &DebugArgs,
    context: Option<String>,
    connection: crate::cluster::client::Connection,
) -> std::result::Result<(Cluster, Vec<PodRef>), Failure> {
    let namespace = args.namespace.clone().unwrap_or(connection.namespace);
    let pods = resolve(
        &connection.client,
        &args.pods,
        args.selector.as_deref(),
        args.all_namespaces,
        &namespace,
    )
    .await?;
    let cluster = Cluster {
        context,
        client: connection.client,
        server: connection.server,
        policies: debug::Policies::default(),
    };
    Ok((cluster, pods))
}

/// One cluster of the run.
struct Cluster {
    /// As named with `--context` (`None`: the kubeconfig's current one).
    context: Option<String>,
    client: kube::Client,
    server: String,
    /// Its namespaces' Pod Security, read once for all its pods.
    policies: debug::Policies,
}

/// What every pod's run shares.
struct Shared {
    args: DebugArgs,
    defaults: Defaults,
    clusters: Vec<Cluster>,
    image: String,
    input: Option<Bytes>,
}

impl Shared {
    /// One pod, as `podbay debug POD` runs it, its lines after `prefix`.
    async fn run_one(&self, cluster: usize, pod: PodRef, prefix: Prefix) -> PodResult {
        let args = &self.args;
        let cluster = &self.clusters[cluster];
        let deadline = tokio::time::Instant::now() + args.timeout;
        let voice = if args.json() {
            Voice::Quiet
        } else {
            Voice::Prefixed(prefix.clone())
        };
        let mut job = Job {
            args,
            pod: pod.name,
            namespace: pod.namespace,
            target: args.target.clone(),
            voice,
            input: self.input.clone(),
            policies: Some(&cluster.policies),
        };
        let found = match debug::get_pod(&cluster.client, &job, &cluster.server, deadline).await {
            Ok(found) => found,
            Err(failure) => return PodResult::CouldNotRun(failure),
        };
        if args.target_all {
            job.target = debug::first_container(&found);
        }
        // With -o json, stdout is the document alone.
        let out_stream = if args.json() {
            Stream::Stderr
        } else {
            Stream::Stdout
        };
        let mut out = prefix.lines(out_stream);
        let mut err = prefix.lines(Stream::Stderr);
        let sinks = Sinks {
            out: &mut out,
            err: &mut err,
        };
        let image = self.image.clone();
        match debug::run_job(
            &cluster.client,
            &job,
            &found,
            image,
            &self.defaults,
            sinks,
            deadline,
        )
        .await
        {
            // Left to run, unless it already ended (a fast failure).
            Ok(finished) if args.no_attach && !finished.terminated() => PodResult::Started {
                container: finished.container,
            },
            Ok(finished) => PodResult::Exited {
                container: finished.container,
                code: finished.exit_code,
            },
            Err(failure) => PodResult::CouldNotRun(failure),
        }
    }
}

/// A terminal is one pod's; so is `--list`.
fn refuse_what_one_terminal_cannot_do(args: &DebugArgs) -> std::result::Result<(), Failure> {
    let usage = |sentence: &str| Failure {
        code: 2,
        sentence: sentence.into(),
    };
    if args.tty {
        return Err(usage(
            "-t gives one pod your terminal; with several pods each line comes after its pod's name: drop -t (to type into many pods at once, mark them in podbay's pod list with space and press d).",
        ));
    }
    if args.list {
        return Err(usage(
            "--list lists one pod's debug containers: name one pod.",
        ));
    }
    Ok(())
}

/// `-i` with several pods: standard input, read to its end once.
async fn read_input() -> std::result::Result<Bytes, Failure> {
    let mut given = Vec::new();
    let read = tokio::io::stdin()
        .take(LARGEST_INPUT + 1)
        .read_to_end(&mut given)
        .await;
    match read {
        Ok(_) if given.len() as u64 > LARGEST_INPUT => Err(Failure {
            code: 2,
            sentence: "With several pods, -i reads standard input whole before it gives it to each, and this one is over 64 MiB: copy the file into each pod another way.".into(),
        }),
        Ok(_) => Ok(Bytes::from(given)),
        Err(e) => Err(Failure {
            code: 2,
            sentence: format!("Cannot read standard input for -i: {e}.").into(),
        }),
    }
}

/// The pods to run in, in name order, each once: `targets` (names,
/// owners, Services) and what `selector` matches.
pub(in crate::commands) async fn resolve(
    client: &kube::Client,
    targets: &[DebugTarget],
    selector: Option<&str>,
    all_namespaces: bool,
    namespace: &str,
) -> std::result::Result<Vec<PodRef>, Failure> {
    let mut pods = BTreeSet::new();
    if let Some(selector) = selector {
        let scope = if all_namespaces {
            None
        } else {
            Some(namespace)
        };
        let found = pods_matching(client, scope, selector).await?;
        if found.is_empty() {
            let place = scope.map_or("any namespace".to_string(), |ns| format!("namespace {ns}"));
            return Err(Failure {
                code: exit::NOT_FOUND,
                sentence: format!("No pods in {place} match -l {selector}.").into(),
            });
        }
        pods.extend(found);
    }
    for target in targets {
        match target {
            DebugTarget::Pod(name) => {
                pods.insert(PodRef {
                    namespace: namespace.to_string(),
                    name: name.clone(),
                });
            }
            DebugTarget::Node(node) => {
                return Err(Failure {
                    code: exit::INVALID,
                    sentence: format!(
                        "node/{node} is debugged alone: give it as the only target, without -l"
                    )
                    .into(),
                });
            }
            DebugTarget::Owner { kind, name } => {
                let selector = owner_selector(client, namespace, *kind, name).await?;
                let what = format!("{kind}/{name}");
                pods.extend(selected(client, namespace, &what, &selector).await?);
            }
            DebugTarget::Service(name) => {
                let selector = selector_of_service(client, namespace, name).await?;
                let what = format!("svc/{name}");
                pods.extend(selected(client, namespace, &what, &selector).await?);
            }
        }
    }
    Ok(pods.into_iter().collect())
}

/// The pods `what` (`deploy/web`, `svc/web`) selects; none is a failure.
async fn selected(
    client: &kube::Client,
    namespace: &str,
    what: &str,
    selector: &str,
) -> std::result::Result<Vec<PodRef>, Failure> {
    let found = pods_matching(client, Some(namespace), selector).await?;
    if found.is_empty() {
        return Err(Failure {
            code: exit::NOT_FOUND,
            sentence: format!(
                "{what} in namespace {namespace} has no pods (its selector is {selector})."
            )
            .into(),
        });
    }
    Ok(found)
}

/// Names of the pods a label selector matches, in `namespace` or all.
async fn pods_matching(
    client: &kube::Client,
    namespace: Option<&str>,
    selector: &str,
) -> std::result::Result<Vec<PodRef>, Failure> {
    let api: Api<Pod> = match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let list = crate::cluster::objects::list(&api, &ListParams::default().labels(selector))
        .await
        .map_err(|e| debug::classify(&e))?;
    Ok(list
        .into_iter()
        .filter_map(|pod| {
            Some(PodRef {
                namespace: pod.metadata.namespace.or(namespace.map(String::from))?,
                name: pod.metadata.name?,
            })
        })
        .collect())
}

/// The object `short/name` of `resource`, or the failure why not.
async fn named_object(
    client: &kube::Client,
    namespace: &str,
    resource: &ApiResource,
    short: &str,
    name: &str,
) -> std::result::Result<DynamicObject, Failure> {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, resource);
    api.get(name).await.map_err(|e| match &e {
        kube::Error::Api(status) if status.code == 404 => Failure {
            code: exit::NOT_FOUND,
            sentence: format!("{short}/{name} not found in namespace {namespace}.").into(),
        },
        _ => debug::classify(&e),
    })
}

/// The pods a Service selects, as a query: its `spec.selector` map.
async fn selector_of_service(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> std::result::Result<String, Failure> {
    let resource = ApiResource::erase::<k8s_openapi::api::core::v1::Service>(&());
    let service = named_object(client, namespace, &resource, "svc", name).await?;
    service_selector(&service.data).ok_or_else(|| Failure {
        code: exit::INVALID,
        sentence: format!(
            "svc/{name} in namespace {namespace} has no selector (its endpoints are kept by hand): name its pods or use -l."
        )
        .into(),
    })
}

/// The label selector of a workload, read as kubectl reads it
/// (`spec.selector`), as a query.
async fn owner_selector(
    client: &kube::Client,
    namespace: &str,
    kind: OwnerKind,
    name: &str,
) -> std::result::Result<String, Failure> {
    let gvk = GroupVersionKind::gvk(kind.group(), "v1", kind.kind());
    let resource = ApiResource::from_gvk_with_plural(&gvk, kind.plural());
    let object = named_object(client, namespace, &resource, kind.short(), name).await?;
    match spec_selector(&object.data) {
        Some(query) => Ok(query),
        // An empty selector would pick every pod of the namespace.
        None => Err(Failure {
            code: exit::INVALID,
            sentence: format!(
                "{kind}/{name} in namespace {namespace} has no usable spec.selector; name its pods or use -l."
            )
            .into(),
        }),
    }
}
