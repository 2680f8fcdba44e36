//! When the TUI draws: at once after a key (the user waits for it), at most once a frame
//! period after changes from the cluster (a watch can bring a thousand a second; drawing
//! each would spend a core on frames nobody can see), and not at all while nothing changed.
//! Pure: the loop says what happened and asks when to draw.

use std::time::{Duration, Instant};

/// The shortest time between two frames drawn for cluster changes (60 a second).
pub const FRAME: Duration = Duration::from_micros(16_667);

/// What the loop tells the pacer, and what it asks.
#[derive(Debug, Clone, Default)]
pub struct Pacer {
    last: Option<Instant>,
    /// Something changed since the last frame.
    dirty: bool,
    /// A key or a resize: draw without waiting.
    urgent: bool,
}

impl Pacer {
    /// The screen changed because of the user (a key, a click, a resize).
    pub fn input(&mut self) {
        self.dirty = true;
        self.urgent = true;
    }

    /// The screen changed because of the cluster (a watch event, an answer, the clock).
    pub fn changed(&mut self) {
        self.dirty = true;
    }

    /// Whether to draw now.
    pub fn due(&self, now: Instant) -> bool {
        self.dirty && (self.urgent || self.last.is_none_or(|l| now.duration_since(l) >= FRAME))
    }

    /// A frame was drawn at `now`.
    pub fn drawn(&mut self, now: Instant) {
        self.last = Some(now);
        self.dirty = false;
        self.urgent = false;
    }

    /// When the loop must wake to draw a change it holds back (`None`: nothing waits).
    pub fn deadline(&self) -> Option<Instant> {
        let last = self.last?;
        (self.dirty && !self.urgent).then(|| last + FRAME)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_draw_at_once_and_changes_at_most_once_a_frame() {
        let t0 = Instant::now();
        let mut p = Pacer::default();
        p.changed();
        assert!(p.due(t0), "the first frame is not held back");
        p.drawn(t0);
        assert!(!p.due(t0), "nothing changed");
        assert_eq!(p.deadline(), None);

        let soon = t0 + Duration::from_millis(2);
        p.changed();
        assert!(!p.due(soon), "a change within the frame waits");
        assert_eq!(p.deadline(), Some(t0 + FRAME));
        assert!(p.due(t0 + FRAME));

        p.input();
        assert!(p.due(soon), "a key does not wait");
        assert_eq!(p.deadline(), None, "it is drawn now, not later");
        p.drawn(soon);
        assert!(!p.due(soon + FRAME), "drawn: clean until the next change");
    }
}
