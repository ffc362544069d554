// Package note is the type in which the workflows (decompose, video)
// report what a user should know of a result: a condition in words,
// without the remedy, which each program (the command line, the Python
// package) adds in its own terms from the condition's kind.
package note

// Kind names a condition.
type Kind string

// Note is one condition of a result.
type Note struct {
	Kind    Kind   `json:"kind"`
	Warning bool   `json:"warning"` // the result may be inaccurate
	Text    string `json:"text"`
}
