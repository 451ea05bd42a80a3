//! Who holds which block, and in what steps the fetcher asks for them.

use std::fmt;
use std::str::FromStr;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// How blocks are spread over the seeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Distribution {
    /// Every seed has every block.
    AllToAll,
    /// Even seeds have the first three quarters, odd seeds the last three quarters.
    Overlap1,
    /// Even seeds have even blocks, odd seeds odd blocks, and all have every third block (the
    /// seed's "Overlap3").
    Overlap2,
    /// Each block is on one seed, drawn at random.
    OnePeerPerBlock,
    /// Each seed has each block with probability P (every block on at least one seed).
    Random(f64),
}

impl Distribution {
    /// `holders[b]` = the seeds (0-based among seeds) that hold block `b`.
    pub fn assign(self, seeds: usize, blocks: usize, rng: &mut ChaCha8Rng) -> Vec<Vec<usize>> {
        (0..blocks)
            .map(|b| {
                let mut holders: Vec<usize> = match self {
                    Self::AllToAll => (0..seeds).collect(),
                    Self::Overlap1 => (0..seeds)
                        .filter(|s| if s % 2 == 0 { b < blocks * 3 / 4 } else { b >= blocks / 4 })
                        .collect(),
                    Self::Overlap2 => (0..seeds).filter(|s| b % 3 == 0 || b % 2 == s % 2).collect(),
                    Self::OnePeerPerBlock => vec![rng.random_range(0..seeds)],
                    Self::Random(p) => (0..seeds).filter(|_| rng.random::<f64>() < p).collect(),
                };
                if holders.is_empty() {
                    holders.push(rng.random_range(0..seeds));
                }
                holders
            })
            .collect()
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AllToAll => f.write_str("allToAll"),
            Self::Overlap1 => f.write_str("overlap1"),
            Self::Overlap2 => f.write_str("overlap2"),
            Self::OnePeerPerBlock => f.write_str("onePeerPerBlock"),
            Self::Random(p) => write!(f, "random:{p}"),
        }
    }
}

impl FromStr for Distribution {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "allToAll" => Ok(Self::AllToAll),
            "overlap1" => Ok(Self::Overlap1),
            "overlap2" => Ok(Self::Overlap2),
            "onePeerPerBlock" => Ok(Self::OnePeerPerBlock),
            other => match other.strip_prefix("random:").map(str::parse::<f64>) {
                Some(Ok(p)) if (0.0..=1.0).contains(&p) => Ok(Self::Random(p)),
                Some(_) => Err(format!("random:P needs P between 0 and 1, got {other:?}")),
                None => Err(format!(
                    "unknown distribution {other:?} (allToAll, overlap1, overlap2, onePeerPerBlock, random:P)"
                )),
            },
        }
    }
}

/// The order of gets, as in boxo's `benchmarks_test.go`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchPattern {
    /// One get per block, in sequence.
    OneAtATime,
    /// Gets of 10 blocks, in sequence.
    BatchBy10,
    /// One concurrent get per block.
    AllConcurrent,
    /// One get of everything.
    BigBatch,
    /// `[0]`, then `[1..11]`, then `[11..]`.
    Unixfs,
    /// `[0]`, `[1..11]`, `[11..100]`, then rounds of 5 concurrent gets of 10 blocks.
    UnixfsLarge,
}

impl FetchPattern {
    /// Steps of concurrent gets: a step starts when the previous one has every block. Gets made
    /// in the same step go into the session at the same instant.
    pub fn steps(self, blocks: usize) -> Vec<Vec<usize>> {
        let all: Vec<usize> = (0..blocks).collect();
        let chunks = |v: &[usize], n: usize| -> Vec<Vec<usize>> {
            v.chunks(n).map(<[usize]>::to_vec).collect()
        };
        let bounded =
            |from: usize, to: usize| -> Vec<usize> { (from.min(blocks)..to.min(blocks)).collect() };
        let steps = match self {
            Self::OneAtATime => chunks(&all, 1),
            Self::BatchBy10 => chunks(&all, 10),
            Self::AllConcurrent | Self::BigBatch => vec![all],
            Self::Unixfs => vec![bounded(0, 1), bounded(1, 11), bounded(11, blocks)],
            Self::UnixfsLarge => {
                let mut steps = vec![bounded(0, 1), bounded(1, 11), bounded(11, 100)];
                steps.extend(chunks(&bounded(100, blocks), 50));
                steps
            }
        };
        steps.into_iter().filter(|s| !s.is_empty()).collect()
    }
}

impl fmt::Display for FetchPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::OneAtATime => "oneAtATime",
            Self::BatchBy10 => "batchBy10",
            Self::AllConcurrent => "allConcurrent",
            Self::BigBatch => "bigBatch",
            Self::Unixfs => "unixfs",
            Self::UnixfsLarge => "unixfsLarge",
        })
    }
}

impl FromStr for FetchPattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "oneAtATime" => Self::OneAtATime,
            "batchBy10" => Self::BatchBy10,
            "allConcurrent" => Self::AllConcurrent,
            "bigBatch" => Self::BigBatch,
            "unixfs" => Self::Unixfs,
            "unixfsLarge" => Self::UnixfsLarge,
            other => {
                return Err(format!(
                    "unknown fetch pattern {other:?} (oneAtATime, batchBy10, allConcurrent, bigBatch, unixfs, unixfsLarge)"
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn overlaps_match_the_reference() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let o1 = Distribution::Overlap1.assign(2, 100, &mut rng);
        assert_eq!(o1[24], vec![0]);
        assert_eq!(o1[25], vec![0, 1]);
        assert_eq!(o1[74], vec![0, 1]);
        assert_eq!(o1[75], vec![1]);
        let o2 = Distribution::Overlap2.assign(2, 100, &mut rng);
        assert_eq!(o2[0], vec![0, 1]);
        assert_eq!(o2[1], vec![1]);
        assert_eq!(o2[2], vec![0]);
        assert_eq!(o2[3], vec![0, 1]);
        let one = Distribution::OnePeerPerBlock.assign(9, 100, &mut rng);
        assert!(one.iter().all(|h| h.len() == 1));
    }

    #[test]
    fn fetch_steps_match_boxo() {
        assert_eq!(FetchPattern::OneAtATime.steps(100).len(), 100);
        assert_eq!(FetchPattern::BatchBy10.steps(100).len(), 10);
        assert_eq!(FetchPattern::BigBatch.steps(100).len(), 1);
        let unixfs: Vec<usize> = FetchPattern::Unixfs.steps(100).iter().map(Vec::len).collect();
        assert_eq!(unixfs, vec![1, 10, 89]);
        let large = FetchPattern::UnixfsLarge.steps(1000);
        assert_eq!(large.len(), 3 + 18);
        assert_eq!(large[3], (100..150).collect::<Vec<_>>());
    }

    #[test]
    fn parses_flags() {
        assert_eq!("random:0.5".parse::<Distribution>(), Ok(Distribution::Random(0.5)));
        assert!("random:2".parse::<Distribution>().is_err());
        assert!("nope".parse::<FetchPattern>().is_err());
        assert_eq!("unixfsLarge".parse::<FetchPattern>(), Ok(FetchPattern::UnixfsLarge));
    }
}
