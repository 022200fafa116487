//! Prompts of exact token length in the run's tokenizer: synthetic (drawn lengths, an optional
//! shared system-prompt prefix) or from a dataset, with seeded output lengths. Every prompt of
//! a run is a pure function of (seed, level, request index), so runs repeat exactly.

use super::bounds::{MAX_INPUT_TOKENS, MAX_OUTPUT_TOKENS, MIN_TOKENS};
use super::calibration::Calibration;
use super::dataset::{Dataset, DatasetSpec, Record, Source};
use super::exact::TextBuilder;
use super::messages::{ChatMessage, RequestInput};
use super::runtime::{Loaded, Runtime, WorkloadError};
use super::session_spec::SessionSpec;
use super::tokenizer::APPROX_NAME;
use crate::rng::{mix64, SplitMix64};
use serde::{Deserialize, Serialize};

/// Seeds the text of each Mooncake hash id's block (the id alone decides the text).
const BLOCK_SALT: u64 = 0xB10C_5EED_0000_0001;
/// Seeds calibration prompts (their own index space).
const CALIBRATION_SALT: u64 = 0xCA11_B8A7_E000_0001;

/// The shape of the traffic: token counts, streaming, shared prefix, tokenizer, dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    /// Profile name (e.g. `rag`), for the record.
    pub name: String,
    /// Input tokens per request: mean and standard deviation.
    pub input_tokens: u32,
    pub input_tokens_stddev: u32,
    /// Output tokens per request (sent as `max_tokens`): mean and standard deviation.
    pub output_tokens: u32,
    pub output_tokens_stddev: u32,
    /// Stream responses.
    pub stream: bool,
    /// Tokens of a shared system-prompt prefix, and the share (0-1) of requests that use it.
    pub shared_prefix_tokens: u32,
    pub shared_prefix_share: f64,
    /// Seed for prompt text, lengths and dataset sampling.
    pub seed: u64,
    /// Tokenizer that counts tokens: `approx-4c`, `o200k_base`, `cl100k_base` or the path of a
    /// `tokenizer.json`.
    pub tokenizer: String,
    /// sha256 of the `tokenizer.json`, when the tokenizer is a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer_sha256: Option<String>,
    /// Prompts come from this dataset instead of being generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<DatasetSpec>,
    /// Measure the server's count of our prompts in pre-flight and size prompts by it.
    #[serde(default)]
    pub calibrate: bool,
    /// What calibration found (filled in pre-flight).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
    /// Multi-turn sessions (`--turns`); `None`: every request is a conversation of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<SessionSpec>,
    /// Tools sent with every chat request (`--tools`); `None`: no tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<super::tools::ToolsSpec>,
    /// The loaded tokenizer and dataset (see [`WorkloadSpec::load`]).
    #[serde(skip)]
    pub runtime: Runtime,
}

/// One request's input.
#[derive(Debug, Clone)]
pub struct Prompt {
    /// The prompt text (empty when `messages` is not).
    pub text: String,
    /// A message list sent instead of `text` (a JSONL `messages` record), roles preserved.
    pub messages: Vec<ChatMessage>,
    /// Input tokens by the client's tokenizer (exact for the target unless the tokenizer
    /// merges across words in a way no adjustment fixed).
    pub input_tokens: u32,
    /// `max_tokens` to ask for.
    pub max_tokens: u32,
    /// A Data Capture record's request body, sent as captured to a SageMaker endpoint (the
    /// text or messages above go to an OpenAI-compatible one).
    pub captured_body: Option<std::sync::Arc<[u8]>>,
}

impl Prompt {
    /// A prompt with nothing in it: an index of a multi-turn level's book, whose turns the
    /// workers build from their sessions.
    pub fn turn_placeholder() -> Prompt {
        Prompt {
            text: String::new(),
            messages: Vec::new(),
            input_tokens: 0,
            max_tokens: 0,
            captured_body: None,
        }
    }

    /// What the request sends: a captured body with its prompt, the message list when there
    /// is one, else the text.
    pub fn input(&self) -> RequestInput<'_> {
        if let Some(body) = &self.captured_body {
            RequestInput::Captured {
                body,
                text: &self.text,
                messages: &self.messages,
            }
        } else if self.messages.is_empty() {
            RequestInput::Text(&self.text)
        } else {
            RequestInput::Messages(&self.messages)
        }
    }
}

/// Draws a token count from a normal distribution around `mean`, clamped to three standard
/// deviations and to `[MIN_TOKENS, max]`.
fn draw(rng: &mut SplitMix64, mean: u32, std: u32, max: u32) -> u32 {
    if std == 0 {
        return mean.clamp(MIN_TOKENS, max);
    }
    let x = mean as f64 + std as f64 * rng.normal().clamp(-3.0, 3.0);
    (x.round() as i64).clamp(MIN_TOKENS as i64, max as i64) as u32
}

impl WorkloadSpec {
    /// Exactly `input` tokens in and `output` out, streamed, no shared prefix, seed 1, the
    /// built-in tokenizer: the plain workload tests and benchmarks start from.
    pub fn fixed(input: u32, output: u32) -> WorkloadSpec {
        WorkloadSpec {
            name: "fixed".into(),
            input_tokens: input,
            input_tokens_stddev: 0,
            output_tokens: output,
            output_tokens_stddev: 0,
            stream: true,
            shared_prefix_tokens: 0,
            shared_prefix_share: 0.0,
            seed: 1,
            tokenizer: APPROX_NAME.into(),
            tokenizer_sha256: None,
            dataset: None,
            calibrate: false,
            calibration: None,
            sessions: None,
            tools: None,
            runtime: Runtime::default(),
        }
    }

    /// Loads the tokenizer and the dataset this spec names, records what was found (the
    /// tokenizer's name and sha256, the dataset's format, sha256 and record counts) and
    /// attaches them.
    pub fn load(mut self) -> Result<WorkloadSpec, WorkloadError> {
        let turns = self.sessions.as_ref().map(|s| s.turns);
        let runtime = Runtime::load(&self.tokenizer, self.dataset.as_mut(), turns)?;
        let tok = &runtime.get().tokenizer;
        self.tokenizer = tok.name.clone();
        self.tokenizer_sha256 = tok.sha256.clone();
        self.runtime = runtime;
        Ok(self)
    }

    /// This spec, loaded if it was not yet.
    pub fn ensure_loaded(self) -> Result<WorkloadSpec, WorkloadError> {
        if self.runtime.is_loaded() {
            Ok(self)
        } else {
            self.load()
        }
    }

    /// The loaded parts (the built-in approximation when the `WorkloadSpec` was never loaded).
    pub fn loaded(&self) -> &Loaded {
        self.runtime.get()
    }

    /// The request's random stream after its length draws, its target input length (the
    /// server's count to aim for) and its `max_tokens`.
    fn draws(&self, level: u32, index: u64) -> (SplitMix64, u32, u32) {
        let mut rng = SplitMix64::new(mix64(
            self.seed ^ ((level as u64) << 40) ^ index.wrapping_mul(0x9E37),
        ));
        let input = draw(
            &mut rng,
            self.input_tokens,
            self.input_tokens_stddev,
            MAX_INPUT_TOKENS,
        );
        let output = draw(
            &mut rng,
            self.output_tokens,
            self.output_tokens_stddev,
            MAX_OUTPUT_TOKENS,
        );
        (rng, input, output)
    }

    /// The record request `index` of level `level` draws, with a dataset.
    fn record<'a>(&self, ds: &'a Dataset, level: u32, index: u64) -> &'a Record {
        let sampling = self
            .dataset
            .as_ref()
            .map(|d| d.sampling)
            .unwrap_or_default();
        ds.pick(sampling, self.seed, level, index)
    }

    /// The input length request `index` of level `level` aims at, in the server's tokens
    /// when calibrated: the drawn length (synthetic) or the trace's `input_length`
    /// (Mooncake); `None` for text datasets, whose text is what it is, and for multi-turn
    /// sessions.
    pub fn target_input(&self, level: u32, index: u64) -> Option<u32> {
        if self.sessions.is_some() {
            // a turn's input is its session's history: no drawn length to aim at
            return None;
        }
        match &self.loaded().dataset {
            None => Some(self.draws(level, index).1),
            Some(ds) => {
                let r = self.record(ds, level, index);
                matches!(r.source, Source::Blocks(_)).then_some(r.input_tokens)
            }
        }
    }

    /// The mean of [`WorkloadSpec::target_input`] over a level's `requests` requests.
    pub fn target_input_mean(&self, level: u32, requests: u64) -> Option<f64> {
        let mut sum = 0u64;
        for i in 0..requests {
            sum += u64::from(self.target_input(level, i)?);
        }
        (requests > 0).then(|| sum as f64 / requests as f64)
    }

    /// The prompt for request `index` of level `level`.
    pub fn prompt(&self, level: u32, index: u64) -> Prompt {
        let rt = self.loaded();
        let (mut rng, input, output) = self.draws(level, index);
        if let Some(ds) = &rt.dataset {
            return self.dataset_prompt(rt, self.record(ds, level, index), output, ds);
        }
        let target = match &self.calibration {
            Some(c) => c.client_tokens_for(input),
            None => input,
        };
        let mut b = TextBuilder::new(&*rt.tokenizer.tokenizer, &rt.words, target);
        let shared = self.shared_prefix_tokens.min(target);
        let mut body = target;
        if shared > 0 && rng.next_f64() < self.shared_prefix_share {
            // the prefix depends on the seed only: every request that uses it shares it exactly
            let mut prefix_rng = SplitMix64::new(mix64(self.seed ^ 0x005E_ED0F_9EF1));
            b.push_words(&mut prefix_rng, shared);
            body -= shared;
        }
        b.push_words(&mut rng, body);
        let (text, input_tokens) = b.finish(target, &mut rng);
        Prompt {
            text,
            messages: Vec::new(),
            input_tokens,
            max_tokens: output,
            captured_body: None,
        }
    }

    /// The `max_tokens` request `index` of level `level` draws from the output length flags.
    pub(crate) fn drawn_output(&self, level: u32, index: u64) -> u32 {
        self.draws(level, index).2
    }

    /// The single-turn prompt of dataset record `r`, drawn as request `index` of `level`.
    pub(crate) fn record_prompt(&self, level: u32, index: u64, r: &Record) -> Prompt {
        let rt = self.loaded();
        let drawn = self.drawn_output(level, index);
        match &rt.dataset {
            Some(ds) => self.dataset_prompt(rt, r, drawn, ds),
            None => self.prompt(level, index),
        }
    }

    fn dataset_prompt(&self, rt: &Loaded, r: &Record, drawn: u32, ds: &Dataset) -> Prompt {
        let max_tokens = r.output_tokens.unwrap_or(drawn);
        match &r.source {
            Source::Text(t) => Prompt {
                text: t.clone(),
                messages: Vec::new(),
                input_tokens: r.input_tokens,
                max_tokens,
                captured_body: r.body.clone(),
            },
            Source::Messages(list) => Prompt {
                text: String::new(),
                messages: list.clone(),
                input_tokens: r.input_tokens,
                max_tokens,
                captured_body: r.body.clone(),
            },
            Source::Blocks(ids) => {
                let n = r.input_tokens;
                let mut b = TextBuilder::new(&*rt.tokenizer.tokenizer, &rt.words, n);
                let mut left = n;
                for id in ids {
                    let take = left.min(ds.block_tokens);
                    b.push_words(&mut SplitMix64::new(mix64(id ^ BLOCK_SALT)), take);
                    left -= take;
                }
                // no ids (or a short last block): text of the record's own
                let mut own = SplitMix64::new(mix64(self.seed ^ BLOCK_SALT ^ r.line as u64));
                b.push_words(&mut own, left);
                let (text, input_tokens) = b.finish(n, &mut own);
                Prompt {
                    text,
                    messages: Vec::new(),
                    input_tokens,
                    max_tokens,
                    captured_body: None,
                }
            }
        }
    }

    /// Calibration prompt `i`: `tokens` long by the client's tokenizer, `max_tokens` 1.
    pub fn calibration_prompt(&self, i: u64, tokens: u32) -> Prompt {
        let rt = self.loaded();
        let mut rng = SplitMix64::new(mix64(self.seed ^ CALIBRATION_SALT ^ i));
        let mut b = TextBuilder::new(&*rt.tokenizer.tokenizer, &rt.words, tokens);
        b.push_words(&mut rng, tokens);
        let (text, input_tokens) = b.finish(tokens, &mut rng);
        Prompt {
            text,
            messages: Vec::new(),
            input_tokens,
            max_tokens: 1,
            captured_body: None,
        }
    }
}

#[cfg(test)]
#[path = "prompt_tests.rs"]
mod tests;
