package sim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
)

func TestDefaultZoneID(t *testing.T) {
	for _, tc := range []struct {
		region, zone string
		index        int
		want         string
	}{
		{"us-east-1", "us-east-1a", 0, "use1-az1"},
		{"us-west-2", "us-west-2c", 0, "usw2-az3"},
		// The letter counts, not the place: Tokyo has no zone b.
		{"ap-northeast-1", "ap-northeast-1c", 1, "apne1-az3"},
		{"ap-northeast-1", "ap-northeast-1d", 2, "apne1-az4"},
		{"us-west-2", "us-west1-b", 1, "usw2-az2"}, // gcp style
		{"us-west-2", "westus2-3", 2, "usw2-az3"},  // azure style
		{"eu-west-1", "edge-12", 0, "euw1-az12"},   // a number, not its last digit
		{"eu-west-1", "edge-Z", 4, "euw1-az5"},     // neither: the place in the list
		{"eu-central-1", "", 0, "euc1-az1"},        // invalid, but no panic
	} {
		if got := DefaultZoneID(tc.region, tc.zone, tc.index); got != tc.want {
			t.Errorf("DefaultZoneID(%q, %q, %d) = %q, want %q", tc.region, tc.zone, tc.index, got, tc.want)
		}
	}
}

// A profile may give some zones IDs; the rest keep their defaults.
func TestZoneIDExplicitAndDefault(t *testing.T) {
	const doc = `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
spec:
  region: us-east-1
  zones: [us-east-1a, us-east-1b, us-east-1c]
  zoneIDs: {us-east-1a: use1-az4, us-east-1b: use1-az6}
`
	p, err := LoadProfileBytes("profile.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, z := range p.Spec.Zones {
		got[z] = ZoneID(&p.Spec, z)
	}
	want := map[string]string{"us-east-1a": "use1-az4", "us-east-1b": "use1-az6", "us-east-1c": "use1-az3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("zone IDs (-want +got):\n%s", diff)
	}
	// Without zones, the defaulted ones get default IDs.
	p, err = LoadProfileBytes("profile.yaml", []byte("apiVersion: sim.capstan.dev/v1alpha1\nkind: CloudProfile\nspec: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ZoneID(&p.Spec, "us-west-2b"); got != "usw2-az2" {
		t.Errorf("default profile's us-west-2b has zone ID %q, want usw2-az2", got)
	}
}

func TestZoneIDValidation(t *testing.T) {
	type spec = simv1alpha1.CloudProfileSpec
	for _, tc := range []struct {
		name   string
		mutate func(*spec)
		want   []string
	}{
		{"explicit IDs", func(s *spec) { s.ZoneIDs = map[string]string{"us-west-2a": "usw2-az2", "us-west-2b": "usw2-az1"} }, nil},
		{"ID of an unlisted zone", func(s *spec) { s.ZoneIDs = map[string]string{"us-west-2c": "usw2-az3"} }, []string{`spec.zoneIDs[us-west-2c]: Unsupported value: "us-west-2c": supported values: "us-west-2a", "us-west-2b"`}},
		{"empty ID", func(s *spec) { s.ZoneIDs = map[string]string{"us-west-2a": ""} }, []string{`spec.zoneIDs[us-west-2a]: Required value: omit the zone for its default ID`}},
		{"ID not a label value", func(s *spec) { s.ZoneIDs = map[string]string{"us-west-2a": "usw2 az1"} }, []string{`spec.zoneIDs[us-west-2a]: Invalid value: "usw2 az1": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`}},
		{"explicit ID another zone's default", func(s *spec) { s.ZoneIDs = map[string]string{"us-west-2b": "usw2-az1"} }, []string{`spec.zoneIDs[us-west-2b]: Invalid value: "usw2-az1": zone us-west-2a has this ID too`}},
		{"defaults collide", func(s *spec) {
			s.Style, s.Zones, s.Events = simv1alpha1.CloudStyleGCP, []string{"us-west-2a", "us-west-2-a"}, nil
		}, []string{`spec.zones[1]: Invalid value: "usw2-az1": its default zone ID usw2-az1 is zone us-west-2a's too: give one of them an ID in spec.zoneIDs`}},
		{"colliding defaults resolved", func(s *spec) {
			s.Style, s.Zones, s.Events = simv1alpha1.CloudStyleGCP, []string{"us-west-2a", "us-west-2-a"}, nil
			s.ZoneIDs = map[string]string{"us-west-2-a": "usw2-az2"}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := profileTestValid()
			tc.mutate(&p.Spec)
			doc, err := yaml.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			_, err = LoadProfileBytes("profile.yaml", doc)
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, "profile.yaml, document 1: "+w)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
