package app

import (
	"github.com/spf13/pflag"

	"github.com/capstan-dev/capstan/pkg/provisioning"
)

// bindPolicyFlags adds --min-values-policy and --preference-policy, the
// solver's relaxation policies (docs/controller.md), parsed into mv and
// pp; a value neither policy names is refused when the flags are parsed.
func bindPolicyFlags(f *pflag.FlagSet, mv *provisioning.MinValuesPolicy, pp *provisioning.PreferencePolicy,
	mvDefault provisioning.MinValuesPolicy, ppDefault provisioning.PreferencePolicy, usagePrefix string) {
	*mv, *pp = mvDefault, ppDefault
	f.Var(&policyFlag[provisioning.MinValuesPolicy]{p: mv, parse: provisioning.ParseMinValuesPolicy}, "min-values-policy",
		usagePrefix+"Strict leaves pods unplaced when a NodePool's minValues cannot be met; BestEffort launches with fewer values and annotates the NodeClaim karpenter.sh/nodeclaim-min-values-relaxed")
	f.Var(&policyFlag[provisioning.PreferencePolicy]{p: pp, parse: provisioning.ParsePreferencePolicy}, "preference-policy",
		usagePrefix+"Respect honours pods' preferred affinities and ScheduleAnyway spreads where it can; Ignore provisions as if pods had none")
}

// policyFlag is a pflag.Value for one of the solver's policies.
type policyFlag[P ~string] struct {
	p     *P
	parse func(string) (P, error)
}

func (f *policyFlag[P]) String() string { return string(*f.p) }

func (f *policyFlag[P]) Set(s string) error {
	v, err := f.parse(s)
	if err != nil {
		return err
	}
	*f.p = v
	return nil
}

func (f *policyFlag[P]) Type() string { return "string" }
