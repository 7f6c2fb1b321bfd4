//! The file browser (`b` on a container in the pod view, `:files [PATH]`):
//! the container's filesystem as its main process sees it, reached by tar
//! and sh in the container itself or, where it has none (distroless),
//! through a debug container that sees it at `/proc/1/root`. Moving about,
//! reading a file, and transfers that go on while the user works elsewhere.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::reader::Reader;
use super::{App, Effect, PodView, View, error, info};
use crate::model::TerminalKey;
use crate::model::debug::{self, Admission, AsTargetUser, DebugSpec};
use crate::model::files::{self, Entry, Kind};

/// How the container's files are reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    /// tar and sh in the container itself.
    Direct,
    /// A running debug container that targets it.
    Debugger(String),
    /// Not known yet: the container itself first; where it has no shell,
    /// this running debug container, else one added from `fallback`.
    Unknown {
        reuse: Option<String>,
        fallback: Box<DebugSpec>,
    },
}

/// What to do with the container's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    List(String),
    /// The first bytes of a file, to read.
    Read(String),
    /// Copy `path` out into the local directory `to`.
    Download {
        path: String,
        to: String,
    },
    /// Copy the local `local` into `dir`.
    Upload {
        local: String,
        dir: String,
    },
    Remove(String),
}

/// How much of a file `v` reads.
pub const READ_LIMIT: usize = 256 * 1024;

/// A copy in flight or done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    pub id: u64,
    /// `↓ heap.hprof` or `↑ fix.json`.
    pub what: String,
    pub bytes: u64,
    pub total: Option<u64>,
    pub elapsed_ms: u64,
    pub state: TransferState,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransferState {
    Running,
    Done(String),
    Failed(String),
    Cancelled,
}

/// A question at the bottom of the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    /// The local path to upload, as typed.
    Upload(String),
    /// Remove this entry (a name in the current directory)? y/n.
    Remove(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct FileBrowser {
    /// The container browsed (the debug container is not it).
    pub key: TerminalKey,
    pub via: Via,
    pub dir: String,
    pub entries: Vec<Entry>,
    pub loading: bool,
    pub problem: Option<String>,
    pub cursor: usize,
    pub filter: String,
    pub filtering: bool,
    /// A file being read (`v`), and its name.
    pub reading: Option<(String, Reader)>,
    pub prompt: Option<Prompt>,
    /// The local paths `tab` found for the upload prompt, when several.
    pub completions: Vec<String>,
    pub transfers: Vec<Transfer>,
    /// Answers to older requests (another directory) are dropped.
    pub generation: u64,
    /// Where downloads go (`[files] download_dir`).
    pub download_dir: String,
}

impl FileBrowser {
    /// The entries the filter keeps.
    pub fn visible(&self) -> Vec<&Entry> {
        let filter = self.filter.to_lowercase();
        self.entries
            .iter()
            .filter(|e| filter.is_empty() || e.name.to_lowercase().contains(&filter))
            .collect()
    }

    pub fn selected(&self) -> Option<&Entry> {
        self.visible().get(self.cursor).copied()
    }

    /// Where the files are read from, for the title.
    pub fn route(&self) -> String {
        match &self.via {
            Via::Direct => format!("container {}", self.key.container),
            Via::Debugger(name) => format!(
                "container {} via debug container {name} (/proc/1/root)",
                self.key.container
            ),
            Via::Unknown { .. } => format!("container {}", self.key.container),
        }
    }

    fn request(&mut self, op: FileOp) -> Effect {
        Effect::Files {
            generation: self.generation,
            key: self.key.clone(),
            via: self.via.clone(),
            op,
            transfer: None,
        }
    }

    fn list(&mut self, dir: String) -> Vec<Effect> {
        self.generation += 1;
        self.loading = true;
        self.problem = None;
        if dir != self.dir {
            // Nothing of the old directory stays selectable under the new
            // one's name (D would remove a name there).
            self.entries.clear();
            self.cursor = 0;
            self.filter.clear();
        }
        self.dir = dir.clone();
        vec![self.request(FileOp::List(dir))]
    }
}

impl App {
    /// `b` (or `:files PATH`) on the pod view's selected container.
    pub(super) fn open_files(&mut self, path: Option<String>) -> Vec<Effect> {
        let View::Pod(view) = &self.view else {
            self.message = Some(info(
                "Open a pod, choose a container, then b browses its files.",
            ));
            return vec![];
        };
        let Some(detail) = view.pod.detail.as_ref() else {
            return vec![];
        };
        let Some(container) = view.selected().cloned() else {
            return vec![];
        };
        if !container.state.is_running() {
            // The service account's token is no one's leftovers.
            let left = container
                .mounts
                .iter()
                .find(|(volume, _)| !volume.starts_with("kube-api-access-"));
            let volumes = match left {
                Some((volume, at)) => format!(
                    "; what it left on its volumes can be copied: podbay cp -c {} {}/{}:{at} ./{volume}",
                    container.name, detail.key.namespace, detail.key.name
                ),
                None => ".".into(),
            };
            self.message = Some(error(format!(
                "Container {} is not running ({}); its files can be browsed only while it runs{volumes}",
                container.name,
                container.state.summary()
            )));
            return vec![];
        }
        let image = self
            .debug_images
            .first()
            .cloned()
            .unwrap_or_else(|| "busybox:1.36".into());
        let mut spec = DebugSpec {
            name: debug::unique_name(&debug::container_names(&detail.manifest), || {
                self.next_terminal.wrapping_mul(0x9e37_79b9_7f4a_7c15)
                    ^ self.now.as_nanosecond() as u64
            }),
            image: image.clone(),
            target: Some(container.name.clone()),
            profile: self.debug_profile,
            stdin: true,
            tty: true,
            ..Default::default()
        };
        // As the launcher: a profile the namespace refuses gives way to
        // the strongest one it admits.
        if let Some(policy) = &view.policy
            && let Admission::Refused {
                passing: Some(passing),
                ..
            } = spec.admission(policy, &detail.manifest)
        {
            spec.profile = passing;
        }
        spec.match_target_user(&detail.manifest, AsTargetUser::Auto);
        let reuse = detail
            .reusable_debugger(&image, Some(&container.name), &[])
            .map(str::to_string);
        let key = TerminalKey::new(
            view.cluster.clone(),
            detail.key.clone(),
            container.name.clone(),
        );
        let mut browser = FileBrowser {
            key,
            via: Via::Unknown {
                reuse,
                fallback: Box::new(spec),
            },
            dir: String::new(),
            entries: Vec::new(),
            loading: true,
            problem: None,
            cursor: 0,
            filter: String::new(),
            filtering: false,
            reading: None,
            prompt: None,
            completions: Vec::new(),
            transfers: Vec::new(),
            generation: 0,
            download_dir: self.download_dir.clone(),
        };
        let effects = browser.list(path.unwrap_or_else(|| "/".into()));
        self.message = None;
        self.view = View::Files(Box::new(browser));
        let mut all = vec![Effect::StopWatchingPod];
        all.extend(effects);
        all
    }

    /// Keys in the file browser; `None` for the keys that keep their
    /// meaning everywhere (`:`, `?`, `q`, the workspace key).
    pub(super) fn on_files_key(&mut self, key: &KeyEvent) -> Option<Vec<Effect>> {
        let View::Files(browser) = &mut self.view else {
            return None;
        };
        if browser.reading.is_some() {
            return None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if let Some(prompt) = browser.prompt.take() {
            return Some(match prompt {
                Prompt::Remove(name) => match key.code {
                    KeyCode::Char('y') => {
                        let path = files::join(&browser.dir, &name);
                        self.message = Some(info(format!("Removing {path}…")));
                        vec![browser.request(FileOp::Remove(path))]
                    }
                    _ => {
                        self.message = Some(info("Nothing was removed."));
                        vec![]
                    }
                },
                Prompt::Upload(mut typed) => match key.code {
                    KeyCode::Esc => vec![],
                    KeyCode::Enter if !typed.trim().is_empty() => {
                        let local = typed.trim().to_string();
                        let dir = browser.dir.clone();
                        self.start_transfer(format!("↑ {local}"), FileOp::Upload { local, dir })
                    }
                    KeyCode::Backspace => {
                        typed.pop();
                        browser.completions.clear();
                        browser.prompt = Some(Prompt::Upload(typed));
                        vec![]
                    }
                    // The local paths that begin so (read by the executor).
                    KeyCode::Tab => {
                        browser.prompt = Some(Prompt::Upload(typed.clone()));
                        vec![Effect::CompleteLocalPath(typed)]
                    }
                    KeyCode::Char(c) if !ctrl => {
                        typed.push(c);
                        browser.completions.clear();
                        browser.prompt = Some(Prompt::Upload(typed));
                        vec![]
                    }
                    _ => {
                        browser.prompt = Some(Prompt::Upload(typed));
                        vec![]
                    }
                },
            });
        }
        if browser.filtering {
            match key.code {
                KeyCode::Esc => {
                    browser.filter.clear();
                    browser.filtering = false;
                }
                KeyCode::Enter => browser.filtering = false,
                KeyCode::Backspace => {
                    browser.filter.pop();
                }
                KeyCode::Char(c) if !ctrl => browser.filter.push(c),
                _ => {}
            }
            browser.cursor = 0;
            return Some(vec![]);
        }
        let last = browser.visible().len().saturating_sub(1);
        let page = self.rows_per_page.max(2) / 2;
        let effects = match key.code {
            KeyCode::Char('j') | KeyCode::Down => {
                browser.cursor = (browser.cursor + 1).min(last);
                vec![]
            }
            KeyCode::Char('k') | KeyCode::Up => {
                browser.cursor = browser.cursor.saturating_sub(1);
                vec![]
            }
            KeyCode::PageDown => {
                browser.cursor = (browser.cursor + page).min(last);
                vec![]
            }
            KeyCode::PageUp => {
                browser.cursor = browser.cursor.saturating_sub(page);
                vec![]
            }
            KeyCode::Home => {
                browser.cursor = 0;
                vec![]
            }
            KeyCode::End | KeyCode::Char('G') => {
                browser.cursor = last;
                vec![]
            }
            KeyCode::Char('/') => {
                browser.filtering = true;
                vec![]
            }
            KeyCode::Char('-') | KeyCode::Backspace | KeyCode::Left => {
                let up = files::parent(&browser.dir);
                browser.list(up)
            }
            KeyCode::Char('r') => {
                let dir = browser.dir.clone();
                browser.list(dir)
            }
            KeyCode::Enter | KeyCode::Right => match browser.selected().cloned() {
                Some(entry) => match &entry.kind {
                    Kind::Dir => {
                        let dir = files::join(&browser.dir, &entry.name);
                        browser.list(dir)
                    }
                    Kind::Link(target) => {
                        let dir = files::follow(&browser.dir, target);
                        browser.list(dir)
                    }
                    _ => self.read_selected(),
                },
                None => vec![],
            },
            KeyCode::Char('v') => self.read_selected(),
            KeyCode::Char('g') => match browser.selected().cloned() {
                Some(entry) => {
                    // A link: what it points to, in the container's root.
                    let path = match &entry.kind {
                        Kind::Link(target) => files::follow(&browser.dir, target),
                        _ => files::join(&browser.dir, &entry.name),
                    };
                    let to = browser.download_dir.clone();
                    self.start_transfer(format!("↓ {}", entry.name), FileOp::Download { path, to })
                }
                None => vec![],
            },
            KeyCode::Char('u') => {
                browser.prompt = Some(Prompt::Upload(String::new()));
                vec![]
            }
            KeyCode::Char('D') => {
                if let Some(entry) = browser.selected() {
                    browser.prompt = Some(Prompt::Remove(entry.name.clone()));
                }
                vec![]
            }
            KeyCode::Char('x') => {
                match browser
                    .transfers
                    .iter()
                    .rev()
                    .find(|t| t.state == TransferState::Running)
                {
                    Some(t) => vec![Effect::CancelTransfer(t.id)],
                    None => {
                        self.message = Some(info("No copy is running."));
                        vec![]
                    }
                }
            }
            KeyCode::Esc if !browser.filter.is_empty() => {
                browser.filter.clear();
                browser.cursor = 0;
                vec![]
            }
            KeyCode::Esc => {
                let (cluster, pod) = (browser.key.cluster.clone(), browser.key.pod.clone());
                let mut back = PodView::new(cluster.clone(), pod.clone());
                back.fold_finished = self.fold_finished;
                self.message = None;
                self.view = View::Pod(Box::new(back));
                vec![Effect::WatchPod(cluster, pod)]
            }
            _ => return None,
        };
        Some(effects)
    }

    fn read_selected(&mut self) -> Vec<Effect> {
        let View::Files(browser) = &mut self.view else {
            return vec![];
        };
        match browser.selected().cloned() {
            Some(entry) if matches!(entry.kind, Kind::File | Kind::Link(_)) => {
                // A link: what it points to, in the container's root.
                let path = match &entry.kind {
                    Kind::Link(target) => files::follow(&browser.dir, target),
                    _ => files::join(&browser.dir, &entry.name),
                };
                self.message = Some(info(format!("Reading {path}…")));
                vec![browser.request(FileOp::Read(path))]
            }
            Some(entry) if entry.kind == Kind::Dir => vec![],
            Some(entry) => {
                self.message = Some(info(format!(
                    "{} is a device, FIFO or socket: there is nothing to read.",
                    entry.name
                )));
                vec![]
            }
            None => vec![],
        }
    }

    fn start_transfer(&mut self, what: String, op: FileOp) -> Vec<Effect> {
        let View::Files(browser) = &mut self.view else {
            return vec![];
        };
        self.next_terminal += 1;
        let id = self.next_terminal;
        browser.transfers.push(Transfer {
            id,
            what,
            bytes: 0,
            total: None,
            elapsed_ms: 0,
            state: TransferState::Running,
        });
        let mut effect = browser.request(op);
        if let Effect::Files { transfer, .. } = &mut effect {
            *transfer = Some(id);
        }
        vec![effect]
    }

    /// An answer for the browser.
    pub(super) fn on_files_event(&mut self, event: FilesEvent) -> Vec<Effect> {
        let View::Files(browser) = &mut self.view else {
            return vec![];
        };
        match event {
            FilesEvent::Listed {
                generation,
                via,
                dir,
                result,
            } => {
                if generation != browser.generation {
                    return vec![];
                }
                browser.via = via;
                browser.loading = false;
                match result {
                    Ok(entries) => {
                        browser.dir = dir;
                        browser.entries = entries;
                        browser.cursor = browser
                            .cursor
                            .min(browser.visible().len().saturating_sub(1));
                    }
                    Err(sentence) => {
                        browser.entries.clear();
                        browser.problem = Some(sentence);
                    }
                }
                vec![]
            }
            FilesEvent::Read {
                generation,
                path,
                result,
            } => {
                if generation != browser.generation {
                    return vec![];
                }
                match result {
                    Ok(bytes) => {
                        self.message = None;
                        let whole = bytes.len() < READ_LIMIT;
                        browser.reading =
                            Some((path, Reader::new(files::preview_lines(&bytes, whole))));
                        self.fit_reader();
                    }
                    Err(sentence) => self.message = Some(error(sentence)),
                }
                vec![]
            }
            FilesEvent::Removed { generation, result } => {
                if generation != browser.generation {
                    return vec![];
                }
                self.message = Some(match result {
                    Ok(sentence) => info(sentence),
                    Err(sentence) => error(sentence),
                });
                let dir = browser.dir.clone();
                browser.list(dir)
            }
            FilesEvent::Completed { typed, candidates } => {
                if browser.prompt.as_ref() == Some(&Prompt::Upload(typed.clone())) {
                    let (longer, shown) = files::complete(&typed, &candidates);
                    browser.prompt = Some(Prompt::Upload(longer));
                    browser.completions = shown;
                }
                vec![]
            }
            FilesEvent::Progress {
                id,
                bytes,
                total,
                elapsed_ms,
            } => {
                if let Some(t) = browser.transfers.iter_mut().find(|t| t.id == id) {
                    t.bytes = bytes;
                    t.total = total;
                    t.elapsed_ms = elapsed_ms;
                }
                vec![]
            }
            FilesEvent::Ended { id, outcome } => {
                let Some(t) = browser.transfers.iter_mut().find(|t| t.id == id) else {
                    return vec![];
                };
                let upload = t.what.starts_with('↑');
                t.state = match outcome {
                    Ok(summary) => {
                        self.message = Some(info(summary.clone()));
                        TransferState::Done(summary)
                    }
                    Err(sentence) if sentence.is_empty() => TransferState::Cancelled,
                    Err(sentence) => {
                        self.message = Some(error(sentence.clone()));
                        TransferState::Failed(sentence)
                    }
                };
                // An upload changes what the directory holds.
                if upload {
                    let dir = browser.dir.clone();
                    return browser.list(dir);
                }
                vec![]
            }
        }
    }
}

/// What the executor reports to the browser.
#[derive(Debug, Clone, PartialEq)]
pub enum FilesEvent {
    Listed {
        generation: u64,
        /// How the files were reached (a debug container may have been
        /// added for it).
        via: Via,
        dir: String,
        result: Result<Vec<Entry>, String>,
    },
    Read {
        generation: u64,
        path: String,
        result: Result<Vec<u8>, String>,
    },
    Removed {
        generation: u64,
        result: Result<String, String>,
    },
    /// The local paths that begin as `typed` does (directories end in `/`).
    Completed {
        typed: String,
        candidates: Vec<String>,
    },
    Progress {
        id: u64,
        bytes: u64,
        total: Option<u64>,
        elapsed_ms: u64,
    },
    /// `Err("")`: cancelled.
    Ended {
        id: u64,
        outcome: Result<String, String>,
    },
}

#[cfg(test)]
#[path = "files_tests.rs"]
mod tests;
