//! What a workload needs at run time beyond its recorded settings: the loaded tokenizer, the
//! words it counts as one token each, and the dataset's records. [`Runtime::load`] builds it
//! once (through `WorkloadSpec::load`, at config time, so a bad file is bad input); the
//! `WorkloadSpec` carries it in a field that is never serialized.

use std::sync::{Arc, OnceLock};

use super::dataset::{self, Dataset, DatasetError, DatasetSpec};
use super::exact::Words;
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

impl Runtime {
    /// Loads the tokenizer `tokenizer` names and the dataset `dataset` names (recording in
    /// it what was found: its format, sha256 and record counts); `turns`: the sessions'
    /// turns, when the workload runs multi-turn sessions.
    pub fn load(
        tokenizer: &str,
        dataset: Option<&mut DatasetSpec>,
        turns: Option<u32>,
    ) -> Result<Runtime, WorkloadError> {
        let tok = tokenizer::load(tokenizer)?;
        let words = if tok.name == APPROX_NAME {
            Words::approx()
        } else {
            Words::for_tokenizer(&*tok.tokenizer).map_err(WorkloadError::Words)?
        };
        let dataset = match dataset {
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
        Ok(Runtime(Some(Arc::new(Loaded {
            tokenizer: tok,
            words,
            dataset,
        }))))
    }

    /// Whether it was loaded.
    pub fn is_loaded(&self) -> bool {
        self.0.is_some()
    }

    /// The loaded parts (the built-in approximation when it was never loaded).
    pub fn get(&self) -> &Loaded {
        match &self.0 {
            Some(l) => l,
            None => approx(),
        }
    }
}
