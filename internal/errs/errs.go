// Package errs holds the sentinels of bad input and bad settings that
// the root package exports (rpca.ErrBadInput, rpca.ErrBadSettings), so
// that the packages it imports (package sparse) can mark their errors
// with them.
package errs

import "errors"

var (
	// BadInput is rpca.ErrBadInput.
	BadInput = errors.New("rpca: bad input")
	// BadSettings is rpca.ErrBadSettings.
	BadSettings = errors.New("rpca: bad method settings")
)

// Input marks err as BadInput without changing its text (nil stays nil).
func Input(err error) error {
	if err == nil || errors.Is(err, BadInput) {
		return err
	}
	return inputError{err: err}
}

// Settings marks err as BadSettings and BadInput without changing its
// text (nil stays nil).
func Settings(err error) error {
	if err == nil || errors.Is(err, BadSettings) {
		return err
	}
	return inputError{err: err, settings: true}
}

// inputError marks err as a bad-input error, and with settings also as a
// bad-settings error.
type inputError struct {
	err      error
	settings bool
}

func (e inputError) Error() string { return e.err.Error() }

func (e inputError) Unwrap() []error {
	if e.settings {
		return []error{e.err, BadSettings, BadInput}
	}
	return []error{e.err, BadInput}
}
