// Package greeter says hello.
package greeter

// Greet returns a greeting for name.
func Greet(name string) string {
	return "Hello, " + name
}
