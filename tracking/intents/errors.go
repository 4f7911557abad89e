package intents

import "errors"

// Sentinel errors. The gatekeeper's refusals wrap them with the detail the
// model needs to correct itself.
var (
	// ErrBroken: active_intents.yaml exists but cannot be used.
	ErrBroken = errors.New("active_intents.yaml is broken")
	// ErrNoIntentSelected: intents exist and a mutating tool ran without one.
	ErrNoIntentSelected = errors.New("no intent selected")
	// ErrUnknownIntent: the id names no intent of the file.
	ErrUnknownIntent = errors.New("unknown intent")
	// ErrOutsideScope: a write outside the selected intent's owned_scope.
	ErrOutsideScope = errors.New("outside the intent's owned_scope")
	// ErrCompleted: the intent's status is COMPLETED; it cannot be
	// selected.
	ErrCompleted = errors.New("a completed intent cannot be selected")
)
