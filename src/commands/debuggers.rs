//! `podbay debuggers`: every debug container of the pods in a namespace,
//! or in all, with its state, age, whether it holds a shell and who added
//! it (one listing with `podbay debug POD --list`).

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;

use super::debug::{Failure, exit, fail};
use crate::cli::{DebuggersAction, DebuggersArgs, StopDebuggersArgs};
use crate::cluster::deadline::Deadline;
use crate::model::debuggers;
use crate::model::text::Printable;

/// How long a listing may take: pages of a large cluster, not a stall.
const LIST_WITHIN: std::time::Duration = std::time::Duration::from_secs(60);

/// Lists (exit 0), or stops; a request the server refuses is its sentence.
pub async fn run(args: DebuggersArgs) -> Result<i32, Failure> {
    if let Some(DebuggersAction::Stop(mut stop)) = args.action {
        // `podbay debuggers -n NS --context C stop …` means the same as
        // giving them after `stop`.
        stop.kubeconfig = stop.kubeconfig.or(args.clusters.kubeconfig);
        stop.context = stop.context.or(args.clusters.context);
        stop.namespace = stop.namespace.or(args.namespace);
        if crate::cli::contexts(stop.context.as_deref()).len() > 1 {
            return Err(fail(
                exit::USAGE,
                "podbay debuggers stop ends debug containers of one pod in one cluster: name one context.",
            ));
        }
        return run_stop(stop).await;
    }
    let contexts = crate::cli::contexts(args.clusters.context.as_deref());
    if contexts.len() > 1 {
        return list_across(&args, &contexts).await;
    }
    let connection = super::connect(
        args.clusters.kubeconfig.as_deref(),
        args.clusters.context.as_deref(),
    )
    .await?;
    let namespace =
        (!args.all_namespaces).then(|| args.namespace.clone().unwrap_or(connection.namespace));
    let pods = super::list_pods(
        connection.client.clone(),
        namespace.as_deref(),
        args.selector.as_deref(),
    )
    .await?;
    let found = debuggers::of_pods(&pods);
    if args.json() {
        let pods: Vec<&Pod> = pods.iter().collect();
        crate::print::stdout(&Printable::json(&debuggers::json(&found, &pods)));
        return Ok(0);
    }
    if found.is_empty() {
        let place = match &namespace {
            Some(ns) => format!("namespace {ns}"),
            None => "any namespace".to_string(),
        };
        crate::print::say(&format!("No debug containers in {place}.").into());
        return Ok(0);
    }
    let scope = match namespace {
        Some(_) => debuggers::Scope::OneNamespace,
        None => debuggers::Scope::AllNamespaces,
    };
    let rows = debuggers::table(&found, jiff::Timestamp::now(), scope);
    crate::print::stdout(&Printable::table(&rows));
    Ok(0)
}

/// `--context a,b`: every cluster's debuggers in one listing, CONTEXT
/// first. The clusters are asked at once; one that cannot be listed is
/// said on stderr, the others are shown, and the status is its failure's.
async fn list_across(args: &DebuggersArgs, contexts: &[Option<String>]) -> Result<i32, Failure> {
    let listed = super::clusters::in_each(
        args.clusters.kubeconfig.as_deref(),
        contexts,
        super::LIST_WITHIN,
        "Listing the pods",
        |_, connection| async move {
            let namespace = (!args.all_namespaces)
                .then(|| args.namespace.clone().unwrap_or(connection.namespace));
            super::list_pods(
                connection.client,
                namespace.as_deref(),
                args.selector.as_deref(),
            )
            .await
        },
    )
    .await;
    let now = jiff::Timestamp::now();
    let mut first_failure: Option<Failure> = None;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut documents = Vec::new();
    for (context, listed) in contexts.iter().zip(listed) {
        let context = context.as_deref().unwrap_or_default();
        let pods = match listed {
            Ok(pods) => pods,
            Err(missed) => {
                crate::print::say(&missed.sentence().into());
                first_failure.get_or_insert(missed.failure);
                continue;
            }
        };
        let found = debuggers::of_pods(&pods);
        if args.json() {
            let pods: Vec<&Pod> = pods.iter().collect();
            if let serde_json::Value::Array(items) = debuggers::json(&found, &pods) {
                documents.extend(items.into_iter().map(|mut item| {
                    item["context"] = context.into();
                    item
                }));
            }
            continue;
        }
        // Each cluster has its own default namespace: NAMESPACE is shown.
        let table = debuggers::table(&found, now, debuggers::Scope::AllNamespaces);
        for (index, row) in table.into_iter().enumerate() {
            let first = if index > 0 {
                context.to_string()
            } else if rows.is_empty() {
                "CONTEXT".to_string()
            } else {
                continue;
            };
            rows.push(std::iter::once(first).chain(row).collect());
        }
    }
    if args.json() {
        crate::print::stdout(&Printable::json(&serde_json::Value::Array(documents)));
    } else if rows.len() > 1 {
        crate::print::stdout(&Printable::table(&rows));
    } else if first_failure.is_none() {
        crate::print::say(&"No debug containers in any of those clusters.".into());
    }
    Ok(first_failure.map_or(0, |failure| failure.code))
}

/// `podbay debuggers stop`: each chosen debugger ended, one line each;
/// the first failure's code, after trying them all.
async fn run_stop(args: StopDebuggersArgs) -> Result<i32, Failure> {
    use crate::engine::debuggers::stop;
    let connection = super::connect(args.kubeconfig.as_deref(), args.context.as_deref()).await?;
    let namespace = args.namespace.clone().unwrap_or(connection.namespace);
    let client = connection.client;
    let names: Vec<String> = if args.containers.is_empty() {
        let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
        let pod = Deadline::none()
            .within(Some(LIST_WITHIN))
            .bound(crate::cluster::objects::get(&pods, &args.pod))
            .await
            .map_err(|why| {
                fail(
                    exit::TIMEOUT,
                    format!(
                        "The server did not answer for pod {namespace}/{} ({why}).",
                        args.pod
                    ),
                )
            })?
            .map_err(|e| super::debug::classify(&e))?;
        let now = jiff::Timestamp::now();
        let chosen: Vec<String> = debuggers::of_pod(&pod)
            .into_iter()
            .filter(|d| d.state.is_running())
            .filter(|d| match args.idle {
                Some(idle) => d
                    .started
                    .is_some_and(|t| now.duration_since(t).unsigned_abs() >= idle),
                None => true,
            })
            .map(|d| d.name)
            .collect();
        if chosen.is_empty() {
            let which = if args.idle.is_some() { "idle " } else { "" };
            crate::print::say(
                &format!(
                    "Pod {namespace}/{} has no {which}running debug containers.",
                    args.pod
                )
                .into(),
            );
            return Ok(0);
        }
        chosen
    } else {
        args.containers.clone()
    };
    let mut first_failure: Option<Failure> = None;
    for name in names {
        let at = format!("{name} in pod {namespace}/{}", args.pod);
        match stop(&client, &namespace, &args.pod, &name).await {
            Ok(stopped) => crate::print::say(&stopped.sentence(&at).into()),
            Err(failure) => {
                crate::print::say(&failure.sentence);
                first_failure.get_or_insert(failure);
            }
        }
    }
    match first_failure {
        Some(failure) => Ok(failure.code),
        None => Ok(0),
    }
}
