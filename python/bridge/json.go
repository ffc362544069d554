package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// jsonStrict decodes text into v, refusing unknown fields and trailing
// data.
func jsonStrict(text string, v any) error {
	d := json.NewDecoder(bytes.NewReader([]byte(text)))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after the configuration")
	}
	return nil
}
