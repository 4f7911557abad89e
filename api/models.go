package api

// ---- agent/models and agent/checkModel (docs/PROTOCOL.md §3, docs/MODELS.md) ----

// ModelInfo is one model a provider offers, as agent/models lists it.
type ModelInfo struct {
	// ID is the model as the settings take it: "provider:name", e.g.
	// "anthropic:claude-sonnet-4-5-20250929". Pass it as agent/run's model.
	ID string `json:"id"`
	// Provider is "openai", "anthropic", "ollama" or "script".
	Provider string `json:"provider"`
	// Name is the provider's own id of the model (ID without "provider:").
	Name string `json:"name"`
	// DisplayName is the provider's name for people, when it gives one
	// (Anthropic does).
	DisplayName string `json:"displayName,omitempty"`
	// Current marks the model agent/run uses when it names none.
	Current bool `json:"current,omitempty"`
}

// ProviderInfo says what became of asking one provider for its models.
type ProviderInfo struct {
	Provider string `json:"provider"`
	// URL is where the provider was asked (its base URL).
	URL string `json:"url,omitempty"`
	// Configured is false for a provider the environment does not set up
	// (no key, no base URL, no Ollama answering at the default address):
	// Hint then says how to set it up, and it lists no model.
	Configured bool `json:"configured"`
	// Models is how many models it listed.
	Models int `json:"models"`
	// Problem and Error say why a configured provider listed nothing: the
	// kind (one of the Problem* values) and the words for the person.
	Problem Problem `json:"problem,omitempty"`
	Error   string  `json:"error,omitempty"`
	Hint    string  `json:"hint,omitempty"`
}

// ModelsResult is the reply to agent/models.
type ModelsResult struct {
	// Current is the model agent/run uses when it names none
	// ("provider:name"), "" when none is configured; Source says where it
	// comes from (initializationOptions.model, AGENTLS_MODEL,
	// ANTHROPIC_API_KEY, OPENAI_API_KEY), CurrentError why there is none.
	Current      string `json:"current"`
	Source       string `json:"source,omitempty"`
	CurrentError string `json:"currentError,omitempty"`
	// Models are the models of every provider that answered, provider by
	// provider (openai, anthropic, ollama, then the scripted model), each
	// in the provider's own order. The current model is always listed.
	Models []ModelInfo `json:"models"`
	// Providers are openai, anthropic and ollama, in that order, and script
	// when the current model is scripted.
	Providers []ProviderInfo `json:"providers"`
}

// CheckModelParams are the params of agent/checkModel.
type CheckModelParams struct {
	// Model is the model to check ("provider:name"); "" checks the one
	// agent/run uses when it names none.
	Model string `json:"model,omitempty"`
}

// Problem is the kind of problem agent/checkModel and agent/models report:
// one of the Problem* values.
type Problem = string

// The kinds of problem.
const (
	ProblemNoModel      Problem = "noModel"      // no model is configured
	ProblemConfig       Problem = "config"       // the spec cannot work: unknown provider, no key, bad script
	ProblemAuth         Problem = "auth"         // the provider refused the key (401, 403)
	ProblemUnreachable  Problem = "unreachable"  // no answer from the provider's URL
	ProblemUnknownModel Problem = "unknownModel" // the provider does not offer the model
	ProblemRateLimited  Problem = "rateLimited"  // the provider asked to slow down (429)
	ProblemProvider     Problem = "provider"     // the provider failed (5xx, overloaded)
	ProblemRefused      Problem = "refused"      // the provider refused the request for another reason
	ProblemBadAnswer    Problem = "badAnswer"    // the provider's answer could not be read
)

// CheckedBy is how agent/checkModel reached its verdict: one of the
// CheckedBy* values.
type CheckedBy = string

// The ways of checking a model.
const (
	CheckedByList       CheckedBy = "list"       // the provider's model list names the model
	CheckedByCompletion CheckedBy = "completion" // a one-token request to the model
	CheckedByScript     CheckedBy = "script"     // the script file loads
)

// CheckModelResult is the reply to agent/checkModel. A model that cannot
// be used is a result with OK false, never an error.
type CheckModelResult struct {
	// Model is the model checked ("provider:name"), "" when none is
	// configured; Source where it comes from.
	Model  string `json:"model"`
	Source string `json:"source,omitempty"`
	OK     bool   `json:"ok"`
	// Checked is how the model was tried (one of the CheckedBy* values),
	// absent when it could not be tried at all.
	Checked CheckedBy `json:"checked,omitempty"`
	// Problem is the kind of problem (one of the Problem* values) when OK
	// is false.
	Problem Problem `json:"problem,omitempty"`
	// Message says, in words for the person, what works or what is wrong
	// and what to do about it. It never holds a key.
	Message string `json:"message"`
	// Closest are the models the provider offers whose names are nearest
	// an unknown model's ("provider:name"), nearest first, at most 3.
	Closest []string `json:"closest,omitempty"`
}
