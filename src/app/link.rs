//! The pod list's link to the cluster, as the header shows it.

use super::LinkState;

/// Ticks (one a second) a reconnect stays on screen at least, so a
/// flapping watch that resumes within milliseconds is seen, not flashed.
const HOLD_TICKS: u8 = 2;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    state: LinkState,
    /// Ticks left before a reconnect may be cleared.
    hold: u8,
    /// The link came back during the hold.
    back: bool,
    /// The sentence saying why, while a request is failing.
    trouble: Option<String>,
    /// Seconds the API server has not answered the liveness probe.
    unanswered: Option<u64>,
}

impl Default for Link {
    fn default() -> Self {
        Link {
            state: LinkState::Connecting,
            hold: 0,
            back: false,
            trouble: None,
            unanswered: None,
        }
    }
}

impl Link {
    pub fn new() -> Self {
        Link::default()
    }

    pub fn state(&self) -> LinkState {
        self.state
    }

    /// A new context or scope: nothing is known yet.
    pub fn connecting(&mut self) {
        *self = Link::new();
    }

    /// Why requests are failing, while they are.
    pub fn trouble(&self) -> Option<&str> {
        self.trouble.as_deref()
    }

    /// How long the API server has left a request unanswered, once that is
    /// long enough to say (a stopped or wedged server, or a dead link that
    /// no error reports).
    pub fn unanswered(&self) -> Option<u64> {
        self.unanswered
    }

    /// The liveness probe's news: unanswered for this many seconds, or
    /// answered (`None`).
    pub fn pulse(&mut self, unanswered: Option<u64>) {
        self.unanswered = unanswered;
    }

    /// The watch is behind: cut (no sentence) or failing (`trouble` says why).
    pub fn reconnecting(&mut self, trouble: Option<String>) {
        self.state = LinkState::Reconnecting;
        self.hold = HOLD_TICKS;
        self.back = false;
        if trouble.is_some() {
            self.trouble = trouble;
        }
    }

    /// Data flows (or a watch runs) again. Returns the trouble sentence
    /// that no longer holds, if there was one.
    pub fn live(&mut self) -> Option<String> {
        self.answers();
        self.trouble.take()
    }

    /// The server answers (a page of a list), but the trouble is kept, to
    /// be cleared when the list is whole.
    pub fn answers(&mut self) {
        if self.state == LinkState::Reconnecting && self.hold > 0 {
            self.back = true;
        } else {
            self.state = LinkState::Live;
        }
    }

    pub fn tick(&mut self) {
        if self.hold == 0 {
            return;
        }
        self.hold -= 1;
        if self.hold == 0 && std::mem::take(&mut self.back) {
            self.state = LinkState::Live;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reconnect_that_heals_at_once_stays_visible_for_the_hold() {
        let mut link = Link::new();
        link.live();
        assert_eq!(link.state(), LinkState::Live);
        link.reconnecting(None);
        link.live();
        assert_eq!(link.state(), LinkState::Reconnecting);
        link.tick();
        assert_eq!(link.state(), LinkState::Reconnecting);
        link.tick();
        assert_eq!(link.state(), LinkState::Live);
    }

    #[test]
    fn a_reconnect_that_lasts_clears_when_the_link_is_back() {
        let mut link = Link::new();
        link.reconnecting(None);
        for _ in 0..5 {
            link.tick();
        }
        assert_eq!(link.state(), LinkState::Reconnecting);
        link.live();
        assert_eq!(link.state(), LinkState::Live);
    }

    #[test]
    fn connecting_forgets_a_pending_reconnect() {
        let mut link = Link::new();
        link.reconnecting(None);
        link.live();
        link.connecting();
        link.tick();
        link.tick();
        assert_eq!(link.state(), LinkState::Connecting);
    }
}
