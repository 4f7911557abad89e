// Package custom has a type that marshals itself, which the generator
// cannot write without being told its TypeScript.
package custom

// Stamp marshals itself.
type Stamp struct{}

// MarshalJSON implements json.Marshaler.
func (*Stamp) MarshalJSON() ([]byte, error) { return []byte(`"now"`), nil }

// Event is on the wire.
type Event struct {
	At Stamp `json:"at"`
}
