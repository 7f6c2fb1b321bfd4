//! The services view (`:svc`): kubectl's columns and ENDPOINTS, the ready
//! pods of those each Service selects in the pod list.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::app::App;
use crate::app::services::{ServicesView, endpoints};
use crate::model::human_duration;
use crate::theme::Theme;

use super::text_table;

/// The columns that give way on a narrow screen, first to go first:
/// EXTERNAL-IP (mostly `<none>`), CLUSTER-IP, then TYPE.
const GIVE_WAY: [&str; 3] = ["EXTERNAL-IP", "CLUSTER-IP", "TYPE"];

pub fn draw(frame: &mut Frame, area: Rect, app: &App, view: &ServicesView, theme: &Theme) {
    let title = format!(
        " services ({}) · ns {} · ENDPOINTS: ready pods of those it selects ",
        text_table::count(&view.list),
        app.namespaces_label()
    );
    let none = format!(" No Services in namespace {}.", app.namespaces_label());
    let Some(inner) = text_table::list_frame(
        frame,
        area,
        (&view.list, title),
        ("Service", Some(none)),
        theme,
    ) else {
        return;
    };
    let namespaces = !app.shows_one_namespace();
    let contexts = app.shows_several();
    let clusters = if contexts {
        app.cluster_states()
    } else {
        Vec::new()
    };
    let mut titles: Vec<String> = [
        "NAME",
        "TYPE",
        "CLUSTER-IP",
        "EXTERNAL-IP",
        "PORT(S)",
        "ENDPOINTS",
        "AGE",
    ]
    .map(String::from)
    .to_vec();
    if namespaces {
        titles.insert(0, "NAMESPACE".into());
    }
    if contexts {
        titles.insert(0, "CONTEXT".into());
    }
    // Whether each Service sends traffic anywhere, for its colour.
    let mut idle = Vec::with_capacity(view.list.shown_len());
    let counts = endpoints(&view.list.rows, app.pods.rows());
    let window = text_table::window(inner, &view.list);
    let mut rows: Vec<Vec<String>> = window
        .rows(&view.list)
        .map(|(i, s)| {
            let (ready, selected) = counts[i];
            idle.push(!s.selector.is_empty() && ready == 0);
            let age = s
                .created
                .map(|t| human_duration(app.now.duration_since(t)))
                .unwrap_or_else(|| "—".into());
            let endpoints = match s.selector.is_empty() {
                true => "by hand".to_string(),
                false => format!("{ready}/{selected}"),
            };
            let mut row = vec![
                s.name.clone(),
                s.kind.clone(),
                s.cluster_ip.clone(),
                s.external_text().to_string(),
                s.ports_text(),
                endpoints,
                age,
            ];
            if namespaces {
                row.insert(0, s.namespace.clone());
            }
            if contexts {
                row.insert(0, text_table::context_cell(&s.context, &clusters));
            }
            row
        })
        .collect();
    let marked: Vec<bool> = window
        .rows(&view.list)
        .map(|(_, r)| view.list.is_marked(r))
        .collect();
    let floor = &window.floor[..];
    text_table::give_way(&mut titles, &mut rows, (inner.width, floor), &GIVE_WAY);
    let style = |i: usize| match idle[i] {
        true => theme.warning,
        false => theme.text,
    };
    text_table::draw(
        frame,
        inner,
        (&titles, &rows, floor),
        (window.cursor, &marked),
        style,
        theme,
    );
}
