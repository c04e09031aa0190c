//! The floor of a journal check on this machine: read every byte (mapped, no kernel copy), find
//! the line ends, SHA-256 over each line's bytes (as many bytes as an event's digest input, give
//! or take), and compare each digest with the one before (a link's compare). What no check can
//! skip; the journal check is measured against it (benches/compare.py, workload 1e).

use sha2::{Digest, Sha256};

type Hash = [u8; 32];

fn main() -> Result<(), String> {
    journal_baselines::run(
        |text| {
            let mut piece = journal_baselines::Piece::default();
            let mut previous: Option<Hash> = None;
            for line in journal_baselines::lines(text) {
                let digest: Hash = Sha256::digest(line).into();
                piece.events += 1;
                match previous {
                    // A link "holds" when the digests differ: always, so every line counts and
                    // the compare cannot be optimised away.
                    Some(before) => piece.verified += u64::from(before != digest),
                    None => piece.first = Some((digest, true)),
                }
                previous = Some(digest);
            }
            piece.last_hash = previous;
            piece
        },
        |before, first| before != first,
    )
}
