//! Channel health: a circuit breaker per channel, driven by the results of
//! its attempts. Pure: it keeps counts and decides transitions; the engine
//! (`actors::health`) feeds it, stores its transitions and tells the
//! project's event endpoints.
//!
//! Rules (docs/API.md "Channel health"):
//! - a failure is the provider being unavailable (unreachable, timed out,
//!   408/429/5xx); a rejection of one message (another 4xx) is not one;
//! - the circuit opens ("degraded") after `consecutive` failures in a row,
//!   or when at least `min_attempts` attempts within `window_ms` failed at
//!   `ratio` or more;
//! - while open nothing is sent through the channel (its deliveries go to
//!   their backups, or wait); after `cooldown_ms` one probe attempt is let
//!   through: an answer that is not a failure closes it ("ok"), a failure
//!   opens it for another cool-down;
//! - the open/closed state is shared by the nodes of a cluster through the
//!   store (`adopt`); the counts are each node's own.

use std::collections::VecDeque;

/// When a circuit opens and how long it stays open.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    pub consecutive: u32,
    pub min_attempts: usize,
    pub ratio: f64,
    pub window_ms: i64,
    pub cooldown_ms: i64,
}

/// The default cool-down: 30 s.
pub const DEFAULT_COOLDOWN_MS: i64 = 30_000;

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            consecutive: 5,
            min_attempts: 20,
            ratio: 0.5,
            window_ms: 60_000,
            cooldown_ms: DEFAULT_COOLDOWN_MS,
        }
    }
}

/// What an attempt's answer says about its channel.
#[derive(Debug, Clone, PartialEq)]
pub enum Signal {
    /// Sent, or refused for the message's own sake (a 4xx): the provider
    /// answers.
    Answered,
    /// The provider is unavailable, with what it said.
    Failure(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Closed,
    /// Open since `since`; a probe may go at `probe_at`.
    Open {
        since: i64,
        probe_at: i64,
    },
    /// Open, a probe let through at `started` and not answered yet.
    Probing {
        since: i64,
        started: i64,
    },
}

/// Whether an attempt may call the channel now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Admit {
    Go,
    /// The circuit is open and this attempt is its probe.
    Probe,
    /// The circuit is open: not before `until` (ms).
    Wait {
        until: i64,
    },
}

/// A change of the circuit's state, to store and tell.
#[derive(Debug, Clone, PartialEq)]
pub enum Transition {
    Opened { since: i64, last_error: String },
    Closed { since: i64 },
}

/// One channel's circuit.
#[derive(Debug, Clone)]
pub struct Breaker {
    state: State,
    consecutive: u32,
    /// Recent attempts (ms, failed) within the window, oldest first.
    recent: VecDeque<(i64, bool)>,
    last_error: Option<String>,
}

impl Default for Breaker {
    fn default() -> Self {
        Breaker {
            state: State::Closed,
            consecutive: 0,
            recent: VecDeque::new(),
            last_error: None,
        }
    }
}

impl Breaker {
    /// Whether the circuit is open (`degraded`).
    pub fn is_open(&self) -> bool {
        self.state != State::Closed
    }

    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// Whether an attempt may call the channel at `now` (ms). A probe not
    /// answered within a cool-down (its result lost) lets another through.
    pub fn admit(&mut self, now: i64, t: &Thresholds) -> Admit {
        match self.state {
            State::Closed => Admit::Go,
            State::Open { since, probe_at } if now >= probe_at => {
                self.state = State::Probing {
                    since,
                    started: now,
                };
                Admit::Probe
            }
            State::Open { probe_at, .. } => Admit::Wait { until: probe_at },
            State::Probing { since, started } if now - started >= t.cooldown_ms => {
                self.state = State::Probing {
                    since,
                    started: now,
                };
                Admit::Probe
            }
            State::Probing { started, .. } => Admit::Wait {
                until: started + t.cooldown_ms.min(1000),
            },
        }
    }

    /// Records an attempt's answer at `now`; the transition it makes.
    pub fn record(&mut self, now: i64, s: Signal, t: &Thresholds) -> Option<Transition> {
        while self
            .recent
            .front()
            .is_some_and(|(at, _)| now - at > t.window_ms)
        {
            self.recent.pop_front();
        }
        let failed = matches!(s, Signal::Failure(_));
        if let Signal::Failure(e) = s {
            self.last_error = Some(e);
        }
        match self.state {
            State::Closed => {
                self.recent.push_back((now, failed));
                self.consecutive = if failed { self.consecutive + 1 } else { 0 };
                let n = self.recent.len();
                let bad = self.recent.iter().filter(|(_, f)| *f).count();
                let by_ratio = n >= t.min_attempts && bad as f64 >= t.ratio * n as f64;
                if failed && (self.consecutive >= t.consecutive || by_ratio) {
                    return Some(self.open(now, t));
                }
                None
            }
            // Any answer closes it: the probe's, or one of an attempt in
            // flight when it opened.
            State::Open { .. } | State::Probing { .. } if !failed => Some(self.close(now)),
            State::Probing { since, .. } => {
                self.state = State::Open {
                    since,
                    probe_at: now + t.cooldown_ms,
                };
                None
            }
            State::Open { .. } => None,
        }
    }

    fn open(&mut self, now: i64, t: &Thresholds) -> Transition {
        self.state = State::Open {
            since: now,
            probe_at: now + t.cooldown_ms,
        };
        Transition::Opened {
            since: now,
            last_error: self.last_error.clone().unwrap_or_default(),
        }
    }

    fn close(&mut self, now: i64) -> Transition {
        self.state = State::Closed;
        self.consecutive = 0;
        self.recent.clear();
        Transition::Closed { since: now }
    }

    /// Follows the state another node stored: `degraded` since `since`
    /// opens this node's circuit too (a probe after the cool-down from
    /// then), `ok` closes it. No transition: the other node told.
    pub fn adopt(&mut self, degraded: Option<(i64, Option<&str>)>, t: &Thresholds) {
        match (degraded, self.state) {
            (Some((since, e)), State::Closed) => {
                self.state = State::Open {
                    since,
                    probe_at: since + t.cooldown_ms,
                };
                self.last_error = e.map(str::to_string);
            }
            (None, State::Open { .. } | State::Probing { .. }) => {
                self.state = State::Closed;
                self.consecutive = 0;
                self.recent.clear();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> Thresholds {
        Thresholds {
            cooldown_ms: 1000,
            ..Default::default()
        }
    }

    fn fail() -> Signal {
        Signal::Failure("HTTP 500".into())
    }

    #[test]
    fn five_failures_in_a_row_open_it() {
        let (mut b, t) = (Breaker::default(), t());
        for i in 0..4 {
            assert_eq!(b.record(i, fail(), &t), None);
        }
        assert_eq!(b.admit(4, &t), Admit::Go);
        assert_eq!(
            b.record(4, fail(), &t),
            Some(Transition::Opened {
                since: 4,
                last_error: "HTTP 500".into()
            })
        );
        assert!(b.is_open());
        assert_eq!(b.admit(5, &t), Admit::Wait { until: 1004 });
    }

    #[test]
    fn an_answer_between_failures_resets_the_run() {
        let (mut b, t) = (Breaker::default(), t());
        for i in 0..4 {
            b.record(i, fail(), &t);
        }
        b.record(4, Signal::Answered, &t);
        for i in 5..9 {
            assert_eq!(b.record(i, fail(), &t), None);
        }
        assert!(!b.is_open());
    }

    #[test]
    fn half_of_twenty_attempts_in_a_minute_opens_it() {
        let (mut b, t) = (Breaker::default(), t());
        // alternate: never 5 in a row, 50% failed
        let mut opened = None;
        for i in 0..20 {
            let s = if i % 2 == 0 { Signal::Answered } else { fail() };
            if let Some(tr) = b.record(i, s, &t) {
                opened = Some((i, tr));
            }
        }
        assert!(matches!(opened, Some((19, Transition::Opened { .. }))));
        // the same spread over more than a minute does not
        let mut b = Breaker::default();
        for i in 0..40 {
            let s = if i % 2 == 0 { Signal::Answered } else { fail() };
            assert_eq!(b.record(i * 10_000, s, &t), None);
        }
    }

    #[test]
    fn after_the_cool_down_one_probe_goes_and_its_answer_decides() {
        let (mut b, t) = (Breaker::default(), t());
        for i in 0..5 {
            b.record(i, fail(), &t);
        }
        assert_eq!(b.admit(500, &t), Admit::Wait { until: 1004 });
        assert_eq!(b.admit(1004, &t), Admit::Probe);
        // only one probe at a time
        assert!(matches!(b.admit(1005, &t), Admit::Wait { .. }));
        // a failed probe: another cool-down
        assert_eq!(b.record(1010, fail(), &t), None);
        assert_eq!(b.admit(1500, &t), Admit::Wait { until: 2010 });
        assert_eq!(b.admit(2010, &t), Admit::Probe);
        assert_eq!(
            b.record(2020, Signal::Answered, &t),
            Some(Transition::Closed { since: 2020 })
        );
        assert_eq!(b.admit(2021, &t), Admit::Go);
    }

    #[test]
    fn another_nodes_state_is_adopted() {
        let (mut b, t) = (Breaker::default(), t());
        b.adopt(Some((100, Some("HTTP 503"))), &t);
        assert!(b.is_open());
        assert_eq!(b.last_error(), Some("HTTP 503"));
        assert_eq!(b.admit(200, &t), Admit::Wait { until: 1100 });
        b.adopt(None, &t);
        assert_eq!(b.admit(300, &t), Admit::Go);
    }
}
