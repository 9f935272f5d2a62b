//! The synthetic data: manifests and outputs written straight to disk as
//! another tool would, from a deterministic generator and a vocabulary with
//! natural-language word frequencies.

use std::path::Path;

use anyhow::Result;
use serde_json::json;

/// xorshift64*: deterministic synthetic data without a crate.
#[derive(Clone)]
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    /// The next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number in `0..n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// A random (version 4) UUID.
    pub(crate) fn uuid(&mut self) -> String {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.next().to_le_bytes());
        bytes[8..].copy_from_slice(&self.next().to_le_bytes());
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string()
    }
}

const WORDS: &[&str] = &[
    "laptop",
    "procurement",
    "onboarding",
    "requirements",
    "budget",
    "vendor",
    "security",
    "audit",
    "network",
    "migration",
    "database",
    "latency",
    "invoice",
    "contract",
    "roadmap",
    "backlog",
    "sprint",
    "incident",
    "postmortem",
    "compliance",
    "dashboard",
    "metrics",
    "pipeline",
    "release",
    "customer",
    "feedback",
    "interview",
    "persona",
    "wireframe",
    "prototype",
    "estimate",
    "risk",
    "dependency",
    "architecture",
    "kubernetes",
    "terraform",
    "observability",
    "alerting",
    "capacity",
    "forecast",
    "quokka",
    "zephyr",
    "tundra",
    "meridian",
    "lattice",
    "harbor",
    "glacier",
    "ember",
];

/// Words in the synthetic text: the 48 domain words above are the most
/// frequent ranks, then generated syllable words up to this many in all.
pub(crate) const VOCAB: usize = 6000;
/// Zipf exponent: word frequency ∝ 1 / rank^s. Natural-language text is
/// close to 1, so a few words are in nearly every run and most words in
/// few, which is what decides how many runs a full-text query matches.
const ZIPF_S: f64 = 1.0;

/// The synthetic vocabulary with its Zipf distribution. With a uniform
/// 48-word vocabulary any two-word query matched nearly every run, which
/// is not what searches over real manifests look like.
pub(crate) struct Vocab {
    /// The words by rank, most frequent first.
    pub(crate) words: Vec<String>,
    /// Cumulative weights, for sampling a rank by binary search.
    cum: Vec<f64>,
}

impl Vocab {
    /// The vocabulary, the same in every run.
    pub(crate) fn new() -> Vocab {
        const ONSETS: &[&str] = &[
            "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
            "z", "br", "ch", "cl", "dr", "fl", "gr", "pl", "pr", "sh", "st", "th", "tr",
        ];
        const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ea", "io", "ou"];
        const CODAS: &[&str] = &["", "", "", "n", "r", "s", "l", "m", "t", "x", "nd", "st"];
        let mut words: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
        let mut taken: std::collections::HashSet<String> = words.iter().cloned().collect();
        let mut rng = Rng(0x005E_ED0F_C0DE);
        while words.len() < VOCAB {
            // Mostly two syllables: words of about eight letters, like the
            // domain words, so manifests stay 1–3 KB.
            let syllables = [1, 2, 2, 3][rng.below(4)];
            let mut w = String::new();
            for _ in 0..syllables {
                w.push_str(ONSETS[rng.below(ONSETS.len())]);
                w.push_str(VOWELS[rng.below(VOWELS.len())]);
                w.push_str(CODAS[rng.below(CODAS.len())]);
            }
            if taken.insert(w.clone()) {
                words.push(w);
            }
        }
        let mut total = 0.0;
        let cum = (0..words.len())
            .map(|r| {
                total += 1.0 / ((r + 1) as f64).powf(ZIPF_S);
                total
            })
            .collect();
        Vocab { words, cum }
    }

    /// A word drawn by its Zipf frequency.
    pub(crate) fn word(&self, rng: &mut Rng) -> &str {
        let total = self.cum.last().copied().unwrap_or(1.0);
        let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * total;
        let r = self
            .cum
            .partition_point(|&c| c <= u)
            .min(self.words.len() - 1);
        &self.words[r]
    }

    /// `min` words and up to `spread` more, drawn by frequency.
    pub(crate) fn sentence(&self, rng: &mut Rng, min: usize, spread: usize) -> String {
        let n = min + if spread > 0 { rng.below(spread) } else { 0 };
        (0..n).map(|_| self.word(rng)).collect::<Vec<_>>().join(" ")
    }
}

fn agents() -> Vec<String> {
    (0..20).map(|i| format!("agent{i:02}")).collect()
}

fn workflows() -> Vec<String> {
    let kinds = ["deep-dive", "intake", "build", "review", "triage"];
    (0..50)
        .map(|i| format!("{}-{:02}", kinds[i % kinds.len()], i))
        .collect()
}

/// Writes `n` runs under `dir` from `threads` threads, like another tool
/// would (plain writes, no locks, no index). Returns the ids in start order.
/// When the first synthesized run starts (2025-01-01); run `i` starts
/// `i` minutes later.
pub(crate) const BASE: i64 = 1_735_689_600;

pub(crate) fn synthesize(dir: &Path, n: usize, seed: u64) -> Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let mut rng = Rng(seed | 1);
    let ids: Vec<String> = (0..n).map(|_| rng.uuid()).collect();
    let agents = agents();
    let workflows = workflows();
    let vocab = Vocab::new();
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2);
    let base = BASE;
    std::thread::scope(|s| -> Result<()> {
        let mut handles = vec![];
        for t in 0..threads {
            let ids = &ids;
            let agents = &agents;
            let workflows = &workflows;
            let vocab = &vocab;
            handles.push(s.spawn(move || -> Result<()> {
                for i in (t..ids.len()).step_by(threads) {
                    let mut rng = Rng((seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1);
                    let folder = dir.join(&ids[i]);
                    std::fs::create_dir_all(&folder)?;
                    let started = base + (i as i64) * 60 + rng.below(50) as i64;
                    let status = match rng.below(10) {
                        0..=6 => "completed",
                        7 => "failed",
                        8 => "cancelled",
                        _ => "running",
                    };
                    let n_out = 1 + rng.below(5);
                    let mut outputs = vec![];
                    for o in 0..n_out {
                        let file = format!("output-{o}.md");
                        let text = format!("# {}\n\n{}\n", vocab.sentence(&mut rng, 4, 0), vocab.sentence(&mut rng, 40, 80));
                        std::fs::write(folder.join(&file), text)?;
                        outputs.push(json!({
                            "file": file,
                            "type": (["document", "data", "report", "artifact"][rng.below(4)]),
                            "description": vocab.sentence(&mut rng, 6, 10),
                            "created_at": ts(started + 30 + o as i64),
                        }));
                    }
                    let mut m = json!({
                        "version": "1.0.0",
                        "session_id": ids[i],
                        "agent": {"name": agents[rng.below(agents.len())], "title": format!("The {} Agent", vocab.sentence(&mut rng, 1, 0)), "bundle": "bmad/bmm"},
                        "workflow": {"name": workflows[rng.below(workflows.len())], "description": vocab.sentence(&mut rng, 10, 20)},
                        "execution": {"started_at": ts(started), "status": status, "user": (["bryan", "dana", "lee"][rng.below(3)])},
                        "outputs": outputs,
                        "inputs": {"category": vocab.sentence(&mut rng, 2, 0), "request_type": vocab.sentence(&mut rng, 1, 0), "notes": vocab.sentence(&mut rng, 10, 30)},
                        "metadata": {"priority": rng.below(5), "summary": vocab.sentence(&mut rng, 10, 40)},
                        "tags": [WORDS[rng.below(8)]],
                    });
                    if status != "running" {
                        m["execution"]["completed_at"] = json!(ts(started + 55));
                    }
                    // Lineage chains: most runs build on a recent earlier one.
                    if i > 0 && rng.below(3) > 0 {
                        let back = 1 + rng.below(20.min(i));
                        m["related_sessions"] = json!([ids[i - back]]);
                    }
                    let text = serde_json::to_string_pretty(&m)?;
                    std::fs::write(folder.join("manifest.json"), text)?;
                }
                Ok(())
            }));
        }
        for h in handles {
            h.join()
                .map_err(|_| anyhow::anyhow!("writer thread panicked"))??;
        }
        Ok(())
    })?;
    Ok(ids)
}

/// A manifest timestamp, `secs` after the Unix epoch.
pub(crate) fn ts(secs: i64) -> String {
    logbook::clock::format(
        jiff::Timestamp::from_second(secs).unwrap_or(jiff::Timestamp::UNIX_EPOCH),
    )
}
