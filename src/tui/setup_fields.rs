//! The rows of the setup form: which setting each holds ([`FieldId`]), how it is edited
//! ([`FieldKind`]), and one row with its value, validation message and hint ([`Field`]).

/// How a field is edited.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// Cycle through fixed choices with left/right.
    Choice(Vec<String>),
    /// Cycle through choices with left/right, or type any text.
    Open(Vec<String>),
    /// Typed text, checked by the field's validator.
    Text,
    /// On or off.
    Toggle,
}

/// Which setting a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldId {
    Mode,
    Endpoint,
    // SageMaker endpoints only (see [`super::setup_sagemaker`])
    Region,
    AwsProfile,
    SageMakerFormat,
    InferenceComponent,
    TargetVariant,
    RequestTemplate,
    TextPointer,
    TokenCountPointer,
    Model,
    Profile,
    InputTokens,
    OutputTokens,
    Stream,
    Concurrency,
    Requests,
    E2eSla,
    TtftSla,
    TpotSla,
    ErrorRateSla,
    SearchMin,
    SearchMax,
    MaxIterations,
    PeakConcurrency,
    PricePerHour,
    TimeScale,
    Workers,
}

/// One row of the form.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub id: FieldId,
    pub label: &'static str,
    pub kind: FieldKind,
    pub value: String,
    /// What is wrong with the value, shown beside it.
    pub error: Option<String>,
    pub hint: &'static str,
}
