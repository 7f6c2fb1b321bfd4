//! `podbay man`: the manual page, in roff. The options come from the
//! command-line definitions and the keys from the default keymap, so the
//! page cannot drift from the program.

use std::io::{self, Write};

use clap::CommandFactory as _;

use crate::app::keymap::{Action, Keymap};
use crate::cli::Cli;

pub fn render(out: &mut dyn Write) -> io::Result<()> {
    let cli = Cli::command();
    let man = clap_mangen::Man::new(cli.clone());
    man.render_title(out)?;
    // No hyphenation: flags, names and exit codes read whole.
    writeln!(out, ".nh")?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    writeln!(out, ".SH DESCRIPTION")?;
    writeln!(
        out,
        "podbay lists pods live, opens one to show its containers and events, and launches \
ephemeral debug containers that target a container of the pod, so that its processes and its \
files (/proc/1/root) are visible from the debug container's tools. Sessions (attach, exec, logs, \
debug containers) open in split panes rendered by a vt100 emulator; several panes or people may \
share one, and input can be broadcast to marked panes."
    )?;
    man.render_options_section(out)?;
    man.render_subcommands_section(out)?;

    writeln!(out, ".SH KEYS")?;
    writeln!(
        out,
        "The defaults; every one can be changed in the [keys] table of config.toml."
    )?;
    let keymap = Keymap::default();
    for action in Action::ALL {
        item(out, &keymap.keys_for(action), action.description())?;
    }
    writeln!(out, ".SS Panes")?;
    writeln!(
        out,
        "Press the prefix ({}), then:",
        roff(&crate::app::PaneOptions::default().prefix.label())
    )?;
    for key in crate::ui::PANE_KEYS {
        item(out, key.keys, key.does)?;
    }

    for (name, title, after_title) in [
        ("debug", "PODBAY DEBUG", "EXIT STATUS"),
        (
            "cp",
            "PODBAY CP",
            "PODBAY CP: HOW, WHAT IS REFUSED, EXIT STATUS",
        ),
    ] {
        let Some(sub) = cli.find_subcommand(name) else {
            continue;
        };
        let usage = sub
            .clone()
            .bin_name(format!("podbay {name}"))
            .render_usage();
        writeln!(out, ".SH \"{title}\"")?;
        writeln!(out, "{}", roff(&usage.to_string()))?;
        for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            let flag = match (arg.get_short(), arg.get_long()) {
                (Some(s), Some(l)) => format!("-{s}, --{l}"),
                (None, Some(l)) => format!("--{l}"),
                (Some(s), None) => format!("-{s}"),
                (None, None) => arg.get_id().to_string().to_uppercase(),
            };
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            item(out, &flag, &help)?;
        }
        writeln!(out, ".SH \"{after_title}\"")?;
        if let Some(after) = sub.get_after_help() {
            for paragraph in after.to_string().split("\n\n") {
                writeln!(out, ".PP\n{}", roff(paragraph))?;
            }
        }
    }
    writeln!(out, ".SH FILES")?;
    writeln!(
        out,
        "config.toml, themes/*.toml, the state file and the log: \\fBpodbay --print-paths\\fR prints where they are."
    )?;
    writeln!(out, ".SH ENVIRONMENT")?;
    item(
        out,
        "KUBECONFIG",
        "Kubeconfig files, colon-separated, as kubectl reads them.",
    )?;
    item(
        out,
        "PODBAY_LOG",
        "Log filter (error, warn, info, debug, trace); the log never holds tokens or keys.",
    )?;
    writeln!(out, ".SH \"SEE ALSO\"")?;
    writeln!(out, "kubectl-debug(1), kubectl(1)")?;
    Ok(())
}

/// A tagged paragraph: `tag` in bold, then `text`.
fn item(out: &mut dyn Write, tag: &str, text: &str) -> io::Result<()> {
    writeln!(out, ".TP\n\\fB{}\\fR\n{}", roff(tag), roff(text))
}

/// `text` safe in roff: backslashes escaped, no line starting with a
/// control character, hyphens that are hyphens, and anything beyond ASCII
/// (`↑`, `…`) as a named glyph, which groff reads without preconv.
fn roff(text: &str) -> String {
    text.lines()
        .map(|line| {
            let line: String = line
                .chars()
                .map(|c| match c {
                    '\\' => "\\e".to_string(),
                    '-' => "\\-".to_string(),
                    c if c.is_ascii() => c.to_string(),
                    c => format!("\\[u{:04X}]", u32::from(c)),
                })
                .collect();
            if line.starts_with('.') || line.starts_with('\'') {
                format!("\\&{line}")
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::roff;

    #[test]
    fn roff_text_cannot_turn_into_requests() {
        assert_eq!(roff(".ns NAME"), "\\&.ns NAME");
        assert_eq!(roff("a\\b"), "a\\eb");
        assert_eq!(roff("--timeout"), "\\-\\-timeout");
        assert_eq!(roff("↑ up"), "\\[u2191] up");
    }
}
