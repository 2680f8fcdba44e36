//! The conditions timeline of the resource screen (`t`): shown instead of spec and status,
//! scrolled on its own. What it holds is gathered as the object is read again
//! ([`crate::tui::state::ResourceScreen::show`]); this is only the keys.

use crate::tui::action::Effect;
use crate::tui::state::{ResourceScreen, Screen, State};

/// `t` on a resource: the timeline shown, or spec and status again.
pub(super) fn toggle(state: &mut State) -> Vec<Effect> {
    if let Screen::Resource(r) = state.screen_mut() {
        r.timeline_shown = match r.timeline_shown {
            Some(_) => None,
            None => Some(0),
        };
    }
    vec![]
}

/// Moves the timeline `n` rows (its last row stays reachable).
pub(super) fn scroll(r: &mut ResourceScreen, n: isize) {
    let last = r.timeline.len().saturating_sub(1);
    if let Some(at) = &mut r.timeline_shown {
        *at = at.saturating_add_signed(n).min(last);
    }
}
