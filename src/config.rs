//! `config.toml` and the platform paths podbay uses (via `directories`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::app::PaneOptions;
use crate::app::keymap::{KeySpec, Keymap, KeymapError, Keys};
use crate::model::debug::Profile;

/// A value written as text and parsed by its own rules (a key, a profile):
/// a mistake is reported at its line, like any other in the file.
fn parsed<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: std::str::FromStr<Err = String>,
{
    let text = String::deserialize(deserializer)?;
    text.parse().map_err(serde::de::Error::custom)
}

/// `terminal.prefix`, whose mistakes name the setting (a key alone could
/// be any of `[keys]`).
fn prefix_key<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<KeySpec, D::Error> {
    let text = String::deserialize(deserializer)?;
    KeySpec::parse(&text).map_err(|e| serde::de::Error::custom(format!("terminal.prefix: {e}")))
}

/// The documented default configuration, shipped in `assets/`.
pub const DEFAULT_CONFIG: &str = include_str!("../assets/config.toml");

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub theme: String,
    pub all_namespaces: bool,
    /// Shown when the user may not list namespaces / pods cluster-wide.
    pub namespaces: Vec<String>,
    /// Action name → key(s), overriding the defaults.
    pub keys: BTreeMap<String, Keys>,
    pub debug: DebugConfig,
    pub terminal: TerminalConfig,
    pub logs: LogsConfig,
    pub files: FilesConfig,
    pub workspace: WorkspaceConfig,
    /// `[profiles.NAME]`: the team's debug profiles (`base`, then a
    /// partial container as `kubectl debug --custom` takes it).
    pub profiles: BTreeMap<String, toml::Table>,
}

/// `[workspace]`: the panes kept across runs.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkspaceConfig {
    /// At start, with a kept workspace: `ask`, `always` or `never`.
    pub restore: crate::app::restore::RestoreChoice,
}

/// `[files]`: the file browser.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FilesConfig {
    /// Where `g` puts downloads (`~` is the home directory).
    pub download_dir: String,
}

impl Default for FilesConfig {
    fn default() -> Self {
        FilesConfig {
            download_dir: ".".into(),
        }
    }
}

/// `[logs]`: how log panes read.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogsConfig {
    /// The last this many lines when a log pane opens (0: all).
    pub tail: u64,
}

impl Default for LogsConfig {
    fn default() -> Self {
        LogsConfig { tail: 1000 }
    }
}

/// `[terminal]`: how panes behave.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TerminalConfig {
    /// The key that leaves the shell's keyboard for one pane command.
    #[serde(deserialize_with = "prefix_key")]
    pub prefix: KeySpec,
    /// Lines of scrollback per terminal.
    pub scrollback: usize,
    /// Record every new terminal to the state directory.
    pub record: bool,
    /// Seconds between websocket pings on session streams (0: none).
    pub keepalive: u64,
    /// A stream cut after this many idle seconds is re-attached once,
    /// automatically (0: never).
    pub reattach_when_idle: u64,
    /// Terminal width from which the browser and the panes are side by side.
    pub side_by_side_from: u16,
    /// Quitting with live sessions asks first.
    pub confirm_quit: bool,
}

impl Default for TerminalConfig {
    fn default() -> Self {
        TerminalConfig {
            prefix: KeySpec::parse("ctrl-b").expect("a valid key"),
            scrollback: crate::term::grid::DEFAULT_SCROLLBACK,
            record: false,
            keepalive: 30,
            reattach_when_idle: 20,
            side_by_side_from: 200,
            confirm_quit: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DebugConfig {
    pub images: Vec<String>,
    #[serde(deserialize_with = "parsed")]
    pub profile: Profile,
    /// Seconds the TUI waits for the cluster to accept a debug container
    /// (admission webhooks may take 30 s each).
    pub launch_timeout: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            theme: crate::theme::DEFAULT_THEME.to_string(),
            all_namespaces: false,
            namespaces: Vec::new(),
            keys: BTreeMap::new(),
            debug: DebugConfig::default(),
            terminal: TerminalConfig::default(),
            logs: LogsConfig::default(),
            files: FilesConfig::default(),
            workspace: WorkspaceConfig::default(),
            profiles: BTreeMap::new(),
        }
    }
}

impl Config {
    /// How panes behave, as `[terminal]` and `[logs]` say.
    pub fn pane_options(&self) -> PaneOptions {
        PaneOptions {
            prefix: self.terminal.prefix,
            scrollback: self.terminal.scrollback,
            record: self.terminal.record,
            reattach_when_idle: seconds(self.terminal.reattach_when_idle),
            side_by_side_from: self.terminal.side_by_side_from,
            confirm_quit: self.terminal.confirm_quit,
            log_tail: (self.logs.tail > 0).then_some(self.logs.tail as i64),
        }
    }
}

/// A number of seconds from the config, where 0 means never.
pub fn seconds(n: u64) -> Option<std::time::Duration> {
    (n > 0).then(|| std::time::Duration::from_secs(n))
}

/// The panes as the default config has them: one source for both.
impl Default for PaneOptions {
    fn default() -> Self {
        Config::default().pane_options()
    }
}

impl Default for DebugConfig {
    fn default() -> Self {
        DebugConfig {
            images: vec!["busybox:1.36".to_string()],
            profile: Profile::General,
            launch_timeout: 35,
        }
    }
}

/// What is wrong in the config file, and where (line 0: not one line).
#[derive(Debug, PartialEq)]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ConfigError {
            file,
            line,
            message,
        } = self;
        match line {
            0 => write!(f, "Config file {file}: {message}. Fix it or move it aside."),
            _ => write!(
                f,
                "Config file {file}, line {line}: {message}. Fix it or move it aside."
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Reads `path`; a missing file is the default configuration.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        match crate::local::read_state(path, crate::local::STATE_MOST_BYTES) {
            Ok(Some(bytes)) => Config::parse(utf8(&bytes, &file)?, &file),
            Ok(None) => Ok(Config::default()),
            Err(e) => Err(ConfigError {
                file: path.display().to_string(),
                line: 0,
                message: e.to_string(),
            }),
        }
    }

    pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
        let mut config: Config = toml::from_str(text).map_err(|e| ConfigError {
            file: file.to_string(),
            line: e.span().map_or(0, |s| {
                text[..s.start.min(text.len())].lines().count().max(1)
            }),
            message: e.message().trim_end_matches('.').to_string(),
        })?;
        if config.debug.images.is_empty() {
            config.debug.images = DebugConfig::default().images;
        }
        config.check_ranges(text, file)?;
        config.check_keys(text, file)?;
        config
            .custom_profiles()
            .map_err(|(name, message)| ConfigError {
                file: file.to_string(),
                line: line_in(text, "profiles", &name)
                    .or_else(|| {
                        text.lines()
                            .position(|l| l.trim() == format!("[profiles.{name}]"))
                            .map(|i| i + 1)
                    })
                    .unwrap_or(0),
                message: format!("[profiles.{name}] {message}"),
            })?;
        Ok(config)
    }

    /// The team's profiles, in name order; the name of one that is wrong
    /// and why.
    pub fn custom_profiles(
        &self,
    ) -> Result<Vec<crate::model::debug::CustomProfile>, (String, String)> {
        self.profiles
            .iter()
            .map(|(name, table)| {
                let mut fields = table.clone();
                let base = match fields.remove("base") {
                    None => Profile::General,
                    Some(toml::Value::String(base)) => {
                        base.parse().map_err(|e: String| (name.clone(), e))?
                    }
                    Some(other) => {
                        return Err((
                            name.clone(),
                            format!("base must be a profile's name, not a {}", other.type_str()),
                        ));
                    }
                };
                let container =
                    serde_json::to_value(&fields).map_err(|e| (name.clone(), e.to_string()))?;
                crate::model::debug::CustomProfile::new(name, base, container)
                    .map_err(|e| (name.clone(), e))
            })
            .collect()
    }

    /// The keys, over the defaults (checked when the file was read).
    pub fn keymap(&self) -> Result<Keymap, KeymapError> {
        Keymap::from_config(&self.keys)
    }

    /// `[keys]` names known actions and valid keys, none bound twice.
    fn check_keys(&self, text: &str, file: &str) -> Result<(), ConfigError> {
        self.keymap().map(drop).map_err(|e| ConfigError {
            file: file.to_string(),
            line: e.action.and_then(|a| line_in(text, "keys", a)).unwrap_or(0),
            message: format!("[keys] {e}"),
        })
    }

    /// Every number within what podbay can act on: a keepalive of 2^64
    /// seconds would overflow the clock in a worker.
    fn check_ranges(&self, text: &str, file: &str) -> Result<(), ConfigError> {
        let terminal = &self.terminal;
        let settings: [(&str, u64, std::ops::RangeInclusive<u64>, &str); 3] = [
            (
                "scrollback",
                terminal.scrollback as u64,
                0..=MAX_SCROLLBACK,
                "lines",
            ),
            ("keepalive", terminal.keepalive, 0..=3_600, "seconds"),
            (
                "reattach_when_idle",
                terminal.reattach_when_idle,
                0..=86_400,
                "seconds",
            ),
        ];
        if !(1..=600).contains(&self.debug.launch_timeout) {
            return Err(ConfigError {
                file: file.to_string(),
                line: line_in(text, "debug", "launch_timeout").unwrap_or(0),
                message: format!(
                    "debug.launch_timeout = {} is out of range: 1 to 600 seconds",
                    self.debug.launch_timeout
                ),
            });
        }
        if self.logs.tail > MAX_SCROLLBACK {
            return Err(ConfigError {
                file: file.to_string(),
                line: line_in(text, "logs", "tail").unwrap_or(0),
                message: format!(
                    "logs.tail = {} is out of range: 0 to {MAX_SCROLLBACK} lines",
                    self.logs.tail
                ),
            });
        }
        for (key, value, range, unit) in settings {
            if !range.contains(&value) {
                return Err(ConfigError {
                    file: file.to_string(),
                    line: line_in(text, "terminal", key).unwrap_or(0),
                    message: format!(
                        "terminal.{key} = {value} is out of range: {} to {} {unit}",
                        range.start(),
                        range.end()
                    ),
                });
            }
        }
        Ok(())
    }
}

/// The most lines of scrollback a terminal may keep.
pub const MAX_SCROLLBACK: u64 = 1_000_000;

/// The file's text, or where it stops being UTF-8.
fn utf8<'a>(bytes: &'a [u8], file: &str) -> Result<&'a str, ConfigError> {
    crate::model::text::text_of(bytes).map_err(|(line, message)| ConfigError {
        file: file.to_string(),
        line,
        message,
    })
}

/// The line (from 1) of `key = …` in `[section]` of `text`.
pub(crate) fn line_in(text: &str, section: &str, key: &str) -> Option<usize> {
    let mut in_section = false;
    text.lines().enumerate().find_map(|(i, line)| {
        let line = line.trim();
        if line.starts_with('[') {
            in_section = line.trim_start_matches('[').trim_end_matches(']').trim() == section;
            return None;
        }
        let name = line.split('=').next()?.trim().trim_matches('"');
        (in_section && line.contains('=') && name == key).then_some(i + 1)
    })
}

/// Where podbay keeps things.
#[derive(Debug, Clone, PartialEq)]
pub struct Paths {
    pub config: PathBuf,
    pub themes: PathBuf,
    pub state: PathBuf,
    pub log: PathBuf,
}

const HISTORY_LENGTH: usize = 10;

/// Debug images used before, most recent first (a missing or unreadable
/// file is none).
pub fn image_history(path: &Path) -> Vec<String> {
    crate::local::read_state(path, crate::local::STATE_MOST_BYTES)
        .ok()
        .flatten()
        .map(|bytes| {
            String::from_utf8_lossy(&bytes)
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .take(HISTORY_LENGTH)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// Puts `image` first in the history file.
pub fn remember_image(path: &Path, image: &str) -> std::io::Result<()> {
    let mut images = image_history(path);
    images.retain(|i| i != image);
    images.insert(0, image.to_string());
    images.truncate(HISTORY_LENGTH);
    crate::local::replace_whole(path, (images.join("\n") + "\n").as_bytes())
}

/// Debug images most people reach for, offered after the config's:
/// tools, a network toolbox, a distroless image's debug variant (busybox
/// inside), and two distributions.
pub const COMMON_DEBUG_IMAGES: [&str; 5] = [
    "busybox:1.36",
    "nicolaka/netshoot:v0.13",
    "gcr.io/distroless/base-debian12:debug",
    "alpine:3.20",
    "ubuntu:24.04",
];

/// The launcher's image choices: the recently used first, then the config's
/// presets, then the common debug images.
pub fn image_choices(history: &[String], presets: &[String]) -> Vec<String> {
    let common = COMMON_DEBUG_IMAGES.map(String::from);
    let mut out: Vec<String> = Vec::new();
    for image in history.iter().chain(presets).chain(&common) {
        if !out.contains(image) {
            out.push(image.clone());
        }
    }
    out
}

impl Paths {
    pub fn image_history(&self) -> PathBuf {
        self.state.join("image-history")
    }

    /// The platform's directories (XDG on Linux), or ./.podbay when there is no home.
    pub fn discover() -> Paths {
        match directories::ProjectDirs::from("dev", "podbay", "podbay") {
            Some(dirs) => {
                let state = dirs
                    .state_dir()
                    .unwrap_or_else(|| dirs.data_local_dir())
                    .to_path_buf();
                Paths {
                    config: dirs.config_dir().join("config.toml"),
                    themes: dirs.config_dir().join("themes"),
                    log: state.join("podbay.log"),
                    state,
                }
            }
            None => {
                let base = PathBuf::from(".podbay");
                Paths {
                    config: base.join("config.toml"),
                    themes: base.join("themes"),
                    log: base.join("podbay.log"),
                    state: base,
                }
            }
        }
    }
}

impl std::fmt::Display for Paths {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "config: {}", self.config.display())?;
        writeln!(f, "themes: {}", self.themes.display())?;
        writeln!(f, "state:  {}", self.state.display())?;
        write!(f, "log:    {}", self.log.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_lines_are_found_for_the_sentence() {
        let text =
            "theme = \"dark\"\n[debug]\nquit = 1\n[keys]\n# quit = [\"q\"]\nquit = [\"qq\"]\n";
        assert_eq!(line_in(text, "keys", "quit"), Some(6));
    }

    #[test]
    fn the_shipped_config_is_valid_and_documents_the_defaults() {
        let shipped = Config::parse(DEFAULT_CONFIG, "assets/config.toml").unwrap();
        assert_eq!(shipped.theme, Config::default().theme);
        assert_eq!(shipped.debug.images[0], "busybox:1.36");
        assert!(shipped.keys.is_empty());
        assert_eq!(shipped.workspace, WorkspaceConfig::default());
        let never = Config::parse("[workspace]\nrestore = \"never\"\n", "c.toml").unwrap();
        assert_eq!(
            never.workspace.restore,
            crate::app::restore::RestoreChoice::Never
        );
        let wrong = Config::parse("[workspace]\nrestore = \"maybe\"\n", "c.toml").unwrap_err();
        assert_eq!(wrong.line, 2, "{wrong}");
    }

    #[test]
    fn team_profiles_are_read_and_a_wrong_one_is_named_with_its_line() {
        let text =
            "[profiles.team]\nbase = \"baseline\"\nenv = [{ name = \"TEAM\", value = \"sre\" }]\n";
        let config = Config::parse(text, "c.toml").unwrap();
        let profiles = config.custom_profiles().unwrap();
        assert_eq!(profiles[0].name, "team");
        assert_eq!(profiles[0].base, Profile::Baseline);
        assert_eq!(profiles[0].container["env"][0]["name"], "TEAM");
        let wrong = Config::parse(
            "theme = \"dark\"\n[profiles.ops]\nimage = \"x\"\n",
            "c.toml",
        );
        let e = wrong.unwrap_err();
        assert_eq!(e.line, 2, "{e:?}");
        assert!(
            e.message.contains("[profiles.ops]") && e.message.contains("not modifiable"),
            "{e:?}"
        );
    }

    #[test]
    fn partial_configs_fill_in_defaults() {
        let c = Config::parse(
            "namespaces = [\"shop\"]\n[keys]\nquit = \"x\"\nup = [\"k\", \"up\"]\n",
            "c.toml",
        )
        .unwrap();
        assert_eq!(c.namespaces, ["shop"]);
        assert_eq!(c.keys["quit"].list(), ["x"]);
        assert_eq!(c.keys["up"].list(), ["k", "up"]);
        assert_eq!(c.debug, DebugConfig::default());
    }

    #[test]
    fn errors_name_file_and_line() {
        let err = Config::parse(
            "theme = \"dark\"\nall_namespaces = \"yes\"\n",
            "/home/me/config.toml",
        )
        .unwrap_err();
        assert_eq!(err.file, "/home/me/config.toml");
        assert_eq!(err.line, 2);
        assert!(
            err.to_string()
                .starts_with("Config file /home/me/config.toml, line 2: "),
            "{err}"
        );
        let unknown = Config::parse("colour = \"red\"\n", "c.toml").unwrap_err();
        assert!(unknown.message.contains("unknown field"), "{unknown}");
    }

    #[test]
    fn image_history_keeps_the_latest_first_without_duplicates() {
        let scratch = tempfile::tempdir().unwrap();
        let path = scratch.path().join("history");
        assert!(image_history(&path).is_empty());
        remember_image(&path, "a").unwrap();
        remember_image(&path, "b").unwrap();
        remember_image(&path, "a").unwrap();
        assert_eq!(image_history(&path), ["a", "b"]);
        let choices = image_choices(&image_history(&path), &["busybox".into(), "b".into()]);
        assert_eq!(choices[..3], ["a", "b", "busybox"]);
        // Then the common debug images, each once.
        assert_eq!(choices[3..], COMMON_DEBUG_IMAGES);
        let fresh = image_choices(&[], &["busybox:1.36".into()]);
        assert_eq!(fresh.len(), COMMON_DEBUG_IMAGES.len(), "{fresh:?}");
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn numbers_out_of_range_name_the_line_and_the_range() {
        let err = Config::parse(
            "[terminal]\nrecord = false\nkeepalive = 18446744073709551615\n",
            "/home/me/config.toml",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Config file /home/me/config.toml, line 3: terminal.keepalive = 18446744073709551615 \
             is out of range: 0 to 3600 seconds. Fix it or move it aside."
        );
        let err = Config::parse("[terminal]\nscrollback = 99999999\n", "c.toml").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("0 to 1000000 lines"), "{err}");
        assert!(Config::parse("[terminal]\nkeepalive = 3600\n", "c.toml").is_ok());
    }

    #[test]
    fn a_file_that_is_not_utf8_is_reported_at_its_line() {
        let scratch = tempfile::tempdir().unwrap();
        let path = scratch.path().join("latin1.toml");
        std::fs::write(&path, b"theme = \"dark\"\n# caf\xe9\n").unwrap();
        let err = Config::load(&path).unwrap_err();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(err.line, 2);
        assert!(
            err.message.starts_with("byte 6 of the line is not UTF-8"),
            "{err}"
        );
    }

    #[test]
    fn missing_file_is_the_default() {
        assert_eq!(
            Config::load(Path::new("/nonexistent/podbay.toml")).unwrap(),
            Config::default()
        );
    }
}
