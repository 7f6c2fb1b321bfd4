//! The nodes view (`:nodes`) and the node debug form (`d` on a node).

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::app::App;
use crate::app::nodes::{NodeDebugForm, NodesView};
use crate::app::pod_copy::CopyForm;
use crate::model::human_duration;
use crate::theme::Theme;

use super::text_table;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, view: &NodesView, theme: &Theme) {
    let title = format!(
        " nodes ({}) · PODS: those of ns {} ",
        text_table::count(&view.list),
        app.namespaces_label()
    );
    let Some(inner) =
        text_table::list_frame(frame, area, (&view.list, title), ("node", None), theme)
    else {
        return;
    };
    // Counted once a frame, in one pass over the list's rows: each
    // cluster's own (two clusters may each have a node-a1).
    let mut pods_on: std::collections::HashMap<(Option<&str>, &str), usize> =
        std::collections::HashMap::new();
    for row in app.pods.rows() {
        *pods_on
            .entry((row.context.as_deref(), &*row.node))
            .or_default() += 1;
    }
    let node_use = |n: &crate::model::node::NodeRow| {
        let cluster = app.cluster_of_tag(&n.context)?;
        app.usage_of(&cluster)?.node(&n.name)
    };
    // The taints go last: on a narrow screen they are counted first,
    // then VERSION gives way (enter on a node lists its taints whole).
    let window = text_table::window(inner, &view.list);
    let shown = || window.rows(&view.list);
    let floor = &window.floor[..];
    // kubectl top node's figures, while the metrics API is read.
    let measured = view.list.shown().any(|(_, n)| node_use(n).is_some());
    let mut rows: Vec<Vec<String>> = shown()
        .map(|(_, n)| {
            let pods = pods_on
                .get(&(n.context.as_deref(), n.name.as_str()))
                .copied()
                .unwrap_or(0);
            let age = n
                .created
                .map(|t| human_duration(app.now.duration_since(t)))
                .unwrap_or_else(|| "—".into());
            let mut row = vec![
                n.name.clone(),
                n.status.clone(),
                n.roles.clone(),
                age,
                n.version.clone(),
                pods.to_string(),
            ];
            if measured {
                row.extend(node_usage(n, node_use(n)));
            }
            row.push(if n.taints.is_empty() {
                "—".into()
            } else {
                n.taints.join(", ")
            });
            row
        })
        .collect();
    let mut titles: Vec<String> = ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "PODS"]
        .map(String::from)
        .to_vec();
    if measured {
        titles.extend(["CPU", "%CPU", "MEM", "%MEM"].map(String::from));
    }
    titles.push("TAINTS".into());
    if !text_table::fits(&text_table::widths(&titles, &rows, floor), inner.width) {
        for (row, (_, node)) in rows.iter_mut().zip(shown()) {
            let last = row.len() - 1;
            row[last] = match node.taints.len() {
                0 => "—".into(),
                1 => "1 taint".into(),
                n => format!("{n} taints"),
            };
        }
    }
    if app.shows_several() {
        titles.insert(0, "CONTEXT".into());
        let clusters = app.cluster_states();
        for (row, (_, node)) in rows.iter_mut().zip(shown()) {
            row.insert(0, text_table::context_cell(&node.context, &clusters));
        }
    }
    if !text_table::fits(&text_table::widths(&titles, &rows, floor), inner.width)
        && let Some(version) = titles.iter().position(|t| t == "VERSION")
    {
        titles.remove(version);
        for row in &mut rows {
            row.remove(version);
        }
    }
    let ready: Vec<bool> = shown().map(|(_, n)| n.ready).collect();
    let style = |i: usize| match ready[i] {
        true => theme.text,
        false => theme.warning,
    };
    text_table::draw(
        frame,
        inner,
        (&titles, &rows, floor),
        (window.cursor, &[]),
        style,
        theme,
    );
}

/// CPU, %CPU, MEM and %MEM as kubectl top node prints them: use, and its
/// share of what the node can give pods.
fn node_usage(
    node: &crate::model::node::NodeRow,
    used: Option<crate::model::usage::Use>,
) -> [String; 4] {
    use crate::model::usage::percent;
    let Some(used) = used else {
        return ["n/a", "n/a", "n/a", "n/a"].map(String::from);
    };
    let share = |p: Option<u64>| p.map_or_else(|| "n/a".into(), |p| format!("{p}%"));
    [
        used.cpu_text(),
        share(percent(
            u64::from(used.microcores),
            u64::from(node.allocatable_cpu_m) * 1000,
        )),
        used.memory_text(),
        share(percent(used.memory_bytes(), node.allocatable_memory)),
    ]
}

/// The form; `several`: the list shows several clusters, and the title
/// names the node's.
pub fn draw_form(
    frame: &mut Frame,
    area: Rect,
    (form, several): (&NodeDebugForm, bool),
    theme: &Theme,
) {
    let notes = [format!(
        "A pod in namespace {}, deleted when its last pane closes.",
        form.namespace
    )];
    let title = match several {
        true => format!(
            " A shell on node {}/{}",
            crate::model::text::sanitize(&form.cluster.context),
            form.node
        ),
        false => format!(" A shell on node {}", form.node),
    };
    super::form::draw_boxed(frame, area, form, title, &notes, "launch", theme);
}

/// The copy form (`C` on a pod).
pub fn draw_copy_form(frame: &mut Frame, area: Rect, form: &CopyForm, theme: &Theme) {
    let notes = [
        "No labels, probes or init containers: no Service sends it traffic.",
        "A distroless image has no shell: give its debug variant.",
        "A private registry's image: name a pull secret holding its credentials.",
        "The copy is deleted when its last pane closes.",
    ]
    .map(str::to_string);
    let title = format!(" Copy {}", form.pod);
    super::form::draw_boxed(frame, area, form, title, &notes, "copy", theme);
}
