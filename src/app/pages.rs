//! Texts read in the browser: the pod described or as YAML (pages of the
//! pod view) and an event in full; their scrolling, search and way back.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::keymap::Action;
use super::reader::{Reader, Scroll};
use super::{App, Effect, Mode, Page, View, info, warning};

impl App {
    /// A search typed in a reader (describe, YAML, an event in full).
    pub(super) fn on_find_key(&mut self, mut query: String, key: KeyEvent) -> Vec<Effect> {
        match key.code {
            KeyCode::Esc => {}
            KeyCode::Enter => self.find(Some(query), false),
            KeyCode::Backspace => {
                if query.pop().is_some() {
                    self.mode = Mode::Find(query);
                }
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                query.push(c);
                self.mode = Mode::Find(query);
            }
            _ => self.mode = Mode::Find(query),
        }
        vec![]
    }

    /// Moves the reader to the next (or previous) match of `query`, or of
    /// the last search; says so when there is none.
    fn find(&mut self, query: Option<String>, backwards: bool) {
        let Some(reader) = self.reader_mut() else {
            return;
        };
        let Some(query) = query.or_else(|| reader.search.clone()) else {
            self.message = Some(info("Type / and a word to search for."));
            return;
        };
        self.message = if reader.find(&query, backwards) {
            None
        } else {
            Some(warning(format!("No line holds {query:?}.")))
        };
    }

    /// The text being read, if the browser shows one.
    pub(super) fn reader_mut(&mut self) -> Option<&mut Reader> {
        match &mut self.view {
            View::Pod(view) => match &mut view.page {
                Page::Describe(reader) | Page::Yaml(reader) => Some(reader),
                Page::Containers => None,
            },
            View::Events(view) => view.reading.as_mut(),
            View::Messages(reader) => Some(reader),
            View::Files(browser) => browser.reading.as_mut().map(|(_, reader)| reader),
            View::Nodes(view) => view.reading.as_mut(),
            View::Services(view) => match &mut view.page {
                Some(page) => Some(&mut page.reader),
                None => view.reading.as_mut(),
            },
            View::Workloads(view) => view.reading.as_mut().map(|page| &mut page.reader),
            View::Pods | View::Forwards(_) | View::Captures(_) | View::Debuggers(_) => None,
        }
    }

    /// Keeps the reader's wrapping and paging in step with the browser's size.
    pub(super) fn fit_reader(&mut self) {
        // Hidden (the panes fill the screen): keep the size it was read at.
        let Some(area) = self.areas().browser else {
            return;
        };
        // A title row above the text.
        let (width, height) = (
            usize::from(area.width),
            usize::from(area.height).saturating_sub(1),
        );
        if let Some(reader) = self.reader_mut() {
            reader.fit(width, height);
        }
    }

    /// Keys for a text being read: scrolling, `/`, `n`, `N`, `esc`. `None`
    /// for the keys that keep their usual meaning.
    pub(super) fn on_reader_key(&mut self, key: &KeyEvent) -> Option<Vec<Effect>> {
        self.reader_mut()?;
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('n') if plain => {
                self.find(None, false);
                return Some(vec![]);
            }
            KeyCode::Char('N') if plain => {
                self.find(None, true);
                return Some(vec![]);
            }
            _ => {}
        }
        let scroll = match self.keymap.action(key)? {
            Action::Up => Scroll::Up,
            Action::Down => Scroll::Down,
            Action::PageUp => Scroll::PageUp,
            Action::PageDown => Scroll::PageDown,
            Action::Top => Scroll::Top,
            Action::Bottom => Scroll::Bottom,
            Action::Filter => {
                self.mode = Mode::Find(String::new());
                return Some(vec![]);
            }
            Action::Back => return Some(self.close_reader()),
            _ => return None,
        };
        if let Some(reader) = self.reader_mut() {
            reader.scroll(scroll);
        }
        Some(vec![])
    }

    /// `esc` on a text being read: back to where it was opened from.
    fn close_reader(&mut self) -> Vec<Effect> {
        self.message = None;
        match &mut self.view {
            View::Pod(view) if view.back_to_list => {
                self.view = View::Pods;
                vec![Effect::StopWatchingPod]
            }
            View::Pod(view) => {
                view.page = Page::Containers;
                vec![]
            }
            View::Events(view) => {
                view.reading = None;
                vec![]
            }
            View::Messages(_) => {
                self.view = View::Pods;
                vec![]
            }
            View::Files(browser) => {
                browser.reading = None;
                vec![]
            }
            View::Nodes(view) => {
                view.reading = None;
                vec![]
            }
            View::Services(view) => {
                view.reading = None;
                view.page = None;
                vec![]
            }
            View::Workloads(view) => {
                view.reading = None;
                vec![]
            }
            View::Pods | View::Forwards(_) | View::Captures(_) | View::Debuggers(_) => vec![],
        }
    }

    /// `M` or `:messages`: every sentence of this run, newest last.
    pub(super) fn open_messages(&mut self) -> Vec<Effect> {
        let lines = if self.said.is_empty() {
            vec!["Nothing has been said yet.".to_string()]
        } else {
            self.said
                .iter()
                .map(|(at, message)| {
                    let level = match message.level {
                        super::Severity::Info => "info   ",
                        super::Severity::Warning => "warning",
                        super::Severity::Error => "error  ",
                    };
                    format!("{}  {level}  {}", at.strftime("%H:%M:%S"), message.text)
                })
                .collect()
        };
        let mut reader = Reader::new(lines);
        reader.scroll(Scroll::Bottom);
        self.view = View::Messages(Box::new(reader));
        vec![]
    }

    /// `D` or `y`: the pod described or as YAML, in the pod view or
    /// straight from the list.
    pub(super) fn open_page(&mut self, yaml: bool) -> Vec<Effect> {
        let page = if yaml {
            Page::Yaml(Reader::default())
        } else {
            Page::Describe(Reader::default())
        };
        let effects = match &mut self.view {
            View::Pod(view) => {
                view.page = page;
                vec![]
            }
            View::Pods => {
                let effects = self.open_pod(false);
                if let View::Pod(view) = &mut self.view {
                    view.page = page;
                    view.back_to_list = true;
                }
                effects
            }
            View::Events(_)
            | View::Messages(_)
            | View::Files(_)
            | View::Forwards(_)
            | View::Captures(_)
            | View::Nodes(_)
            | View::Services(_)
            | View::Workloads(_)
            | View::Debuggers(_) => {
                return vec![];
            }
        };
        // Sized first, so the text is wrapped once, at the width it is read at.
        self.fit_reader();
        let now = self.now;
        if let Some(view) = self.pod_view_mut() {
            view.refresh_page(now);
        }
        effects
    }
}
