package api

// ---- agent/intents (docs/PROTOCOL.md §3, docs/TRACKING.md) ----

// IntentInfo is one intent of .orchestration/active_intents.yaml.
type IntentInfo struct {
	ID                 string   `json:"id"`
	Name               string   `json:"name"`
	Status             string   `json:"status"`
	OwnedScope         []string `json:"ownedScope"`
	Constraints        []string `json:"constraints"`
	AcceptanceCriteria []string `json:"acceptanceCriteria"`
	// Selectable is false for an intent whose status is COMPLETED (in any
	// case): agent/run's intentId and the select_intent tool refuse it.
	Selectable bool `json:"selectable"`
}

// IntentsResult is the reply to agent/intents.
type IntentsResult struct {
	// Intents are those of the file, in its order; empty without a file.
	Intents []IntentInfo `json:"intents"`
	// Error says why the file cannot be used, when it is broken; Intents is
	// then empty and mutating tools are refused until it is fixed.
	Error string `json:"error,omitempty"`
}
