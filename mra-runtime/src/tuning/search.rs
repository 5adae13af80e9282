//! Search strategies over a finite space of configurations. Each is a few lines, knows nothing
//! of GPUs, and calls a cost function (`None`: the configuration has no valid time) at most
//! once per configuration; the defaults (the space's first entry) are always tried first.

use mra_codegen::tune::Config;
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};
use std::time::Instant;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Every configuration, in the space's order.
    Exhaustive,
    /// The defaults, then the others in random order.
    Random,
    /// Simulated annealing over neighbours (configurations one parameter apart), jumping to an
    /// untried configuration when every neighbour has been tried.
    Anneal,
}

impl Strategy {
    pub fn parse(s: &str) -> Option<Strategy> {
        match s.trim().to_ascii_lowercase().as_str() {
            "exhaustive" => Some(Strategy::Exhaustive),
            "random" => Some(Strategy::Random),
            "anneal" => Some(Strategy::Anneal),
            _ => None,
        }
    }
}

/// When to stop before the space is exhausted.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// At most this many configurations (results already known count too).
    pub max_configs: Option<usize>,
    /// No new configuration starts after this instant.
    pub deadline: Option<Instant>,
}

impl Limits {
    fn reached(&self, tried: usize) -> bool {
        self.max_configs.is_some_and(|m| tried >= m) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// One configuration tried and its cost.
pub type Tried = (Config, Option<f64>);

/// Runs `strategy` over `space` (the defaults first), calling `cost` once per configuration
/// tried, until the space or `limits` run out or `cost` fails. Returns what was tried, in order.
pub fn search<E>(space: &[Config], strategy: Strategy, seed: u64, limits: Limits, cost: &mut dyn FnMut(&Config) -> Result<Option<f64>, E>) -> Result<Vec<Tried>, E> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut tried: Vec<Tried> = Vec::new();
    let mut done = vec![false; space.len()];
    let mut visit = |i: usize, tried: &mut Vec<Tried>, done: &mut Vec<bool>| -> Result<Option<f64>, E> {
        done[i] = true;
        let c = cost(&space[i])?;
        tried.push((space[i].clone(), c));
        Ok(c)
    };
    match strategy {
        Strategy::Exhaustive | Strategy::Random => {
            let mut order: Vec<usize> = (0..space.len()).collect();
            if strategy == Strategy::Random && order.len() > 1 {
                order[1..].shuffle(&mut rng);
            }
            for i in order {
                if limits.reached(tried.len()) {
                    break;
                }
                visit(i, &mut tried, &mut done)?;
            }
        }
        Strategy::Anneal => {
            if space.is_empty() || limits.reached(0) {
                return Ok(tried);
            }
            let mut current = 0;
            let mut current_cost = visit(0, &mut tried, &mut done)?;
            // Temperature as a relative cost increase accepted with probability 1/e; it cools
            // geometrically with each step.
            let mut temperature = 0.2f64;
            while !limits.reached(tried.len()) && done.iter().any(|d| !d) {
                let neighbours: Vec<usize> = (0..space.len()).filter(|&j| !done[j] && one_apart(&space[current], &space[j])).collect();
                let next = match neighbours.choose(&mut rng) {
                    Some(&j) => j,
                    // Every neighbour tried: restart from an untried configuration.
                    None => *(0..space.len()).filter(|&j| !done[j]).collect::<Vec<_>>().choose(&mut rng).expect("some left"),
                };
                let c = visit(next, &mut tried, &mut done)?;
                let accept = match (c, current_cost) {
                    (Some(_), None) => true,
                    (Some(new), Some(old)) => new <= old || rng.random::<f64>() < (-((new - old) / old) / temperature).exp(),
                    (None, _) => false,
                };
                if accept {
                    (current, current_cost) = (next, c);
                }
                temperature *= 0.9;
            }
        }
    }
    Ok(tried)
}

/// Whether two configurations differ in exactly one parameter.
fn one_apart(a: &Config, b: &Config) -> bool {
    a.iter().filter(|(k, v)| b.get(*k) != Some(v)).count() == 1
}

/// The configurations of `tried` with a cost, fastest first.
pub fn ranked(tried: &[Tried]) -> Vec<(Config, f64)> {
    let mut r: Vec<(Config, f64)> = tried.iter().filter_map(|(c, t)| t.map(|t| (c.clone(), t))).collect();
    r.sort_by(|a, b| a.1.total_cmp(&b.1));
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A grid of `dims` parameters with `n` values each (the defaults, value 0 everywhere,
    /// first).
    fn grid(dims: usize, n: u32) -> Vec<Config> {
        let mut all = vec![Config::new()];
        for d in 0..dims {
            all = all.into_iter().flat_map(|c| (0..n).map(move |v| { let mut c = c.clone(); c.insert(format!("p{d}"), v); c })).collect();
        }
        all
    }

    /// A smooth bowl with its minimum at (3, 1, 4), plus a spike: the default corner is bad.
    fn bowl(c: &Config) -> Option<f64> {
        let target = [3i64, 1, 4];
        Some(1.0 + (0..3).map(|d| (c[&format!("p{d}")] as i64 - target[d]).pow(2) as f64).sum::<f64>())
    }

    fn best(tried: &[Tried]) -> Config {
        ranked(tried)[0].0.clone()
    }

    fn optimum() -> Config {
        [("p0", 3), ("p1", 1), ("p2", 4)].iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn exhaustive_and_random_find_the_optimum_and_try_each_once() {
        let space = grid(3, 6);
        for s in [Strategy::Exhaustive, Strategy::Random] {
            let tried = search::<()>(&space, s, 1, Limits::default(), &mut |c| Ok(bowl(c))).unwrap();
            assert_eq!(tried.len(), space.len(), "{s:?}");
            assert_eq!(tried[0].0, space[0], "{s:?}: defaults first");
            let distinct: BTreeSet<&Config> = tried.iter().map(|t| &t.0).collect();
            assert_eq!(distinct.len(), space.len());
            assert_eq!(best(&tried), optimum(), "{s:?}");
        }
    }

    #[test]
    fn anneal_finds_the_optimum_in_part_of_the_space() {
        let space = grid(3, 6);
        for seed in 0..10 {
            let limits = Limits { max_configs: Some(space.len() / 2), deadline: None };
            let tried = search::<()>(&space, Strategy::Anneal, seed, limits, &mut |c| Ok(bowl(c))).unwrap();
            assert_eq!(tried.len(), space.len() / 2);
            assert_eq!(best(&tried), optimum(), "seed {seed}");
            let distinct: BTreeSet<&Config> = tried.iter().map(|t| &t.0).collect();
            assert_eq!(distinct.len(), tried.len(), "never the same configuration twice");
        }
    }

    #[test]
    fn an_invalid_configuration_is_never_ranked_even_if_fastest() {
        let space = grid(3, 5);
        let poisoned = |c: &Config| if c == &optimum() { None } else { bowl(c) };
        for s in [Strategy::Exhaustive, Strategy::Random, Strategy::Anneal] {
            let tried = search::<()>(&space, s, 3, Limits::default(), &mut |c| Ok(poisoned(c))).unwrap();
            assert!(tried.iter().any(|t| t.0 == optimum()), "{s:?} tried it");
            assert_ne!(best(&tried), optimum(), "{s:?}");
        }
    }

    #[test]
    fn limits_stop_the_search() {
        let space = grid(2, 5);
        let tried = search::<()>(&space, Strategy::Random, 0, Limits { max_configs: Some(7), deadline: None }, &mut |c| Ok(bowl(&{ let mut c = c.clone(); c.insert("p2".into(), 0); c }))).unwrap();
        assert_eq!(tried.len(), 7);
        let past = Instant::now() - std::time::Duration::from_secs(1);
        let tried = search::<()>(&space, Strategy::Anneal, 0, Limits { max_configs: None, deadline: Some(past) }, &mut |_| Ok(Some(1.0))).unwrap();
        assert!(tried.is_empty());
        let err = search(&space, Strategy::Exhaustive, 0, Limits::default(), &mut |c| if c["p0"] == 2 { Err("disk full") } else { Ok(Some(1.0)) });
        assert_eq!(err, Err("disk full"));
    }
}
