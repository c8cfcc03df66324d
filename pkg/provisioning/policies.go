package provisioning

import (
	"fmt"

	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// MinValuesPolicy says what the solver does when the instance types left
// cannot cover a requirement's minValues (the reference's
// --min-values-policy, v1.6; docs/controller.md).
type MinValuesPolicy string

// Minimum-values policies; the zero value is Strict.
const (
	// MinValuesPolicyStrict leaves the pod unplaced
	// (MinValuesUnsatisfiable).
	MinValuesPolicyStrict MinValuesPolicy = "Strict"
	// MinValuesPolicyBestEffort lowers minValues to what the instance
	// types cover, and the NodeClaim says so
	// (karpenter.sh/nodeclaim-min-values-relaxed).
	MinValuesPolicyBestEffort MinValuesPolicy = "BestEffort"
)

// PreferencePolicy says whether the solver honours pods' preferences:
// preferred node and pod (anti-)affinity and ScheduleAnyway spreads (the
// reference's --preference-policy).
type PreferencePolicy string

// Preference policies; the zero value is Respect.
const (
	// PreferencePolicyRespect tries each pod's preferences, giving up the
	// lightest first when they cannot all hold.
	PreferencePolicyRespect PreferencePolicy = "Respect"
	// PreferencePolicyIgnore places pods as if they had none.
	PreferencePolicyIgnore PreferencePolicy = "Ignore"
)

// ParseMinValuesPolicy reads a --min-values-policy value.
func ParseMinValuesPolicy(s string) (MinValuesPolicy, error) {
	switch p := MinValuesPolicy(s); p {
	case MinValuesPolicyStrict, MinValuesPolicyBestEffort:
		return p, nil
	}
	return "", fmt.Errorf("min-values policy %q, want %s or %s", s, MinValuesPolicyStrict, MinValuesPolicyBestEffort)
}

// ParsePreferencePolicy reads a --preference-policy value.
func ParsePreferencePolicy(s string) (PreferencePolicy, error) {
	switch p := PreferencePolicy(s); p {
	case PreferencePolicyRespect, PreferencePolicyIgnore:
		return p, nil
	}
	return "", fmt.Errorf("preference policy %q, want %s or %s", s, PreferencePolicyRespect, PreferencePolicyIgnore)
}

// meetMinValues is reqs when the options cover every minValues; under
// BestEffort, reqs with each minValues the options fall short of lowered
// to what they cover, as the reference relaxes them; under Strict, false.
func (s *solver) meetMinValues(reqs scheduling.Requirements, options []*itData) (scheduling.Requirements, bool) {
	short := minValuesShort(reqs, options)
	if len(short) == 0 {
		return reqs, true
	}
	if s.opts.MinValuesPolicy != MinValuesPolicyBestEffort {
		return reqs, false
	}
	out := reqs.Clone()
	for key, covered := range short {
		out[key] = out[key].WithMinValues(covered)
	}
	return out, true
}

// MinValuesRelaxed reports whether a claim's requirements keep less
// minValues than its NodePool's for some key.
func MinValuesRelaxed(pool, claim scheduling.Requirements) bool {
	for key, r := range pool {
		if r.MinValues() > 0 && claim.Has(key) && claim.Get(key).MinValues() < r.MinValues() {
			return true
		}
	}
	return false
}
