package v1

import (
	"encoding/json"
	"fmt"
	"time"
)

// Never is the duration value that disables a timer (expireAfter,
// consolidateAfter).
const Never = "Never"

// NillableDuration is a duration that may be "Never"; it marshals to the same
// strings users write ("720h", "Never"). The zero value means "unset", so
// the API server's default applies when a client leaves the field out.
//
// +kubebuilder:validation:Type=string
// +kubebuilder:validation:Pattern=`^(([0-9]+(s|m|h))+|Never)$`
type NillableDuration struct {
	Duration *time.Duration `json:"-"`
	Never    bool           `json:"-"`
}

// MustParseNillableDuration parses s and panics on error; for tests and
// constants.
func MustParseNillableDuration(s string) NillableDuration {
	d, err := ParseNillableDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

// ParseNillableDuration parses "Never" or a Go duration.
func ParseNillableDuration(s string) (NillableDuration, error) {
	if s == Never {
		return NillableDuration{Never: true}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return NillableDuration{}, fmt.Errorf("parsing duration %q, %w", s, err)
	}
	return NillableDuration{Duration: &d}, nil
}

// IsZero reports whether the duration is unset.
func (d NillableDuration) IsZero() bool { return d.Duration == nil && !d.Never }

// String renders the duration as users write it; "" when unset.
func (d NillableDuration) String() string {
	switch {
	case d.Never:
		return Never
	case d.Duration == nil:
		return ""
	}
	return d.Duration.String()
}

// UnmarshalJSON accepts "Never" or a duration string.
func (d *NillableDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("decoding duration, %w", err)
	}
	parsed, err := ParseNillableDuration(s)
	if err != nil {
		return err
	}
	*d = parsed
	return nil
}

// MarshalJSON writes "Never" or the duration string.
// Fields use omitzero so an unset duration is left out, not written as "".
func (d NillableDuration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

// ToUnstructured implements the value converter so that unstructured
// conversion (server-side apply, the dynamic client) sees a string.
func (d NillableDuration) ToUnstructured() any { return d.String() }
