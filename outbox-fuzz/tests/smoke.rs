//! The fuzz targets on stable Rust, briefly: every seed in `seeds/TARGET/`, then mutations
//! of them (bit flips, inserted and deleted bytes, tokens the parsers care about) for a
//! bounded number of inputs or seconds per target. A failing input is written to
//! `target/fuzz-smoke/` and its bytes printed, so it can be replayed or added as a seed.
//!
//! `OUTBOX_FUZZ_RUNS` sets the inputs per target (default 20,000), `OUTBOX_FUZZ_SECONDS`
//! the time cap per target (default 15: the text targets reach their count in well under
//! a second, the SQLite ones run out their time), `OUTBOX_FUZZ_SEED` the generator's seed (a fixed
//! one by default, so a failure reproduces).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use outbox_fuzz::TARGETS;

/// Tokens the parsers and decoders branch on, spliced into the mutations.
const TOKENS: &[&[u8]] = &[
    b"ms",
    b"s",
    b"m",
    b"h",
    b"d",
    b"://",
    b"@",
    b":",
    b"?",
    b"=",
    b"&",
    b".",
    b"\"",
    b"-",
    b"password=",
    b"postgres://",
    b"host=",
    b"user=",
    b" password=",
    b"nats://",
    b"amqp://",
    b"subject=",
    b"/",
    b"4096",
    b"stream=",
    b"create_stream=true",
    b"ack_timeout=",
    b"exchange=",
    b"{topic}",
    b"99999999999999999999",
    b"9223372036854775807",
    b"\0",
    b"\xc3\xa9",
    b"\xff",
];

#[test]
fn every_target_survives_its_seeds_and_their_mutations() {
    let runs = usize::try_from(env_number("OUTBOX_FUZZ_RUNS", 20_000)).expect("a count");
    let cap = Duration::from_secs(env_number("OUTBOX_FUZZ_SECONDS", 15));
    let seed = env_number("OUTBOX_FUZZ_SEED", 0x5eed_f00d);
    // The targets report failures by panicking; keep the default hook from printing each.
    std::panic::set_hook(Box::new(|_| {}));
    let mut failures = Vec::new();
    for (name, target) in TARGETS {
        let seeds = read_seeds(name);
        assert!(!seeds.is_empty(), "no seeds for {name} in seeds/{name}/");
        let mut rng = Rng(seed ^ fnv(name.as_bytes()));
        let started = Instant::now();
        let mut ran: usize = 0;
        while ran < runs + seeds.len() && started.elapsed() < cap {
            let input = match seeds.get(ran) {
                Some(s) => s.clone(),
                None => {
                    let parent = rng.below(seeds.len());
                    mutate(&mut rng, &seeds[parent])
                }
            };
            ran += 1;
            if catch_unwind(AssertUnwindSafe(|| target(&input))).is_err() {
                failures.push(save(name, &input));
                break;
            }
        }
        println!(
            "fuzz smoke {name}: {ran} inputs ({} seeds) in {:.1} s, seed {seed:#x}",
            seeds.len(),
            started.elapsed().as_secs_f64()
        );
    }
    let _ = std::panic::take_hook();
    assert!(
        failures.is_empty(),
        "failing inputs:\n{}",
        failures.join("\n")
    );
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .map(|v| {
            let v = v.trim();
            let parsed = match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => v.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
        })
        .unwrap_or(default)
}

fn read_seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(target);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a seed").path())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read(p).expect("read a seed"))
        .collect()
}

/// Writes a failing input under target/fuzz-smoke/ and describes it.
fn save(target: &str, input: &[u8]) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/fuzz-smoke")
        .join(target);
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("crash-{:016x}", fnv(input)));
    let _ = std::fs::write(&path, input);
    // Run again with the default hook, to show the panic's message.
    let _ = std::panic::take_hook();
    let target_fn = TARGETS
        .iter()
        .find(|(n, _)| *n == target)
        .expect("a target")
        .1;
    let message = match catch_unwind(AssertUnwindSafe(|| target_fn(input))) {
        Err(p) => p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default(),
        Ok(()) => "(did not fail again)".into(),
    };
    std::panic::set_hook(Box::new(|_| {}));
    format!(
        "{target}: {} ({input:?} = {:?}): {message}",
        path.display(),
        String::from_utf8_lossy(input)
    )
}

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..=rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(7) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = rng.byte();
            }
            2 => v.insert(at, rng.byte()),
            3 if at < v.len() => {
                v.remove(at);
            }
            4 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                v.splice(at..at, token.iter().copied());
            }
            5 => v.truncate(at),
            _ => v.extend((0..rng.below(16)).map(|_| rng.byte())),
        }
    }
    v
}

/// xorshift64*: small, fast, and the same sequence for the same seed everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        let n = u64::try_from(n.max(1)).expect("a count");
        usize::try_from(self.next() % n).expect("below a usize")
    }

    fn byte(&mut self) -> u8 {
        self.next().to_le_bytes()[0]
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
