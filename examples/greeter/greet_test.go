package greeter

import "testing"

func TestGreet(t *testing.T) {
	if got := Greet("Ada"); got != "Hello, Ada" {
		t.Fatalf("Greet(%q) = %q", "Ada", got)
	}
}
