package tsgen

import (
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testkit"
)

// TestProtocolIsGeneratedFromAPI holds editors/vscode/src/protocol.gen.ts
// to what Generate makes of package api: -update rewrites it.
func TestProtocolIsGeneratedFromAPI(t *testing.T) {
	out, err := Generate("../..", API)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, "../../../editors/vscode/src/protocol.gen.ts", string(out))
}

// TestGenerateWritesWhatEncodingJSONMarshals reads a package of one of
// each shape and checks the TypeScript, written here by hand.
func TestGenerateWritesWhatEncodingJSONMarshals(t *testing.T) {
	out, err := Generate("testdata/sample", Config{
		Header:       []string{"Generated.", "", "Second paragraph."},
		MethodPrefix: "Method",
		Custom:       map[string]string{"Token": "string"},
	})
	if err != nil {
		t.Fatal(err)
	}
	const want = `// Generated.
//
// Second paragraph.

/** Method names of the sample. */
export const Methods = {
  run: 'agent/run',
  mcpServers: 'agent/mcpServers',
} as const;

/** Color is a colour: one of the Color* values. */
export type Color =
  | 'red' // warm
  // ColorBlue is cool.
  | 'it\'s blue';

/** Level is a numbered level. */
export type Level =
  | 1 // LevelLow
  | -2; // LevelHigh below the floor

/** Token marshals itself as a string. */
export type Token = string;

/** Thing has a field of each kind. */
export interface Thing {
  /** Name is always there. */
  name: string;
  note?: string;
  count: number;
  ratio?: number;
  maybe: string | null;
  tags: string[] | null;
  opt?: string[];
  color: Color;
  level?: Level;
  raw?: unknown;
  any: unknown;
  bytes: string | null;
  byName: Record<string, Part> | null;
  parts: Part[] | null;
  /** a struct is never omitted */
  part: Part;
  zero?: Part;
  token: Token;
  inline?: {
    on?: boolean;
  };
  n: string;
  '-': string;
  Plain: string;
  extra: boolean;
}

/** Part is reached from Thing only. */
export interface Part {
  id: string;
}

/** Embedded's fields are promoted into Thing's. */
export interface Embedded {
  extra: boolean;
}

/** Empty is {}. */
export type Empty = Record<string, never>;
`
	if got := string(out); got != want {
		t.Errorf("Generate wrote\n%s\nwant\n%s", got, want)
	}
}

// TestGenerateRefusesATypeThatMarshalsItselfUntold: its fields do not say
// its shape, so the generator asks for it rather than guess.
func TestGenerateRefusesATypeThatMarshalsItselfUntold(t *testing.T) {
	_, err := Generate("testdata/custom", Config{})
	if err == nil || !strings.Contains(err.Error(), "Stamp marshals itself (MarshalJSON): give its TypeScript in Config.Custom") {
		t.Fatalf("Generate: %v, want the error that names Stamp", err)
	}
}

// TestGenerateRefusesACustomTypeThatDoesNotMarshalItself keeps Config.Custom
// to the types whose fields do not say their shape.
func TestGenerateRefusesACustomTypeThatDoesNotMarshalItself(t *testing.T) {
	_, err := Generate("testdata/sample", Config{Custom: map[string]string{"Token": "string", "Part": "string"}})
	if err == nil || !strings.Contains(err.Error(), "Config.Custom gives the TypeScript of Part, which does not marshal itself") {
		t.Fatalf("Generate: %v, want the error that names Part", err)
	}
}

// TestLowerCamel names the Methods table's keys as the extension had them.
func TestLowerCamel(t *testing.T) {
	for in, want := range map[string]string{
		"Run": "run", "ReadFile": "readFile", "MCPServers": "mcpServers", "ID": "id", "run": "run",
		"WorkDoneProgressCancel": "workDoneProgressCancel",
	} {
		if got := lowerCamel(in); got != want {
			t.Errorf("lowerCamel(%q) = %q, want %q", in, got, want)
		}
	}
}
