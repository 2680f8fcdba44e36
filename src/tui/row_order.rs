//! The order a table shows its rows in, kept up to date by the changes since the last
//! frame instead of being rebuilt: with a million rows, a page of a list or a burst of
//! watch events must not cost a sort of everything, nor a regex over every row.
//!
//! Rows live in slots that never move (a removed row leaves a hole the next row may take),
//! so the order can name them by slot across changes. [`RowOrder::prepare`] then does, once
//! per frame at most: the filter on the rows that changed (on all of them only when the
//! filter itself changed), one pass dropping the changed and removed rows from the sorted
//! order, a sort of the changed rows alone, and a merge of the two (an append when a list's
//! pages come in order, as the API sends them). Pure: rows, comparison and filter come in
//! as arguments.

use std::cmp::Ordering;

/// The sorted, filtered order of a table's row slots.
#[derive(Debug, Default)]
pub struct RowOrder {
    /// Every live slot, sorted.
    order: Vec<u32>,
    /// The slots of `order` the filter lets through, in order: what the screen shows.
    view: Vec<u32>,
    /// Per slot: the filter lets it through.
    hits: Vec<bool>,
    /// Per slot: its place in `order` is out of date (changed or removed).
    stale: Vec<bool>,
    /// The slots marked in `stale`, to clear them without a pass over every slot.
    stale_slots: Vec<u32>,
    /// Slots added or changed since the last prepare (their new place is to be found).
    fresh: Vec<u32>,
    /// Sort every slot again (a new list, or another sort).
    resort: bool,
    /// Filter every slot again (another filter).
    refilter: bool,
}

impl RowOrder {
    /// Everything changed (a new list).
    pub fn reset(&mut self) {
        self.order.clear();
        self.fresh.clear();
        self.stale_slots.clear();
        self.stale.clear();
        self.hits.clear();
        self.resort = true;
        self.refilter = true;
    }

    /// The sort changed.
    pub fn resort(&mut self) {
        self.resort = true;
    }

    /// The filter changed.
    pub fn refilter(&mut self) {
        self.refilter = true;
    }

    /// A row was put in `slot` (new, or in place of the one there).
    pub fn put(&mut self, slot: u32) {
        self.mark_stale(slot);
        self.fresh.push(slot);
    }

    /// The row of `slot` went.
    pub fn removed(&mut self, slot: u32) {
        self.mark_stale(slot);
    }

    fn mark_stale(&mut self, slot: u32) {
        let at = slot as usize;
        if self.stale.len() <= at {
            self.stale.resize(at + 1, false);
        }
        if !self.stale[at] {
            self.stale[at] = true;
            self.stale_slots.push(slot);
        }
    }

    /// Whether a change waits for [`prepare`](Self::prepare).
    pub fn is_dirty(&self) -> bool {
        self.resort || self.refilter || !self.stale_slots.is_empty()
    }

    /// The shown slots, in order.
    pub fn view(&self) -> &[u32] {
        &self.view
    }

    /// Brings the order up to date with `rows` (`None`: an empty slot), sorted by `cmp`
    /// (a total order: ties broken by the object's key) and filtered by `lets`.
    pub fn prepare<R>(&mut self, rows: &[Option<R>], cmp: impl Fn(&R, &R) -> Ordering, lets: impl Fn(&R) -> bool) {
        if !self.is_dirty() {
            return;
        }
        let slots = rows.len();
        self.hits.resize(slots, false);
        self.stale.resize(slots, false);
        let live = |s: u32| rows.get(s as usize).and_then(Option::as_ref);
        let by = |a: &u32, b: &u32| match (live(*a), live(*b)) {
            (Some(x), Some(y)) => cmp(x, y),
            _ => Ordering::Equal,
        };
        if self.refilter {
            for (hit, row) in self.hits.iter_mut().zip(rows) {
                *hit = row.as_ref().is_some_and(&lets);
            }
        } else {
            for &s in &self.fresh {
                self.hits[s as usize] = live(s).is_some_and(&lets);
            }
        }
        // Sorting the changed rows and merging costs about what sorting everything does
        // once they are half of it.
        if self.resort || self.fresh.len() > self.order.len() / 2 {
            self.order = (0..slots as u32).filter(|&s| live(s).is_some()).collect();
            self.order.sort_unstable_by(by);
        } else {
            let stale = &self.stale;
            self.order.retain(|&s| !stale[s as usize]);
            self.fresh.sort_unstable();
            self.fresh.dedup();
            self.fresh.retain(|&s| live(s).is_some());
            self.fresh.sort_unstable_by(by);
            self.order = merge(std::mem::take(&mut self.order), &self.fresh, by);
        }
        for s in self.stale_slots.drain(..) {
            self.stale[s as usize] = false;
        }
        self.fresh.clear();
        self.resort = false;
        self.refilter = false;
        let hits = &self.hits;
        self.view.clear();
        self.view.extend(self.order.iter().copied().filter(|&s| hits[s as usize]));
    }
}

/// `a` and `b`, both sorted by `by`, as one sorted vector; `b` after `a` when it all sorts
/// after it (the pages of a list) costs an append.
fn merge(mut a: Vec<u32>, b: &[u32], by: impl Fn(&u32, &u32) -> Ordering) -> Vec<u32> {
    match (a.last(), b.first()) {
        (_, None) => return a,
        (Some(last), Some(first)) if by(last, first) != Ordering::Greater => {
            a.extend_from_slice(b);
            return a;
        }
        (None, _) => return b.to_vec(),
        _ => {}
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if by(&b[j], &a[i]) == Ordering::Less {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(order: &mut RowOrder, rows: &[Option<u32>], keep: impl Fn(&u32) -> bool) -> Vec<u32> {
        order.prepare(rows, |a, b| a.cmp(b), keep);
        order.view().iter().map(|&s| rows[s as usize].expect("live")).collect()
    }

    #[test]
    fn changes_move_rows_to_their_place_and_holes_are_reused() {
        let mut rows: Vec<Option<u32>> = [50, 10, 30].map(Some).to_vec();
        let mut o = RowOrder::default();
        o.reset();
        assert_eq!(prepared(&mut o, &rows, |_| true), [10, 30, 50]);
        // A page that sorts after everything, a change that moves a row, a removal.
        rows.extend([Some(60), Some(70)]);
        o.put(3);
        o.put(4);
        rows[1] = Some(55);
        o.put(1);
        rows[2] = None;
        o.removed(2);
        assert_eq!(prepared(&mut o, &rows, |_| true), [50, 55, 60, 70]);
        // The hole taken by a new row, which sorts first.
        rows[2] = Some(1);
        o.put(2);
        assert_eq!(prepared(&mut o, &rows, |_| true), [1, 50, 55, 60, 70]);
        assert!(!o.is_dirty(), "nothing left to do");
    }

    #[test]
    fn the_filter_runs_on_changed_rows_and_on_all_only_when_it_changes() {
        let rows: Vec<Option<u32>> = (0..100).map(Some).collect();
        let mut o = RowOrder::default();
        o.reset();
        let calls = std::cell::Cell::new(0);
        let even = |v: &u32| {
            calls.set(calls.get() + 1);
            v.is_multiple_of(2)
        };
        assert_eq!(prepared(&mut o, &rows, even).len(), 50);
        assert_eq!(calls.replace(0), 100);
        o.put(7);
        assert_eq!(prepared(&mut o, &rows, even).len(), 50);
        assert_eq!(calls.replace(0), 1, "one row changed: one row filtered");
        o.refilter();
        assert_eq!(prepared(&mut o, &rows, |v| *v < 10), (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn merging_keeps_the_order_whichever_side_a_row_comes_from() {
        let by = |a: &u32, b: &u32| a.cmp(b);
        assert_eq!(merge(vec![1, 4, 9], &[2, 3, 10], by), [1, 2, 3, 4, 9, 10]);
        assert_eq!(merge(vec![1, 2], &[3], by), [1, 2, 3]);
        assert_eq!(merge(vec![], &[3], by), [3]);
        assert_eq!(merge(vec![5], &[], by), [5]);
    }
}
