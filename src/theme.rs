//! Colour themes: `themes/*.toml` embedded in the binary, overridden by a
//! file of the same name in the user's themes directory. `NO_COLOR` keeps
//! only bold/reverse so the UI stays usable without colour.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

const BUILT_IN: [(&str, &str); 3] = [
    ("dark", include_str!("../themes/dark.toml")),
    ("light", include_str!("../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../themes/high-contrast.toml"),
    ),
];

pub const DEFAULT_THEME: &str = "dark";

/// Every style the UI uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub text: Style,
    pub dim: Style,
    pub title: Style,
    pub header: Style,
    pub border: Style,
    pub selected: Style,
    pub matched: Style,
    pub good: Style,
    pub pending: Style,
    pub failing: Style,
    pub done: Style,
    pub status_bar: Style,
    pub key_hint: Style,
    pub live: Style,
    pub warning: Style,
    pub error: Style,
    pub debug: Style,
    /// Standard error in a pane whose container has no tty (only its
    /// foreground is used); a theme without it gets a salmon red.
    pub stderr: Style,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ThemeError {
    #[error(
        "No theme named {name:?}; built-in themes are dark, light and high-contrast (or add {path})."
    )]
    Unknown { name: String, path: String },
    #[error("Theme file {file}, line {line}: {message}.")]
    Invalid {
        file: String,
        line: usize,
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    styles: BTreeMap<String, StyleSpec>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct StyleSpec {
    fg: Option<String>,
    bg: Option<String>,
    #[serde(default)]
    bold: bool,
    #[serde(default)]
    italic: bool,
    #[serde(default)]
    underline: bool,
    #[serde(default)]
    reversed: bool,
    #[serde(default)]
    dim: bool,
}

impl Theme {
    /// Loads `name`: the user's `<themes_dir>/<name>.toml` if present, else the built-in one.
    pub fn load(
        name: &str,
        themes_dir: Option<&Path>,
        no_color: bool,
    ) -> Result<Theme, ThemeError> {
        let user_file = themes_dir.map(|d| d.join(format!("{name}.toml")));
        let (file, text) = match user_file.as_ref().filter(|p| p.exists()) {
            Some(path) => {
                let file = path.display().to_string();
                let bytes = crate::local::read_state(path, crate::local::STATE_MOST_BYTES)
                    .map_err(|e| e.to_string())
                    .and_then(|bytes| bytes.ok_or_else(|| "it is gone".to_string()))
                    .map_err(|message| ThemeError::Invalid {
                        file: file.clone(),
                        line: 0,
                        message,
                    })?;
                let text = crate::model::text::text_of(&bytes)
                    .map_err(|(line, message)| ThemeError::Invalid {
                        file: file.clone(),
                        line,
                        message,
                    })?
                    .to_string();
                (file, text)
            }
            None => match BUILT_IN.iter().find(|(n, _)| *n == name) {
                Some((n, text)) => (format!("themes/{n}.toml (built in)"), text.to_string()),
                None => {
                    return Err(ThemeError::Unknown {
                        name: name.to_string(),
                        path: user_file
                            .unwrap_or_else(|| PathBuf::from(format!("{name}.toml")))
                            .display()
                            .to_string(),
                    });
                }
            },
        };
        Theme::parse(&text, &file, no_color)
    }

    /// Parses theme TOML; `file` names it in errors.
    pub fn parse(text: &str, file: &str, no_color: bool) -> Result<Theme, ThemeError> {
        let invalid = |line: usize, message: String| ThemeError::Invalid {
            file: file.to_string(),
            line,
            message,
        };
        let parsed: ThemeFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(0, |s| {
                text[..s.start.min(text.len())].lines().count().max(1)
            });
            invalid(line, e.message().trim_end_matches('.').to_string())
        })?;
        let line_of = |key: &str| {
            text.lines()
                .position(|l| l.trim_start().starts_with(key))
                .map_or(0, |i| i + 1)
        };
        let style = |key: &str| -> Result<Style, ThemeError> {
            let spec = parsed.styles.get(key);
            let Some(spec) = spec else {
                return Err(invalid(0, format!("missing style {key:?} in [styles]")));
            };
            spec.to_style(no_color)
                .map_err(|m| invalid(line_of(key), format!("style {key:?}: {m}")))
        };
        Ok(Theme {
            text: style("text")?,
            dim: style("dim")?,
            title: style("title")?,
            header: style("header")?,
            border: style("border")?,
            selected: style("selected")?.add_modifier(if no_color {
                Modifier::REVERSED
            } else {
                Modifier::empty()
            }),
            matched: style("matched")?.add_modifier(if no_color {
                Modifier::UNDERLINED
            } else {
                Modifier::empty()
            }),
            good: style("good")?,
            pending: style("pending")?,
            failing: style("failing")?,
            done: style("done")?,
            status_bar: style("status_bar")?.add_modifier(if no_color {
                Modifier::REVERSED
            } else {
                Modifier::empty()
            }),
            key_hint: style("key_hint")?,
            live: style("live")?,
            warning: style("warning")?,
            error: style("error")?.add_modifier(if no_color {
                Modifier::REVERSED
            } else {
                Modifier::empty()
            }),
            debug: style("debug")?,
            stderr: match parsed.styles.contains_key("stderr") {
                true => style("stderr")?,
                false if no_color => Style::default(),
                false => Style::default().fg(Color::Indexed(203)),
            },
        })
    }

    /// The names of the built-in themes.
    pub fn built_in() -> impl Iterator<Item = &'static str> {
        BUILT_IN.iter().map(|(n, _)| *n)
    }
}

impl Default for Theme {
    fn default() -> Self {
        Theme::parse(BUILT_IN[0].1, "themes/dark.toml", false)
            .unwrap_or_else(|_| unreachable_theme())
    }
}

impl Theme {
    /// The SGR parameters of standard error's colour, for a grid
    /// (`38;5;203`); `39` (the default colour) when it has none.
    pub fn stderr_sgr(&self) -> String {
        match self.stderr.fg {
            Some(Color::Indexed(i)) => format!("38;5;{i}"),
            Some(Color::Rgb(r, g, b)) => format!("38;2;{r};{g};{b}"),
            Some(Color::Black) => "30".into(),
            Some(Color::Red) => "31".into(),
            Some(Color::Green) => "32".into(),
            Some(Color::Yellow) => "33".into(),
            Some(Color::Blue) => "34".into(),
            Some(Color::Magenta) => "35".into(),
            Some(Color::Cyan) => "36".into(),
            Some(Color::Gray) => "37".into(),
            Some(Color::DarkGray) => "90".into(),
            Some(Color::LightRed) => "91".into(),
            Some(Color::LightGreen) => "92".into(),
            Some(Color::LightYellow) => "93".into(),
            Some(Color::LightBlue) => "94".into(),
            Some(Color::LightMagenta) => "95".into(),
            Some(Color::LightCyan) => "96".into(),
            Some(Color::White) => "97".into(),
            Some(Color::Reset) | None => "39".into(),
        }
    }
}

/// Only reached if the embedded default theme were broken, which a unit
/// test rules out; plain styles keep the UI usable regardless.
fn unreachable_theme() -> Theme {
    let s = Style::default();
    Theme {
        text: s,
        dim: s,
        title: s,
        header: s,
        border: s,
        selected: s.add_modifier(Modifier::REVERSED),
        matched: s.add_modifier(Modifier::UNDERLINED),
        good: s,
        pending: s,
        failing: s,
        done: s,
        status_bar: s.add_modifier(Modifier::REVERSED),
        key_hint: s,
        live: s,
        warning: s,
        error: s,
        debug: s,
        stderr: s,
    }
}

impl StyleSpec {
    fn to_style(&self, no_color: bool) -> Result<Style, String> {
        let mut style = Style::default();
        if !no_color {
            if let Some(fg) = &self.fg {
                style = style.fg(parse_color(fg)?);
            }
            if let Some(bg) = &self.bg {
                style = style.bg(parse_color(bg)?);
            }
        }
        let flags = [
            (self.bold, Modifier::BOLD),
            (self.italic, Modifier::ITALIC),
            (self.underline, Modifier::UNDERLINED),
            (self.reversed, Modifier::REVERSED),
            (self.dim, Modifier::DIM),
        ];
        for (on, modifier) in flags {
            if on {
                style = style.add_modifier(modifier);
            }
        }
        Ok(style)
    }
}

fn parse_color(text: &str) -> Result<Color, String> {
    Color::from_str(text)
        .map_err(|_| format!("{text:?} is not a colour (use a name, \"#rrggbb\" or \"0\"–\"255\")"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_theme_parses() {
        for name in Theme::built_in() {
            Theme::load(name, None, false).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert_eq!(Theme::default(), Theme::load("dark", None, false).unwrap());
    }

    #[test]
    fn stderr_has_a_colour_for_the_grid_even_in_older_themes() {
        assert_eq!(Theme::default().stderr_sgr(), "38;2;255;95;95");
        let without: String = BUILT_IN[0]
            .1
            .lines()
            .filter(|l| !l.starts_with("stderr"))
            .collect::<Vec<_>>()
            .join("\n");
        let older = Theme::parse(&without, "older.toml", false).unwrap();
        assert_eq!(older.stderr_sgr(), "38;5;203");
        let plain = Theme::parse(&without, "older.toml", true).unwrap();
        assert_eq!(plain.stderr_sgr(), "39", "NO_COLOR: no colour");
    }

    #[test]
    fn user_themes_override_built_ins_by_name() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        let custom = BUILT_IN[0].1.replace(
            "fg = \"cyan\", bold = true }",
            "fg = \"#ff0000\", bold = true }",
        );
        std::fs::write(dir.join("dark.toml"), custom).unwrap();
        let theme = Theme::load("dark", Some(dir), false).unwrap();
        assert_eq!(theme.title.fg, Some(Color::Rgb(255, 0, 0)));
    }

    #[test]
    fn no_color_keeps_modifiers_only() {
        let theme = Theme::load("dark", None, true).unwrap();
        assert_eq!(theme.selected.fg, None);
        assert_eq!(theme.selected.bg, None);
        assert!(theme.selected.add_modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let bad = "[styles]\ntext = { fg = \"gray\" }\ndim = { fg = \"not-a-colour\" }\n";
        let err = Theme::parse(bad, "mine.toml", false).unwrap_err();
        assert_eq!(
            err,
            ThemeError::Invalid {
                file: "mine.toml".into(),
                line: 3,
                message: "style \"dim\": \"not-a-colour\" is not a colour (use a name, \"#rrggbb\" or \"0\"–\"255\")".into()
            }
        );
        let syntax = Theme::parse("[styles]\ntext = { fg = \n", "broken.toml", false).unwrap_err();
        assert!(
            matches!(syntax, ThemeError::Invalid { line: 2, .. }),
            "{syntax:?}"
        );
        let unknown = Theme::load("solarized", None, false).unwrap_err();
        assert!(
            unknown
                .to_string()
                .starts_with("No theme named \"solarized\"")
        );
    }
}
