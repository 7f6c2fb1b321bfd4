//! A workload view (`:deploy`, `:sts`, `:ds`, `:rs`, `:job`, `:cj`):
//! kubectl's columns for the kind, a row short of its replicas in orange,
//! a failed Job in red.

use ratatui::Frame;
use ratatui::layout::Rect;

use crate::app::App;
use crate::app::workloads::WorkloadsView;
use crate::model::human_duration;
use crate::model::workload::Standing;
use crate::theme::Theme;

use super::text_table;

/// The columns that give way on a narrow screen, first to go first.
const GIVE_WAY: [&str; 6] = [
    "NODE SELECTOR",
    "TIMEZONE",
    "UP-TO-DATE",
    "CURRENT",
    "SUSPEND",
    "NAMESPACE",
];

pub fn draw(frame: &mut Frame, area: Rect, app: &App, view: &WorkloadsView, theme: &Theme) {
    let plural = view.kind.plural();
    let title = format!(
        " {plural} ({}) · ns {} · enter: its pods ",
        text_table::count(&view.list),
        app.namespaces_label()
    );
    let none = format!(" No {plural} in namespace {}.", app.namespaces_label());
    let says = (view.kind.kind(), Some(none));
    let Some(inner) = text_table::list_frame(frame, area, (&view.list, title), says, theme) else {
        return;
    };
    let namespaces = !app.shows_one_namespace();
    let contexts = app.shows_several();
    let clusters = if contexts {
        app.cluster_states()
    } else {
        Vec::new()
    };
    let mut titles = vec!["NAME".to_string()];
    titles.extend(view.kind.columns().iter().map(|c| c.to_string()));
    titles.push("AGE".into());
    if namespaces {
        titles.insert(0, "NAMESPACE".into());
    }
    if contexts {
        titles.insert(0, "CONTEXT".into());
    }
    let window = text_table::window(inner, &view.list);
    let shown = || window.rows(&view.list);
    let mut rows: Vec<Vec<String>> = shown()
        .map(|(_, w)| {
            let mut row = vec![w.name.clone()];
            row.extend(w.texts(app.now));
            row.push(
                w.created
                    .map(|t| human_duration(app.now.duration_since(t)))
                    .unwrap_or_else(|| "—".into()),
            );
            if namespaces {
                row.insert(0, w.namespace.clone());
            }
            if contexts {
                row.insert(0, text_table::context_cell(&w.context, &clusters));
            }
            row
        })
        .collect();
    let marked: Vec<bool> = shown().map(|(_, r)| view.list.is_marked(r)).collect();
    let floor = &window.floor[..];
    text_table::give_way(&mut titles, &mut rows, (inner.width, floor), &GIVE_WAY);
    let standing: Vec<Standing> = shown().map(|(_, w)| w.standing).collect();
    let style = |i: usize| match standing[i] {
        Standing::Fine => theme.text,
        Standing::Short => theme.warning,
        Standing::Failed => theme.error,
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
