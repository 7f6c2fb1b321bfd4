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
use nix::sys::signal::Signal;
use tokio::io::AsyncReadExt;
use tokio::sync::Semaphore;

use futures::StreamExt;
use summary::{Outcome, Result as PodResult, Unreached};

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
    let args = Arc::new(args);
    let contexts = args.contexts();
    let across = contexts.len() > 1;
    clusters::refuse_one_server_twice(args.clusters.kubeconfig.as_deref(), &contexts)?;
    let voice = if args.json() {
        Voice::Quiet
    } else {
        Voice::Stderr
    };
    let find_in = |context, connection| find(&args, context, connection);
    // Each cluster's pods start as soon as it names them: one that is slow
    // or stalls holds back none of the others.
    let mut resolving = clusters::each_as_it_answers(
        args.clusters.kubeconfig.as_deref(),
        &contexts,
        args.timeout,
        "Finding the pods to debug",
        &find_in,
    );
    let mut answered = vec![false; contexts.len()];
    // Listening before the first pod starts, and for the whole run: no
    // signal is lost between two waits. ctrl-c stops launching, a second
    // leaves; SIGTERM (`timeout`, a CI job's end), SIGHUP or SIGQUIT leave
    // at once, and what ran is still said.
    let mut stops = crate::tty::stops();
    let mut terminated = None;
    let mut fleet = Fleet::new(args.clone(), across);
    // What every pod's run shares: made once the first pods are known.
    let mut shared: Option<Arc<Shared>> = None;
    let mut unreached: Vec<(usize, Unreached)> = Vec::new();
    let mut interrupted = 0;
    while !(resolving.is_empty() && fleet.tasks.is_empty()) {
        tokio::select! {
            Some((position, answer)) = resolving.next(), if !resolving.is_empty() => {
                answered[position] = true;
                match answer {
                    Ok((cluster, pods)) => {
                        let shared = match &shared {
                            Some(shared) => shared.clone(),
                            None => {
                                let first = share(&args, defaults, &voice, &mut stops).await?;
                                shared.insert(first).clone()
                            }
                        };
                        fleet.launch((&shared, &voice), position, cluster, pods);
                    }
                    Err(missed) if !across => return Err(missed.failure),
                    Err(missed) => {
                        voice.say(format!("{} No pod of that cluster is debugged.", missed.sentence()));
                        unreached.push((position, missed));
                    }
                }
            },
            Some(joined) = fleet.tasks.join_next_with_id(), if !fleet.tasks.is_empty() => {
                fleet.joined(joined);
            },
            signal = stops.next() => match Signal::try_from(signal) {
                Ok(Signal::SIGINT) if terminated.is_none() => {
                    interrupted += 1;
                    if interrupted == 1 {
                        fleet.permits.close();
                        resolving.clear();
                        unreached.extend(not_answered(&contexts, &answered, "ctrl-c"));
                        crate::print::say(&"stopping: no more pods are started; those running go on to their end (ctrl-c again leaves them running and ends podbay).".into());
                    } else {
                        fleet.tasks.abort_all();
                    }
                }
                _ => {
                    let name = signal_name(signal);
                    terminated = Some(signal);
                    crate::print::say(&format!("stopping ({name}): no more pods are started; those running are left running.").into());
                    fleet.permits.close();
                    if interrupted == 0 {
                        resolving.clear();
                        unreached.extend(not_answered(&contexts, &answered, name));
                    }
                    fleet.tasks.abort_all();
                }
            },
        }
    }
    unreached.sort_by_key(|(position, _)| *position);
    let unreached: Vec<Unreached> = unreached.into_iter().map(|(_, u)| u).collect();
    let outcomes = fleet.outcomes();
    crate::print::stderr(&summary::table(&outcomes, &unreached));
    if args.json() {
        crate::print::stdout(&Printable::json(&summary::document(&outcomes, &unreached)));
    }
    Ok(match terminated {
        // As a shell reports the signal.
        Some(signal) => 128 + signal,
        None => summary::status(&outcomes, &unreached),
    })
}

/// What every pod's run shares, made when the first cluster has named its
/// pods: the image is said then, and `-i`'s input read then (a signal
/// still ends podbay while it is read).
async fn share(
    args: &Arc<DebugArgs>,
    defaults: &Defaults,
    voice: &Voice,
    stops: &mut crate::tty::Stops,
) -> std::result::Result<Arc<Shared>, Failure> {
    let image = debug::chosen_image(args, defaults, voice);
    let input = if args.interactive {
        tokio::select! {
            read = read_input() => Some(read?),
            signal = stops.next() => {
                return Err(Failure {
                    code: 128 + signal,
                    sentence: format!("Stopped ({}) while -i read standard input: nothing was run.", signal_name(signal)).into(),
                });
            }
        }
    } else {
        None
    };
    Ok(Arc::new(Shared {
        args: args.clone(),
        defaults: defaults.clone(),
        image,
        input,
    }))
}

/// The clusters still being asked for their pods when `stop` came.
fn not_answered(
    contexts: &[Option<String>],
    answered: &[bool],
    stop: &str,
) -> Vec<(usize, Unreached)> {
    let stopped = |context: &Option<String>| Unreached {
        context: context.clone().unwrap_or_default(),
        failure: Failure {
            code: summary::INTERRUPTED,
            sentence: format!("Stopped ({stop}) before this cluster's pods were found.").into(),
        },
    };
    contexts
        .iter()
        .zip(answered)
        .enumerate()
        .filter(|(_, (_, answered))| !**answered)
        .map(|(position, (context, _))| (position, stopped(context)))
        .collect()
}

/// `SIGTERM` for 15, as the summary and the sentences name a signal.
fn signal_name(number: i32) -> &'static str {
    Signal::try_from(number).map_or("a signal", Signal::as_str)
}

/// One pod of the run, as launched.
struct Launched {
    /// Its cluster's place in `--context`, for the summary's order.
    position: usize,
    context: Option<String>,
    pod: PodRef,
    label: String,
    /// Its run began: after a second ctrl-c it is left running.
    began: Arc<AtomicBool>,
    result: Option<PodResult>,
}

/// The pods launched so far, a few at a time, in order.
struct Fleet {
    args: Arc<DebugArgs>,
    across: bool,
    permits: Arc<Semaphore>,
    tasks: tokio::task::JoinSet<(usize, PodResult)>,
    index_of: HashMap<tokio::task::Id, usize>,
    pods: Vec<Launched>,
    /// Each pod asks for its permit once the pod before it has one (or
    /// gave up): pods start in order, whichever task the runtime polls first.
    before: Option<tokio::sync::oneshot::Receiver<()>>,
    /// The widest label so far, so that prefixes line up.
    width: usize,
}

impl Fleet {
    fn new(args: Arc<DebugArgs>, across: bool) -> Self {
        Fleet {
            permits: Arc::new(Semaphore::new(args.parallel.into())),
            args,
            across,
            tasks: tokio::task::JoinSet::new(),
            index_of: HashMap::new(),
            pods: Vec::new(),
            before: None,
            width: 0,
        }
    }

    /// Starts `found`, the pods of the cluster at `position`.
    fn launch(
        &mut self,
        (shared, voice): (&Arc<Shared>, &Voice),
        position: usize,
        cluster: Cluster,
        found: Vec<PodRef>,
    ) {
        let at_a_time = self
            .args
            .parallel
            .min(found.len().try_into().unwrap_or(u16::MAX));
        let context = cluster.context.clone().filter(|_| self.across);
        voice.say(match &context {
            Some(context) => format!(
                "{context}: debugging {} pods, {} at a time in all clusters (ctrl-c stops launching more)",
                found.len(),
                self.args.parallel
            ),
            None => format!(
                "debugging {} pods, {at_a_time} at a time (ctrl-c stops launching more)",
                found.len()
            ),
        });
        let namespaces: BTreeSet<&str> = found.iter().map(|p| p.namespace.as_str()).collect();
        let labels: Vec<String> = found
            .iter()
            .map(|p| match &context {
                Some(context) => format!("{context}/{}/{}", p.namespace, p.name),
                None if namespaces.len() > 1 => format!("{}/{}", p.namespace, p.name),
                None => p.name.clone(),
            })
            .collect();
        // Prefixes show the names as printed (a hostile one escaped).
        let shown: Vec<Printable> = labels.iter().map(Printable::from).collect();
        self.width = shown
            .iter()
            .map(|l| l.chars().count())
            .fold(self.width, usize::max);
        let cluster = Arc::new(cluster);
        for ((pod, label), shown) in found.into_iter().zip(labels).zip(&shown) {
            let index = self.pods.len();
            let began = Arc::new(AtomicBool::new(false));
            let (shared, permits) = (shared.clone(), self.permits.clone());
            let (cluster, prefix) = (cluster.clone(), Prefix::new(shown, index, self.width));
            let (run_pod, run_began) = (pod.clone(), began.clone());
            let (asked, next) = tokio::sync::oneshot::channel::<()>();
            let turn = self.before.replace(next);
            let task = self.tasks.spawn(async move {
                if let Some(turn) = turn {
                    let _ = turn.await;
                }
                let permit = permits.acquire_owned().await;
                drop(asked);
                // Closed by ctrl-c: this pod's turn never comes.
                let Ok(_permit) = permit else {
                    return (index, PodResult::NotStarted);
                };
                run_began.store(true, Ordering::SeqCst);
                (index, shared.run_one(&cluster, run_pod, prefix).await)
            });
            self.index_of.insert(task.id(), index);
            self.pods.push(Launched {
                position,
                context: context.clone(),
                pod,
                label,
                began,
                result: None,
            });
        }
    }

    fn joined(
        &mut self,
        joined: std::result::Result<(tokio::task::Id, (usize, PodResult)), tokio::task::JoinError>,
    ) {
        match joined {
            Ok((_, (index, result))) => self.pods[index].result = Some(result),
            Err(e) if e.is_panic() => {
                if let Some(&index) = self.index_of.get(&e.id()) {
                    self.pods[index].result = Some(PodResult::CouldNotRun(Failure {
                        code: summary::BUG,
                        sentence: "podbay itself failed on this pod (a bug: please report it, with podbay's log).".into(),
                    }));
                }
            }
            // Aborted by a second ctrl-c: said in the summary.
            Err(_) => {}
        }
    }

    /// What became of each pod, in the order of `--context`, then of names.
    fn outcomes(self) -> Vec<Outcome> {
        let mut pods = self.pods;
        pods.sort_by_key(|p| p.position);
        pods.into_iter()
            .map(|p| Outcome {
                label: p.label,
                context: p.context,
                namespace: p.pod.namespace,
                pod: p.pod.name,
                result: p.result.unwrap_or(if p.began.load(Ordering::SeqCst) {
                    PodResult::Left
                } else {
                    PodResult::NotStarted
                }),
            })
            .collect()
    }
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
    args: Arc<DebugArgs>,
    defaults: Defaults,
    image: String,
    input: Option<Bytes>,
}

impl Shared {
    /// One pod, as `podbay debug POD` runs it, its lines after `prefix`.
    async fn run_one(&self, cluster: &Cluster, pod: PodRef, prefix: Prefix) -> PodResult {
        let args = &*self.args;
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
