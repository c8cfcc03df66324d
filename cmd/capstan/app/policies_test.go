package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/capstan-dev/capstan/pkg/provisioning"
)

func TestPolicyFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantMV  provisioning.MinValuesPolicy
		wantPP  provisioning.PreferencePolicy
		wantErr bool
	}{
		{nil, provisioning.MinValuesPolicyStrict, provisioning.PreferencePolicyRespect, false},
		{[]string{"--min-values-policy=BestEffort", "--preference-policy=Ignore"}, provisioning.MinValuesPolicyBestEffort, provisioning.PreferencePolicyIgnore, false},
		{[]string{"--min-values-policy=Strict", "--preference-policy=Respect"}, provisioning.MinValuesPolicyStrict, provisioning.PreferencePolicyRespect, false},
		{[]string{"--min-values-policy=besteffort"}, "", "", true},
		{[]string{"--preference-policy=Prefer"}, "", "", true},
	} {
		opts := &Options{Providers: providerList()}
		cmd := &cobra.Command{}
		opts.bindFlags(cmd)
		err := cmd.Flags().Parse(tc.args)
		if (err != nil) != tc.wantErr {
			t.Errorf("%v: error %v, want error %v", tc.args, err, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		if diff := cmp.Diff([]string{string(tc.wantMV), string(tc.wantPP)}, []string{string(opts.MinValuesPolicy), string(opts.PreferencePolicy)}); diff != "" {
			t.Errorf("%v (-want +got):\n%s", tc.args, diff)
		}
		sim := newSimulateCommand()
		if err := sim.Flags().Parse(tc.args); err != nil {
			t.Errorf("simulate %v: %v", tc.args, err)
		}
	}
}
