//! `tracer replay`: a trace's messages one at a time, in the order they happened. The stepping
//! and pacing (`ReplayState`) are pure; `source` loads a trace from the store or a JSON hop log;
//! `plain` prints the steps with no TUI. The TUI draws a `ReplayState` in its trace view.

pub mod plain;
pub mod source;

/// Where a replay is: the current message (0-based), and whether it plays on by itself.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayState {
    pub step: usize,
    pub total: usize,
    pub playing: bool,
    /// 1.0 plays at the recorded pace, 2.0 twice as fast.
    pub speed: f64,
    /// When (monotonic ns) playing moves to the next message.
    pub due_ns: Option<i64>,
}

impl ReplayState {
    pub fn new(total: usize, speed: f64) -> Self {
        Self {
            step: 0,
            total,
            playing: false,
            speed: if speed > 0.0 { speed } else { 1.0 },
            due_ns: None,
        }
    }

    pub fn at_end(&self) -> bool {
        self.step + 1 >= self.total
    }

    pub fn next(&mut self) {
        if !self.at_end() {
            self.step += 1;
        }
        self.pause_if_done();
    }

    pub fn back(&mut self) {
        self.step = self.step.saturating_sub(1);
    }

    pub fn first(&mut self) {
        self.step = 0;
    }

    pub fn last(&mut self) {
        self.step = self.total.saturating_sub(1);
        self.pause_if_done();
    }

    /// Starts or stops playing; playing from the last message starts again from the first.
    /// `times` are the messages' recorded times (ns), one per message.
    pub fn toggle_play(&mut self, now_ns: i64, times: &[i64]) {
        if self.playing {
            self.playing = false;
            self.due_ns = None;
            return;
        }
        if self.at_end() {
            self.step = 0;
        }
        self.playing = self.total > 1;
        self.schedule(now_ns, times);
    }

    /// Moves on when playing and the next message is due; true when the step changed.
    pub fn tick(&mut self, now_ns: i64, times: &[i64]) -> bool {
        match self.due_ns {
            Some(due) if self.playing && now_ns >= due => {
                self.step += 1;
                self.pause_if_done();
                if self.playing {
                    self.schedule(due, times);
                }
                true
            }
            _ => false,
        }
    }

    /// How long after message `step` the next one came, at this speed.
    pub fn delay_ns(&self, times: &[i64]) -> i64 {
        match (times.get(self.step), times.get(self.step + 1)) {
            (Some(now), Some(next)) => ((next - now).max(0) as f64 / self.speed) as i64,
            _ => 0,
        }
    }

    fn schedule(&mut self, from_ns: i64, times: &[i64]) {
        self.due_ns = self
            .playing
            .then(|| from_ns.saturating_add(self.delay_ns(times)));
    }

    fn pause_if_done(&mut self) {
        if self.at_end() {
            self.playing = false;
            self.due_ns = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_plays_at_the_recorded_pace() {
        let times = [0, 100, 400];
        let mut replay = ReplayState::new(3, 2.0);
        replay.back();
        assert_eq!(replay.step, 0);
        replay.toggle_play(1_000, &times);
        assert_eq!(
            replay.due_ns,
            Some(1_050),
            "100 ns apart at twice the speed"
        );
        assert!(!replay.tick(1_049, &times));
        assert!(replay.tick(1_050, &times));
        assert_eq!((replay.step, replay.due_ns), (1, Some(1_200)));
        assert!(replay.tick(5_000, &times));
        assert_eq!(replay.step, 2);
        assert!(!replay.playing, "stops at the last message");
        replay.toggle_play(6_000, &times);
        assert_eq!(replay.step, 0, "playing from the end starts again");
        replay.toggle_play(6_001, &times);
        assert!(!replay.playing);
        replay.last();
        replay.next();
        assert_eq!(replay.step, 2);
        replay.first();
        assert_eq!(replay.step, 0);
    }
}
