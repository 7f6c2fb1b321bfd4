//! The launcher for every marked pod: the shared fields, then each pod
//! with what `enter` will do there, then what will be sent.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::launcher::{foot, preview_rows};
use crate::app::fleet::{FleetForm, Plan};
use crate::theme::Theme;

pub fn draw(frame: &mut Frame, area: Rect, form: &FleetForm, theme: &Theme) {
    let launcher = &form.launcher;
    let plans = form.plans();
    let mut lines = vec![
        Line::from(Span::styled(
            format!(" Debug container in {} pods", form.pods.len()),
            theme.title,
        )),
        Line::default(),
    ];
    lines.extend(super::form::field_lines(launcher, theme));
    lines.push(Line::default());

    let spread = form
        .pods
        .iter()
        .map(|p| &p.key.namespace)
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    let label = |key: &crate::model::PodKey| {
        if spread {
            key.to_string()
        } else {
            key.name.to_string()
        }
    };
    let width_of_labels = form
        .pods
        .iter()
        .map(|p| label(&p.key).chars().count())
        .max()
        .unwrap_or(0);
    let mut pod_lines = Vec::new();
    let (mut launching, mut attaching, mut refused) = (0, 0, 0);
    match &plans {
        Some(plans) => {
            for (key, plan) in plans {
                let (mark, words, style) = match plan {
                    Plan::Launch(spec) => {
                        launching += 1;
                        let target = spec
                            .target
                            .as_deref()
                            .map_or("no target".to_string(), |t| format!("target {t}"));
                        (
                            "✓",
                            format!("launch ({target}, profile {})", spec.profile),
                            theme.text,
                        )
                    }
                    Plan::Reattach(name) => {
                        attaching += 1;
                        (
                            "↺",
                            format!("attach to {name}, which runs this image on this target"),
                            theme.text,
                        )
                    }
                    Plan::Refused(why) => {
                        refused += 1;
                        ("✗", why.clone(), theme.error)
                    }
                };
                pod_lines.push(Line::from(vec![
                    Span::styled(format!(" {mark} {:<width_of_labels$}  ", label(key)), style),
                    Span::styled(words, theme.dim),
                ]));
            }
        }
        None => {
            for pod in &form.pods {
                pod_lines.push(Line::from(Span::styled(
                    format!("   {}", label(&pod.key)),
                    theme.dim,
                )));
            }
        }
    }
    let summary = match &plans {
        Some(_) if refused > 0 => {
            format!(
                " {launching} launch, {attaching} attach, {refused} cannot (why is beside each):"
            )
        }
        Some(_) => format!(" {launching} launch, {attaching} attach:"),
        None => " The pods:".to_string(),
    };
    lines.push(Line::from(Span::styled(summary, theme.dim)));

    let spec_error = launcher.spec(form.common()).err();
    let mut after = Vec::new();
    if let Some(error) = launcher.error.as_deref().or(spec_error.as_deref()) {
        after.push(Line::from(Span::styled(format!(" {error}"), theme.error)));
    }
    let first_launch = plans.as_ref().and_then(|plans| {
        plans.iter().find_map(|(key, p)| match p {
            Plan::Launch(spec) => Some((key, spec)),
            _ => None,
        })
    });
    let preview = first_launch.map(|(key, spec)| {
        after.push(Line::from(Span::styled(
            format!(
                " What will be sent to {} (to each alike, with its own target; ephemeral containers can never be removed):",
                label(key)
            ),
            theme.dim,
        )));
        format!(
            " {}",
            serde_json::to_string(&spec.container()).unwrap_or_default()
        )
    });
    let verb = match (launching, attaching) {
        (0, 0) => "launch".to_string(),
        (n, 0) => format!("launch in {n}, tiled, typing to all"),
        (0, m) => format!("attach in {m}, tiled, typing to all"),
        (n, m) => format!("launch in {n}, attach in {m}, tiled"),
    };
    let foot = foot(&verb, theme);

    let width = area.width.min(100);
    let inner = usize::from(width.saturating_sub(2));
    let wrap = |lines: &[Line]| -> Vec<Line> {
        lines
            .iter()
            .flat_map(|l| super::wrap(l, inner))
            .collect::<Vec<_>>()
    };
    let mut rows = wrap(&lines);
    let after_rows = wrap(&after);
    let foot_rows = wrap(&foot);
    let height = usize::from(area.height.saturating_sub(2));
    // The pods get what is left after the form and the foot, at least
    // two rows (one of them saying how many more); the preview the rest.
    let fixed = rows.len() + after_rows.len() + foot_rows.len();
    let pod_room = height.saturating_sub(fixed + 1).max(2);
    if pod_lines.len() > pod_room {
        let more = pod_lines.len() - (pod_room - 1);
        pod_lines.truncate(pod_room - 1);
        pod_lines.push(Line::from(Span::styled(
            format!(" … and {more} more"),
            theme.dim,
        )));
    }
    rows.extend(wrap(&pod_lines));
    rows.extend(after_rows);
    if let Some(preview) = preview {
        let room = height.saturating_sub(rows.len() + foot_rows.len()).max(1);
        rows.extend(
            preview_rows(&preview, inner, room)
                .into_iter()
                .map(|row| Line::from(Span::styled(row, theme.text))),
        );
    }
    rows.extend(foot_rows);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border)
        .title(Span::styled(" launch in marked pods ", theme.title));
    let area = super::centered(area, width, rows.len() as u16 + 2);
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(rows).block(block), area);
}
