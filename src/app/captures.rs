//! Packet captures in the TUI: the `P` form over a pod (or the marked
//! pods, captured together into one pcapng), the Captures view
//! (`:captures`) with each capture's live counts, `x` to stop one and `o`
//! for the command that opens its file. The capture runs in the runtime
//! through the capture engine, as `podbay capture`'s does.

use crossterm::event::{KeyCode, KeyEvent};

use super::form::{self, Answer, Form, Input, LineEdit, Shown};
use super::*;
use crate::model::capture::{self as capture_model, CaptureEvent, Options, Request};

/// How long the capture's pods and debug containers may take to ready.
const READY_WITHIN: std::time::Duration = std::time::Duration::from_secs(120);

/// One capture, as the Captures view lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    pub id: u64,
    pub cluster: ClusterId,
    /// `namespace/pod`, each pod captured.
    pub pods: Vec<String>,
    /// The file it writes.
    pub file: String,
    pub state: CaptureState,
    pub packets: u64,
    pub bytes: u64,
    /// What it last said (a line of progress, or how it ended).
    pub said: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureState {
    Starting,
    Capturing,
    Stopping,
    Ended,
    Failed,
}

impl CaptureState {
    pub fn label(self) -> &'static str {
        match self {
            CaptureState::Starting => "starting",
            CaptureState::Capturing => "capturing",
            CaptureState::Stopping => "stopping",
            CaptureState::Ended => "ended",
            CaptureState::Failed => "failed",
        }
    }

    pub fn running(self) -> bool {
        matches!(
            self,
            CaptureState::Starting | CaptureState::Capturing | CaptureState::Stopping
        )
    }
}

/// The Captures view: which row is selected.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapturesView {
    pub cursor: usize,
}

/// The `P` form: which packets, for how long, into which file.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureForm {
    /// The pods' cluster: a capture runs in one.
    pub cluster: ClusterId,
    pub pods: Vec<PodKey>,
    pub filter: LineEdit,
    pub duration: LineEdit,
    pub count: LineEdit,
    pub interface: LineEdit,
    pub image: LineEdit,
    pub file: LineEdit,
    pub field: CaptureField,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureField {
    Filter,
    Duration,
    Count,
    Interface,
    Image,
    File,
}

/// What the form sends.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureAsked {
    pub filter: Option<String>,
    pub duration: Option<std::time::Duration>,
    /// Stop after this many packets (in all).
    pub count: Option<u64>,
    pub interface: String,
    pub image: String,
    pub file: String,
}

impl CaptureForm {
    /// Prefilled: every packet, until stopped, into the download folder,
    /// named after the pod (or the number of pods).
    pub fn new(cluster: ClusterId, pods: Vec<PodKey>, download_dir: &str) -> Self {
        let name = match pods.as_slice() {
            [one] => format!("{}.pcap", one.name),
            many => format!("capture-{}-pods.pcapng", many.len()),
        };
        let dir = download_dir.trim_end_matches('/');
        let prefilled = |text: &str| {
            let mut line = LineEdit::default();
            line.insert_str(text);
            line
        };
        CaptureForm {
            cluster,
            pods,
            filter: LineEdit::default(),
            duration: LineEdit::default(),
            count: LineEdit::default(),
            interface: prefilled("any"),
            image: prefilled(capture_model::DEFAULT_IMAGE),
            file: prefilled(&format!("{dir}/{name}")),
            field: CaptureField::Filter,
        }
    }
}

impl Form for CaptureForm {
    type Field = CaptureField;
    type Sent = CaptureAsked;
    type Context = ();

    fn fields(&self) -> &[CaptureField] {
        &[
            CaptureField::Filter,
            CaptureField::Duration,
            CaptureField::Count,
            CaptureField::Interface,
            CaptureField::Image,
            CaptureField::File,
        ]
    }

    fn focus(&self) -> CaptureField {
        self.field
    }

    fn set_focus(&mut self, field: CaptureField) {
        self.field = field;
    }

    fn input(&self, _: CaptureField) -> Input {
        Input::Text
    }

    fn text_mut(&mut self, field: CaptureField) -> Option<&mut LineEdit> {
        Some(match field {
            CaptureField::Filter => &mut self.filter,
            CaptureField::Duration => &mut self.duration,
            CaptureField::Count => &mut self.count,
            CaptureField::Interface => &mut self.interface,
            CaptureField::Image => &mut self.image,
            CaptureField::File => &mut self.file,
        })
    }

    fn choose(&mut self, _: CaptureField, _: isize) {}

    fn submit(&self, _: &()) -> Result<CaptureAsked, String> {
        let duration = match self.duration.trim() {
            "" => None,
            text => Some(crate::model::parse_duration(text)?).filter(|d| !d.is_zero()),
        };
        let count = match self.count.trim() {
            "" => None,
            text => Some(capture_model::parse_count(text)?),
        };
        let interface = capture_model::parse_interface(&self.interface)?;
        let image = self.image.trim();
        crate::model::image::validate_reference(image)?;
        let file = self.file.trim();
        if file.is_empty() {
            return Err("Name the file the capture goes into.".into());
        }
        Ok(CaptureAsked {
            filter: Some(self.filter.trim().to_string()).filter(|f| !f.is_empty()),
            duration,
            count,
            interface,
            image: image.to_string(),
            file: file.to_string(),
        })
    }

    fn shown(&self, field: CaptureField) -> Shown<'_> {
        match field {
            CaptureField::Filter => Shown::text(
                "filter (BPF)",
                &self.filter,
                "every packet: tcp port 8080, host 10.0.0.7…",
            ),
            CaptureField::Duration => {
                Shown::text("for", &self.duration, "until stopped (x in :captures)")
            }
            CaptureField::Count => Shown::text("packets", &self.count, "no limit"),
            CaptureField::Interface => Shown::text("interface", &self.interface, "any"),
            CaptureField::Image => Shown::text("image", &self.image, "a tcpdump image"),
            CaptureField::File => Shown::text("into", &self.file, "a file name"),
        }
    }
}

impl App {
    /// `P`: the form over the marked pods, else the selected one (the pod
    /// view's pod there).
    pub(super) fn open_capture_form(&mut self) -> Vec<Effect> {
        let (cluster, pods): (ClusterId, Vec<PodKey>) = match &self.view {
            View::Pod(view) => (view.cluster.clone(), vec![view.key.clone()]),
            _ if !self.pods.marks().is_empty() => {
                let by_cluster = self.marks_by_cluster();
                if by_cluster.len() > 1 {
                    let contexts: Vec<String> = by_cluster
                        .keys()
                        .map(|c| crate::model::text::sanitize(&c.context).into_owned())
                        .collect();
                    self.message = Some(warning(format!(
                        "The marked pods are on {} contexts ({}), and a capture runs in one: mark one context's pods (/ ctx:NAME shows them).",
                        contexts.len(),
                        contexts.join(", ")
                    )));
                    return vec![];
                }
                match by_cluster.into_iter().next() {
                    Some(one) => one,
                    None => return vec![],
                }
            }
            _ => match self.selected_row() {
                Some((cluster, pod)) => (cluster, vec![pod]),
                None => return vec![],
            },
        };
        if pods.is_empty() {
            return vec![];
        }
        self.mode = Mode::Capture(Box::new(CaptureForm::new(
            cluster,
            pods,
            &self.download_dir,
        )));
        vec![]
    }

    pub(super) fn on_capture_form_key(
        &mut self,
        mut form: CaptureForm,
        key: KeyEvent,
    ) -> Vec<Effect> {
        match form::on_key(&mut form, &key, &()) {
            Answer::Cancel => return vec![],
            Answer::Send(asked) => return self.start_capture(form.cluster, form.pods, asked),
            Answer::Refused(why) => self.message = Some(error(why)),
            Answer::Stay | Answer::Edited => {}
        }
        self.mode = Mode::Capture(Box::new(form));
        vec![]
    }

    fn start_capture(
        &mut self,
        cluster: ClusterId,
        pods: Vec<PodKey>,
        asked: CaptureAsked,
    ) -> Vec<Effect> {
        self.next_capture += 1;
        let id = self.next_capture;
        let request = Request {
            pods: pods
                .iter()
                .map(|p| (p.namespace.to_string(), p.name.to_string()))
                .collect(),
            image: asked.image,
            timeout: READY_WITHIN,
            options: Options {
                interface: asked.interface,
                filter: asked.filter,
                count: asked.count,
            },
            duration: asked.duration,
        };
        let labels: Vec<String> = pods
            .iter()
            .map(|p| format!("{}/{}", p.namespace, p.name))
            .collect();
        self.message = Some(info(format!(
            "Starting a capture of {} into {}; :captures lists the captures (x stops one).",
            match labels.as_slice() {
                [one] => one.clone(),
                many => format!("{} pods", many.len()),
            },
            asked.file
        )));
        self.captures.push(Capture {
            id,
            cluster: cluster.clone(),
            pods: labels,
            file: asked.file.clone(),
            state: CaptureState::Starting,
            packets: 0,
            bytes: 0,
            said: Vec::new(),
        });
        vec![Effect::StartCapture {
            id,
            cluster,
            request,
            file: asked.file,
        }]
    }

    pub(super) fn on_capture_event(&mut self, id: u64, event: CaptureEvent) {
        let Some(capture) = self.captures.iter_mut().find(|c| c.id == id) else {
            return;
        };
        match event {
            CaptureEvent::Said(line) => capture.said = vec![line],
            CaptureEvent::Capturing { file } => {
                capture.file = file;
                if capture.state == CaptureState::Starting {
                    capture.state = CaptureState::Capturing;
                }
                capture.said = Vec::new();
                self.message = Some(info(format!(
                    "Capturing {} into {}.",
                    match capture.pods.as_slice() {
                        [one] => one.clone(),
                        many => format!("{} pods", many.len()),
                    },
                    capture.file
                )));
            }
            CaptureEvent::Totals { packets, bytes } => {
                capture.packets = packets;
                capture.bytes = bytes;
            }
            CaptureEvent::Ended { lines, captured } => {
                capture.state = match captured {
                    true => CaptureState::Ended,
                    false => CaptureState::Failed,
                };
                self.message = Some(match captured {
                    true => info(format!(
                        "The capture into {} ended: {} packets.",
                        capture.file, capture.packets
                    )),
                    false => error(format!(
                        "The capture into {} failed: {}",
                        capture.file,
                        lines.first().cloned().unwrap_or_default()
                    )),
                });
                capture.said = lines;
            }
        }
    }

    /// `:captures`: the captures of this run.
    pub(super) fn open_captures(&mut self) -> Vec<Effect> {
        let leaving_pod = matches!(self.view, View::Pod(_) | View::Events(_));
        self.view = View::Captures(CapturesView::default());
        self.message = match self.captures.is_empty() {
            true => Some(info(
                "No captures yet: P on a pod (or on marked pods) captures its packets into a file.",
            )),
            false => None,
        };
        match leaving_pod {
            true => vec![Effect::StopWatchingPod],
            false => vec![],
        }
    }

    /// Keys of the Captures view: move, `x` stops one, `o` says how to
    /// open its file, esc goes back.
    pub(super) fn on_captures_key(&mut self, key: &KeyEvent) -> Option<Vec<Effect>> {
        let View::Captures(view) = &mut self.view else {
            return None;
        };
        let last = self.captures.len().saturating_sub(1);
        let selected = self.captures.get_mut(view.cursor.min(last));
        match key.code {
            KeyCode::Char('x') | KeyCode::Delete => {
                let Some(capture) = selected else {
                    return Some(vec![]);
                };
                if !capture.state.running() {
                    self.message = Some(info(format!(
                        "The capture into {} has already ended.",
                        capture.file
                    )));
                    return Some(vec![]);
                }
                capture.state = CaptureState::Stopping;
                self.message = Some(info(format!(
                    "Stopping the capture into {}: each tcpdump ends and says its counts.",
                    capture.file
                )));
                Some(vec![Effect::StopCapture(capture.id)])
            }
            KeyCode::Char('o') => {
                let Some(capture) = selected else {
                    return Some(vec![]);
                };
                let command = format!("wireshark {}", shell_quoted(&capture.file));
                self.message = Some(info(format!("Copied: {command}")));
                Some(vec![Effect::Copy(command)])
            }
            _ => self.on_small_list_key(key, self.captures.len()),
        }
    }

    /// Captures still running, for the quit question.
    pub(super) fn running_captures(&self) -> Option<String> {
        match self.captures.iter().filter(|c| c.state.running()).count() {
            0 => None,
            1 => Some("a capture is running".into()),
            n => Some(format!("{n} captures are running")),
        }
    }
}

/// `path` as a shell reads it back: bare when it is plain, else in single
/// quotes.
fn shell_quoted(path: &str) -> String {
    let plain = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c));
    match plain && !path.is_empty() {
        true => path.to_string(),
        false => format!("'{}'", path.replace('\'', r"'\''")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, crossterm::event::KeyModifiers::NONE)
    }

    fn pod(name: &str) -> PodKey {
        PodKey::new("shop", name)
    }

    fn here() -> ClusterId {
        ClusterId::new("sim", "https://127.0.0.1", "admin")
    }

    #[test]
    fn the_form_is_prefilled_and_checks_what_it_sends() {
        let mut form = CaptureForm::new(here(), vec![pod("redis-0")], "/tmp/dl/");
        assert_eq!(form.file.as_str(), "/tmp/dl/redis-0.pcap");
        let several = CaptureForm::new(here(), vec![pod("a"), pod("b")], ".");
        assert_eq!(several.file.as_str(), "./capture-2-pods.pcapng");
        for c in "tcp port 6379".chars() {
            form::on_key(&mut form, &key(KeyCode::Char(c)), &());
        }
        form::on_key(&mut form, &key(KeyCode::Tab), &());
        for c in "soon".chars() {
            form::on_key(&mut form, &key(KeyCode::Char(c)), &());
        }
        match form::on_key(&mut form, &key(KeyCode::Enter), &()) {
            Answer::Refused(why) => assert!(why.contains("invalid duration"), "{why}"),
            other => panic!("a bad duration is refused: {other:?}"),
        }
        for _ in 0..4 {
            form::on_key(&mut form, &key(KeyCode::Backspace), &());
        }
        for c in "30s".chars() {
            form::on_key(&mut form, &key(KeyCode::Char(c)), &());
        }
        // The packet count: a number over 0, or nothing.
        form::on_key(&mut form, &key(KeyCode::Tab), &());
        for c in "-3".chars() {
            form::on_key(&mut form, &key(KeyCode::Char(c)), &());
        }
        match form::on_key(&mut form, &key(KeyCode::Enter), &()) {
            Answer::Refused(why) => assert!(why.contains("not a number of packets"), "{why}"),
            other => panic!("a bad count is refused: {other:?}"),
        }
        for _ in 0..2 {
            form::on_key(&mut form, &key(KeyCode::Backspace), &());
        }
        for c in "100".chars() {
            form::on_key(&mut form, &key(KeyCode::Char(c)), &());
        }
        // The interface is prefilled; one name, no spaces.
        form::on_key(&mut form, &key(KeyCode::Tab), &());
        assert_eq!(form.interface.as_str(), "any");
        for c in " lo".chars() {
            form::on_key(&mut form, &key(KeyCode::Char(c)), &());
        }
        match form::on_key(&mut form, &key(KeyCode::Enter), &()) {
            Answer::Refused(why) => assert!(why.contains("one interface"), "{why}"),
            other => panic!("two interfaces are refused: {other:?}"),
        }
        for _ in 0.."any lo".len() {
            form::on_key(&mut form, &key(KeyCode::Backspace), &());
        }
        for c in "eth0".chars() {
            form::on_key(&mut form, &key(KeyCode::Char(c)), &());
        }
        // The image, prefilled with netshoot, is checked as a reference.
        form::on_key(&mut form, &key(KeyCode::Tab), &());
        assert_eq!(form.image.as_str(), capture_model::DEFAULT_IMAGE);
        form::on_key(&mut form, &key(KeyCode::Char('!')), &());
        match form::on_key(&mut form, &key(KeyCode::Enter), &()) {
            Answer::Refused(why) => assert!(why.contains("not a valid image reference"), "{why}"),
            other => panic!("a bad image is refused: {other:?}"),
        }
        form::on_key(&mut form, &key(KeyCode::Backspace), &());
        match form::on_key(&mut form, &key(KeyCode::Enter), &()) {
            Answer::Send(asked) => {
                assert_eq!(asked.filter.as_deref(), Some("tcp port 6379"));
                assert_eq!(asked.duration, Some(std::time::Duration::from_secs(30)));
                assert_eq!(asked.count, Some(100));
                assert_eq!(asked.interface, "eth0");
                assert_eq!(asked.image, capture_model::DEFAULT_IMAGE);
                assert_eq!(asked.file, "/tmp/dl/redis-0.pcap");
            }
            other => panic!("the form sends: {other:?}"),
        }
    }

    #[test]
    fn file_names_are_quoted_for_the_shell_when_they_need_it() {
        assert_eq!(shell_quoted("/tmp/dl/redis-0.pcap"), "/tmp/dl/redis-0.pcap");
        assert_eq!(shell_quoted("/tmp/my dump.pcap"), "'/tmp/my dump.pcap'");
        assert_eq!(shell_quoted("it's.pcap"), r"'it'\''s.pcap'");
    }
}
