//! The feed's list/watch loop as a pure state machine: which phase comes
//! next after each list and watch, and what the consumer is told, with no
//! I/O, so every transition is a unit test. `feed` runs it: it does the
//! requests, reports what happened, and carries out what `step` asks.

/// What the loop does next.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) enum Phase {
    /// List every page, then watch from the list's version.
    #[default]
    List,
    /// Watch from `from`; `fresh` when a list has just given it (a 410
    /// Gone then is a server that cannot watch, not a compaction).
    Watch { from: String, fresh: bool },
}

/// How a watch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    /// At (or near) the timeout asked for.
    Timeout,
    /// Early, without an error: a cut connection.
    Cut,
    /// At once after an event.
    Short,
    /// At once, without an event.
    Empty,
    /// The version watched from was compacted away.
    Gone,
    /// With an error.
    Failed,
}

/// What a phase came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Happened {
    /// The list is whole, at this version.
    Listed(String),
    /// The list failed (its failure already said and waited out).
    ListFailed,
    /// The watch was not opened: 410 Gone, or another error.
    Refused { gone: bool },
    /// The watch was opened.
    Opened,
    /// The watch ended so, its newest version seen `last`.
    Ended { ending: Ending, last: String },
}

/// What the consumer is told, or why the loop backs off, before the next
/// phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Act {
    /// The view is live again after it was said to lag.
    Resumed,
    /// The watch was cut: the view may lag until it resumes.
    Cut,
    /// Back off, saying the error at hand.
    Failed,
    /// Back off: the server answers watches with nothing at once.
    EmptyWatch,
    /// Back off: 410 Gone even to a watch from the list just made.
    GoneAfterList,
    /// Back off: the server ends every watch as soon as it delivers.
    EndsEveryWatch,
}

/// Where the loop is between phases.
#[derive(Debug, Default)]
pub(super) struct Cycle {
    pub phase: Phase,
    /// The consumer was told the view lags: a `Resumed` is owed.
    interrupted: bool,
    /// The last watch ended at once after an event.
    short_before: bool,
}

impl Cycle {
    /// Takes what the current phase came to; sets the next phase and says
    /// what to do first.
    pub fn step(&mut self, happened: Happened) -> Option<Act> {
        let fresh = matches!(self.phase, Phase::Watch { fresh: true, .. });
        match happened {
            Happened::Listed(version) => {
                self.interrupted = false;
                self.phase = Phase::Watch {
                    from: version,
                    fresh: true,
                };
                None
            }
            Happened::ListFailed => {
                self.interrupted = true;
                self.phase = Phase::List;
                None
            }
            Happened::Refused { gone: true } => self.list_again(fresh),
            Happened::Refused { gone: false } => {
                self.interrupted = true;
                if let Phase::Watch { fresh, .. } = &mut self.phase {
                    *fresh = false;
                }
                Some(Act::Failed)
            }
            Happened::Opened => std::mem::take(&mut self.interrupted).then_some(Act::Resumed),
            Happened::Ended { ending, last } => {
                if ending != Ending::Short {
                    self.short_before = false;
                }
                if ending == Ending::Gone {
                    return self.list_again(fresh);
                }
                self.phase = Phase::Watch {
                    from: last,
                    fresh: false,
                };
                let act = match ending {
                    Ending::Timeout => return None,
                    Ending::Cut => Act::Cut,
                    Ending::Empty => Act::EmptyWatch,
                    Ending::Failed => Act::Failed,
                    // Once is a load balancer's cut landing just after a
                    // resume; twice in a row is a server ending every watch.
                    Ending::Short if std::mem::replace(&mut self.short_before, true) => {
                        Act::EndsEveryWatch
                    }
                    Ending::Short => Act::Cut,
                    Ending::Gone => unreachable!("listed again above"),
                };
                self.interrupted = true;
                Some(act)
            }
        }
    }

    /// 410 Gone: list again, at once, unless the watch was from the list
    /// just made, which then keeps failing: with back-off.
    fn list_again(&mut self, fresh: bool) -> Option<Act> {
        self.interrupted = true;
        self.phase = Phase::List;
        fresh.then_some(Act::GoneAfterList)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watching(from: &str, fresh: bool) -> Phase {
        Phase::Watch {
            from: from.into(),
            fresh,
        }
    }

    fn ended(ending: Ending, last: &str) -> Happened {
        Happened::Ended {
            ending,
            last: last.into(),
        }
    }

    /// A list, then a watch at its version that times out: watched again
    /// from the newest version, and nothing said.
    #[test]
    fn a_watch_at_its_timeout_is_watched_again_quietly() {
        let mut cycle = Cycle::default();
        assert_eq!(cycle.phase, Phase::List);
        assert_eq!(cycle.step(Happened::Listed("10".into())), None);
        assert_eq!(cycle.phase, watching("10", true));
        assert_eq!(cycle.step(Happened::Opened), None);
        assert_eq!(cycle.step(ended(Ending::Timeout, "17")), None);
        assert_eq!(cycle.phase, watching("17", false));
        assert_eq!(cycle.step(Happened::Opened), None, "nothing was owed");
    }

    /// A cut is said, and the next watch that opens says the view is live
    /// again, once.
    #[test]
    fn a_cut_is_said_and_the_resume_after_it_once() {
        let mut cycle = Cycle::default();
        cycle.step(Happened::Listed("10".into()));
        cycle.step(Happened::Opened);
        assert_eq!(cycle.step(ended(Ending::Cut, "12")), Some(Act::Cut));
        assert_eq!(cycle.phase, watching("12", false));
        assert_eq!(cycle.step(Happened::Opened), Some(Act::Resumed));
        assert_eq!(cycle.step(Happened::Opened), None);
    }

    /// 410 Gone from a watch lists again: at once after a compaction, with
    /// back-off when the watch was from the list just made.
    #[test]
    fn gone_lists_again_backing_off_only_when_the_list_was_just_made() {
        let mut cycle = Cycle::default();
        cycle.step(Happened::Listed("10".into()));
        assert_eq!(
            cycle.step(Happened::Refused { gone: true }),
            Some(Act::GoneAfterList)
        );
        assert_eq!(cycle.phase, Phase::List);
        cycle.step(Happened::Listed("11".into()));
        cycle.step(Happened::Opened);
        cycle.step(ended(Ending::Timeout, "20"));
        assert_eq!(cycle.step(ended(Ending::Gone, "20")), None);
        assert_eq!(cycle.phase, Phase::List);
        // Told the view lags: the list's own rows replace it, and the
        // watch after it owes nothing.
        cycle.step(Happened::Listed("30".into()));
        assert_eq!(cycle.step(Happened::Opened), None);
    }

    /// A watch refused for another reason is retried from the same
    /// version, no longer fresh; a failed list is listed again.
    #[test]
    fn failures_back_off_and_retry_where_they_were() {
        let mut cycle = Cycle::default();
        assert_eq!(cycle.step(Happened::ListFailed), None);
        assert_eq!(cycle.phase, Phase::List);
        cycle.step(Happened::Listed("10".into()));
        assert_eq!(
            cycle.step(Happened::Refused { gone: false }),
            Some(Act::Failed)
        );
        assert_eq!(cycle.phase, watching("10", false));
        // Not fresh any more: a Gone now is a compaction.
        assert_eq!(cycle.step(Happened::Refused { gone: true }), None);
        cycle.step(Happened::Listed("11".into()));
        cycle.step(Happened::Opened);
        assert_eq!(cycle.step(ended(Ending::Failed, "15")), Some(Act::Failed));
        assert_eq!(cycle.phase, watching("15", false));
        assert_eq!(cycle.step(Happened::Opened), Some(Act::Resumed));
    }

    /// A watch answered with nothing at once is a failure; one ending at
    /// once after an event is a cut the first time and a failure the second
    /// time in a row, and a watch that ends otherwise in between forgets it.
    #[test]
    fn watches_that_end_at_once_are_failures_when_they_keep_doing_so() {
        let mut cycle = Cycle::default();
        cycle.step(Happened::Listed("10".into()));
        assert_eq!(
            cycle.step(ended(Ending::Empty, "10")),
            Some(Act::EmptyWatch)
        );
        assert_eq!(cycle.step(ended(Ending::Short, "11")), Some(Act::Cut));
        assert_eq!(
            cycle.step(ended(Ending::Short, "12")),
            Some(Act::EndsEveryWatch)
        );
        assert_eq!(
            cycle.step(ended(Ending::Short, "13")),
            Some(Act::EndsEveryWatch)
        );
        cycle.step(ended(Ending::Timeout, "14"));
        assert_eq!(cycle.step(ended(Ending::Short, "15")), Some(Act::Cut));
        assert_eq!(cycle.phase, watching("15", false));
    }
}
