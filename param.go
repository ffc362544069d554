package rpca

import "flag"

// Param is one of a method's own settings, as a program that takes the
// method as configuration sees it (the rpca command's flags): its name,
// one line of usage, and the value that sets the method's field from
// text, refusing what the field cannot hold.
type Param struct {
	// Name is the setting's name on a command line, without dashes
	// ("mu", "ridge-decay").
	Name string
	// Usage says what the setting does and what 0 (its default) means.
	Usage string
	// Value parses text into the method's field. A boolean setting's
	// Value has IsBoolFlag() true, as the flag package expects.
	Value flag.Value
}

// Configurable is a method whose own settings can be listed and set by
// name, for programs that take methods as configuration (package
// methods, the rpca command). Params binds each Param's Value to the
// receiver's fields, so it is called on the method to be configured.
type Configurable interface {
	Method
	Params() []Param
}
