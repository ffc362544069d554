// Package request holds the error that the library's choosers of a
// workflow's model (ratings.Choose, video.Choose) return for options
// that break one of their rules, so that both name the model and the
// options at fault the same way.
package request

import (
	"fmt"
	"strings"
)

// Error is a request that breaks a rule (Err): Model is the model or
// method asked for, Options the options at fault, by name, and Scope
// what it is ("ratings: model", "video: method").
type Error struct {
	Scope   string
	Model   string
	Options []string
	Err     error
}

func (e *Error) Error() string {
	if len(e.Options) == 0 {
		return fmt.Sprintf("%s %s: %v", e.Scope, e.Model, e.Err)
	}
	return fmt.Sprintf("%s %s with %s: %v", e.Scope, e.Model, strings.Join(e.Options, ", "), e.Err)
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }
