//! The windows of recently closed ids (completed runs and proposals, ended actions, runs and
//! proposals seen without their start): the last `CLOSED_WINDOW` inserts are remembered, of
//! which those not removed or inserted again since are in the window; when the window is full,
//! each insert forgets the oldest.
//!
//! Each id is stored once. A window fills in a long journal (65,536 ids each), and with the id in
//! both a map and an order queue, plus a `String` per value, the full windows were most of the
//! growth of peak memory from a 100 MB to a 1 GB journal (docs/journals.md). Here the inserts are
//! a ring of ids beside a ring of their values while in the window, and the table holds only the
//! generations of the inserts in the window, compared through the ids they point at.

use std::collections::VecDeque;

use hashbrown::HashTable;

use super::CLOSED_WINDOW;

/// How many inserts make a window take its full size (`reserve_whole_window`).
const LONG: usize = CLOSED_WINDOW / 16;

pub(super) struct ClosedWindow<V> {
    /// The ids of the last inserts, oldest first.
    ids: VecDeque<Box<str>>,
    /// Each insert's value while it is in the window, beside `ids` rather than in a tuple with
    /// the id: a `()` or a thin pointer then costs its own size, not the tuple's padding.
    values: VecDeque<Option<V>>,
    /// The generation of the newest insert (the first insert of a fresh window is 1).
    generation: u64,
    /// The generations of the inserts in the window, by their ids' hashes, as their low 32 bits
    /// (`slot` tells them apart: the ring is far shorter than 2^32): half the table's size.
    live: HashTable<u32>,
    /// The ids come from the journal: a random state keeps chosen collisions out (HashDoS).
    hasher: ahash::RandomState,
}

impl<V> ClosedWindow<V> {
    pub(super) fn new() -> Self {
        ClosedWindow {
            ids: VecDeque::new(),
            values: VecDeque::new(),
            generation: 0,
            live: HashTable::new(),
            hasher: ahash::RandomState::new(),
        }
    }

    /// A window as saved (`inserts`, the newest being generation `generation`); `Err` when an
    /// id is twice in it.
    pub(super) fn restore(
        generation: u64,
        inserts: impl IntoIterator<Item = (Box<str>, Option<V>)>,
    ) -> Result<Self, &'static str> {
        let mut window = ClosedWindow::new();
        let inserts = inserts.into_iter();
        if inserts.size_hint().0 >= LONG {
            window.reserve_whole_window();
        }
        for (id, value) in inserts {
            window.ids.push_back(id);
            window.values.push_back(value);
        }
        window.generation = generation;
        let first = window.first_generation();
        for index in 0..window.ids.len() {
            if window.values[index].is_none() {
                continue;
            }
            let id = &window.ids[index];
            if window.find(id).is_some() {
                return Err("a key twice in a window");
            }
            let hash = window.hasher.hash_one(&**id);
            let (ids, hasher) = (&window.ids, &window.hasher);
            window
                .live
                .insert_unique(hash, (first + index as u64) as u32, |&generation| {
                    hasher.hash_one(&*ids[slot(ids, first, generation)])
                });
        }
        Ok(window)
    }

    /// The generation of the newest insert.
    pub(super) fn generation(&self) -> u64 {
        self.generation
    }

    /// The inserts, oldest first: each id with its value while it is in the window.
    pub(super) fn inserts(&self) -> impl Iterator<Item = (&str, Option<&V>)> {
        self.ids
            .iter()
            .zip(&self.values)
            .map(|(id, value)| (&**id, value.as_ref()))
    }

    fn first_generation(&self) -> u64 {
        self.generation + 1 - self.ids.len() as u64
    }

    fn find(&self, id: &str) -> Option<u32> {
        let first = self.first_generation();
        let ids = &self.ids;
        self.live
            .find(self.hasher.hash_one(id), |&generation| {
                &*ids[slot(ids, first, generation)] == id
            })
            .copied()
    }

    pub(super) fn get(&self, id: &str) -> Option<&V> {
        let generation = self.find(id)?;
        let first = self.first_generation();
        self.values[slot(&self.ids, first, generation)].as_ref()
    }

    pub(super) fn insert(&mut self, id: &str, value: V) {
        if self.ids.len() >= CLOSED_WINDOW {
            self.forget_oldest();
        } else if self.ids.len() == LONG {
            self.reserve_whole_window();
        }
        // An earlier insert of the same id is superseded: it stays in the ring as gone.
        self.remove(id);
        self.ids.push_back(id.into());
        self.values.push_back(Some(value));
        self.generation += 1;
        let first = self.first_generation();
        let (ids, hasher) = (&self.ids, &self.hasher);
        self.live
            .insert_unique(hasher.hash_one(id), self.generation as u32, |&generation| {
                hasher.hash_one(&*ids[slot(ids, first, generation)])
            });
    }

    pub(super) fn remove(&mut self, id: &str) {
        let first = self.first_generation();
        let ids = &self.ids;
        let found = self
            .live
            .find_entry(self.hasher.hash_one(id), |&generation| {
                &*ids[slot(ids, first, generation)] == id
            })
            .ok()
            .map(|entry| entry.remove().0);
        if let Some(generation) = found {
            let index = slot(&self.ids, first, generation);
            self.values[index] = None;
        }
    }

    /// A window this long is in a long journal, which fills it: it takes its full size at once.
    /// Growing on by doubling held the old and the new arrays together at every step, the peak
    /// memory of a long check; a short journal never pays for the full size.
    fn reserve_whole_window(&mut self) {
        let more = CLOSED_WINDOW - self.ids.len();
        self.ids.reserve_exact(more);
        self.values.reserve_exact(more);
        let first = self.first_generation();
        let (ids, hasher) = (&self.ids, &self.hasher);
        self.live.reserve(more, |&generation| {
            hasher.hash_one(&*ids[slot(ids, first, generation)])
        });
    }

    fn forget_oldest(&mut self) {
        let oldest = self.first_generation();
        let id = self.ids.pop_front();
        if let (Some(id), Some(Some(_))) = (id, self.values.pop_front()) {
            if let Ok(entry) = self
                .live
                .find_entry(self.hasher.hash_one(&*id), |&generation| {
                    generation == oldest as u32
                })
            {
                entry.remove();
            }
        }
    }
}

/// Where the insert of `generation` (its low 32 bits) lies in `ids`, whose oldest is generation
/// `first`.
fn slot<T>(ids: &VecDeque<T>, first: u64, generation: u32) -> usize {
    let index = generation.wrapping_sub(first as u32) as usize;
    debug_assert!(index < ids.len());
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_forgets_the_oldest_insert() {
        let mut window: ClosedWindow<()> = ClosedWindow::new();
        for id in 0..=CLOSED_WINDOW {
            window.insert(&id.to_string(), ());
        }
        assert!(window.get("0").is_none());
        assert!(window.get("1").is_some());
        assert_eq!(window.inserts().count(), CLOSED_WINDOW);
        assert_eq!(window.live.len(), CLOSED_WINDOW);
    }

    #[test]
    fn a_superseded_or_removed_insert_counts_until_it_is_forgotten() {
        let mut window: ClosedWindow<u32> = ClosedWindow::new();
        window.insert("a", 1);
        window.insert("b", 2);
        window.insert("a", 3);
        window.remove("b");
        assert_eq!(window.get("a"), Some(&3));
        assert_eq!(window.get("b"), None);
        let inserts: Vec<_> = window.inserts().collect();
        assert_eq!(
            inserts,
            vec![("a", None), ("b", None), ("a", Some(&3))],
            "gone inserts keep their place"
        );
        // Filling the window forgets the two gone inserts first, then a's live one.
        for id in 0..CLOSED_WINDOW - 1 {
            window.insert(&format!("x{id}"), 0);
        }
        assert_eq!(
            window.get("a"),
            Some(&3),
            "a's insert is the oldest, still in"
        );
        window.insert("y", 0);
        assert_eq!(window.get("a"), None, "a's insert is forgotten");
        assert_eq!(window.live.len(), CLOSED_WINDOW);
    }

    #[test]
    fn a_restored_window_is_the_saved_one() {
        let mut window: ClosedWindow<u32> = ClosedWindow::new();
        for (n, id) in ["a", "b", "c", "a", "d"].into_iter().enumerate() {
            window.insert(id, n as u32);
        }
        window.remove("c");
        let saved: Vec<(Box<str>, Option<u32>)> = window
            .inserts()
            .map(|(id, value)| (id.into(), value.copied()))
            .collect();
        let restored = ClosedWindow::restore(window.generation(), saved).expect("valid");
        for id in ["a", "b", "c", "d", "e"] {
            assert_eq!(restored.get(id), window.get(id), "{id}");
        }
        assert!(ClosedWindow::restore(2, [("a".into(), Some(1)), ("a".into(), Some(2))]).is_err());
    }

    #[test]
    fn a_long_window_at_its_full_size_keeps_and_forgets_as_before() {
        // Past `LONG` inserts the window takes its full size; saved and restored there, it
        // answers alike and goes on forgetting the oldest.
        let mut window: ClosedWindow<u32> = ClosedWindow::new();
        for id in 0..LONG + 10 {
            window.insert(&id.to_string(), id as u32);
        }
        assert!(window.ids.capacity() >= CLOSED_WINDOW);
        assert!(window.live.capacity() >= CLOSED_WINDOW);
        window.remove("3");
        let saved: Vec<(Box<str>, Option<u32>)> = window
            .inserts()
            .map(|(id, value)| (id.into(), value.copied()))
            .collect();
        let mut restored = ClosedWindow::restore(window.generation(), saved).expect("valid");
        assert!(restored.live.capacity() >= CLOSED_WINDOW);
        for id in ["0", "3", "4095", "4105", "4106"] {
            assert_eq!(restored.get(id), window.get(id), "{id}");
        }
        for id in 0..CLOSED_WINDOW {
            restored.insert(&format!("new{id}"), 0);
        }
        assert_eq!(restored.get("0"), None, "forgotten");
        assert_eq!(restored.get("new0"), Some(&0));
        assert_eq!(restored.live.len(), CLOSED_WINDOW);
    }
}
