// Package sample is what the generator's test reads: one of each shape
// encoding/json gives a type.
package sample

import "encoding/json"

// Method names of the sample.
const (
	MethodRun        = "agent/run"
	MethodMCPServers = "agent/mcpServers"
)

// Color is a colour: one of the Color* values.
type Color = string

// The colours.
const (
	ColorRed Color = "red" // warm
	// ColorBlue is cool.
	ColorBlue Color = "it's blue"
)

// Level is a numbered level.
type Level int

// The levels.
const (
	LevelLow  Level = 1
	LevelHigh Level = -2 // below the floor
)

// Unused is an enum no type reaches: it is not written.
type Unused int

// The unused values.
const (
	UnusedOne Unused = iota
	UnusedTwo
)

// Token marshals itself as a string.
type Token struct{ s string }

// MarshalJSON implements json.Marshaler.
func (t Token) MarshalJSON() ([]byte, error) { return json.Marshal(t.s) }

// Thing has a field of each kind.
type Thing struct {
	// Name is always there.
	Name   string          `json:"name"`
	Note   string          `json:"note,omitempty"`
	Count  int64           `json:"count"`
	Ratio  *float64        `json:"ratio,omitempty"`
	Maybe  *string         `json:"maybe"`
	Tags   []string        `json:"tags"`
	Opt    []string        `json:"opt,omitempty"`
	Color  Color           `json:"color"`
	Level  Level           `json:"level,omitempty"`
	Raw    json.RawMessage `json:"raw,omitempty"`
	Any    any             `json:"any"`
	Bytes  []byte          `json:"bytes"`
	ByName map[string]Part `json:"byName"`
	Parts  []*Part         `json:"parts"`
	Part   Part            `json:"part,omitempty"` // a struct is never omitted
	Zero   Part            `json:"zero,omitzero"`
	Token  Token           `json:"token"`
	Inline *struct {
		On bool `json:"on,omitempty"`
	} `json:"inline,omitempty"`
	Quoted int    `json:"n,string"`
	Dash   string `json:"-"`
	Dashed string `json:"-,"`
	Plain  string
	hidden string
	Embedded
}

// Part is reached from Thing only.
type Part struct {
	ID string `json:"id"`
}

// Embedded's fields are promoted into Thing's.
type Embedded struct {
	Extra bool `json:"extra"`
}

// Empty is {}.
type Empty struct{}

// Internal has no json tag and no type reaches it: it is not written.
type Internal struct {
	A bool
}

var _ = Thing{}.hidden
