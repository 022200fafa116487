//! What a workload needs at run time beyond its recorded settings: the loaded tokenizer, the
//! words it counts as one token each, and the dataset's records. [`WorkloadSpec::load`] builds
//! it once (at config time, so a bad file is bad input); the spec carries it in a field that is
//! never serialized.

use std::sync::{Arc, OnceLock};

use super::dataset::{self, Dataset, DatasetError};
use super::exact::Words;
use super::prompt::WorkloadSpec;
use super::tokenizer::{self, ApproxTokenizer, LoadedTokenizer, TokenizerError, APPROX_NAME};

/// Why a workload could not be loaded: the message names the file or tokenizer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    #[error("{0}")]
    Words(String),
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    /// `--turns` with a dataset none of whose records has more than one user turn.
    #[error(
        "--turns {turns}: no record of {file} has more than one user turn; multi-turn \
         sessions need ShareGPT conversations or JSONL `messages` records with several user \
         messages (or leave out --turns)"
    )]
    NoConversations { turns: u32, file: String },
}

/// The loaded parts of a workload.
pub struct Loaded {
    pub tokenizer: LoadedTokenizer,
    pub words: Words,
    pub dataset: Option<Dataset>,
}

/// The loaded parts, shared by every clone of a spec. Not serialized; two specs compare equal
/// whatever their runtimes, because a runtime is a function of the recorded fields (tokenizer
/// name and sha256, dataset path and sha256).
#[derive(Clone, Default)]
pub struct Runtime(Option<Arc<Loaded>>);

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(l) => write!(f, "Runtime({})", l.tokenizer.name),
            None => f.write_str("Runtime(not loaded)"),
        }
    }
}

impl PartialEq for Runtime {
    fn eq(&self, _: &Runtime) -> bool {
        true
    }
}

/// The built-in approximation with no dataset: what an unloaded spec generates with.
fn approx() -> &'static Loaded {
    static APPROX: OnceLock<Loaded> = OnceLock::new();
    APPROX.get_or_init(|| Loaded {
        tokenizer: LoadedTokenizer {
            tokenizer: Arc::new(ApproxTokenizer),
            name: APPROX_NAME.to_string(),
            sha256: None,
        },
        words: Words::approx(),
        dataset: None,
    })
}

impl WorkloadSpec {
    /// Loads the tokenizer and the dataset this spec names, records what was found (the
    /// tokenizer's name and sha256, the dataset's format, sha256 and record counts) and
    /// attaches them.
    pub fn load(mut self) -> Result<WorkloadSpec, WorkloadError> {
        let tok = tokenizer::load(&self.tokenizer)?;
        let words = if tok.name == APPROX_NAME {
            Words::approx()
        } else {
            Words::for_tokenizer(&*tok.tokenizer).map_err(WorkloadError::Words)?
        };
        let turns = self.sessions.as_ref().map(|s| s.turns);
        let dataset = match &mut self.dataset {
            Some(spec) => {
                let ds = dataset::load_with(spec, &*tok.tokenizer, turns.is_some())?;
                if let Some(turns) = turns.filter(|t| *t > 1) {
                    let several =
                        |r: &dataset::Record| r.turns(&*tok.tokenizer).is_some_and(|t| t.len() > 1);
                    if !ds.records.iter().any(several) {
                        return Err(WorkloadError::NoConversations {
                            turns,
                            file: spec.path.clone(),
                        });
                    }
                }
                Some(ds)
            }
            None => None,
        };
        self.tokenizer = tok.name.clone();
        self.tokenizer_sha256 = tok.sha256.clone();
        self.runtime = Runtime(Some(Arc::new(Loaded {
            tokenizer: tok,
            words,
            dataset,
        })));
        Ok(self)
    }

    /// This spec, loaded if it was not yet.
    pub fn ensure_loaded(self) -> Result<WorkloadSpec, WorkloadError> {
        if self.runtime.0.is_some() {
            Ok(self)
        } else {
            self.load()
        }
    }

    /// The loaded parts (the built-in approximation when the spec was never loaded).
    pub fn loaded(&self) -> &Loaded {
        match &self.runtime.0 {
            Some(l) => l,
            None => approx(),
        }
    }
}
