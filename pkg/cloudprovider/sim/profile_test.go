package sim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
)

// profileTestExamples is the repository's examples directory.
const profileTestExamples = "../../../examples"

func profileTestDuration(s string) metav1.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return metav1.Duration{Duration: d}
}

func TestDefaultProfile(t *testing.T) {
	p, err := DefaultProfile()
	if err != nil {
		t.Fatal(err)
	}
	want := &simv1alpha1.CloudProfile{
		TypeMeta: metav1.TypeMeta{APIVersion: ProfileAPIVersion, Kind: ProfileKind},
		Metadata: metav1.ObjectMeta{Name: "default"},
		Spec: simv1alpha1.CloudProfileSpec{
			Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b", "us-west-2c"},
			Style: simv1alpha1.CloudStyleAWS, LaunchLatency: profileTestDuration("2s"),
			Reservations: []simv1alpha1.Reservation{
				{ID: "cr-0a1", InstanceType: "p5.48xlarge", Zone: "us-west-2a", Count: 2, Type: simv1alpha1.ReservationTypeTargeted, OwnerID: "111122223333", Tags: map[string]string{"team": "ml"}},
				{ID: "cr-0b2", InstanceType: "g5.12xlarge", Zone: "us-west-2b", Count: 4, Type: simv1alpha1.ReservationTypeOpen, OwnerID: "111122223333", Tags: map[string]string{"team": "ml"}},
			},
		},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("default profile (-want +got):\n%s", diff)
	}
	types, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(p, types); err != nil {
		t.Errorf("default profile does not validate:\n%v", err)
	}
	// Each call decodes anew, so a caller's changes stay its own.
	p.Spec.Zones[0] = "changed"
	if again, _ := DefaultProfile(); again.Spec.Zones[0] != "us-west-2a" {
		t.Errorf("DefaultProfile shares state between calls")
	}
}

func TestLoadProfileSkipsOtherDocuments(t *testing.T) {
	profile := "apiVersion: sim.capstan.dev/v1alpha1\nkind: CloudProfile\nspec:\n  style: gcp\n  capacity:\n  - {instanceType: c4.xlarge, zone: us-west-2-a, capacityType: spot, count: 0}\n"
	nodePool := "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      requirements: []\n"
	nodeClass := "apiVersion: sim.capstan.dev/v1alpha1\nkind: SimNodeClass\nmetadata:\n  name: default\n"
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: inflate\n"
	want := &simv1alpha1.CloudProfile{
		TypeMeta: metav1.TypeMeta{APIVersion: ProfileAPIVersion, Kind: ProfileKind},
		Spec: simv1alpha1.CloudProfileSpec{
			Region: "us-west-2", Zones: []string{"us-west-2-a", "us-west-2-b", "us-west-2-c"},
			Style: simv1alpha1.CloudStyleGCP, LaunchLatency: profileTestDuration("2s"),
			Capacity: []simv1alpha1.CapacityPool{{InstanceType: "c4.xlarge", Zone: "us-west-2-a", CapacityType: v1.CapacityTypeSpot, Count: 0}},
		},
	}
	for _, tc := range []struct{ name, data string }{
		{"profile among NodePools", nodePool + "---\n" + nodeClass + "---\n" + profile + "---\n" + deployment},
		{"leading separator and comment-only documents", "---\n# header\n---\n" + nodePool + "--- # the cloud\n" + profile + "---\n"},
		{"CRLF line endings", strings.ReplaceAll(nodePool+"---\n"+profile, "\n", "\r\n")},
		{"profile alone", profile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadProfileBytes("profile.yaml", []byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("loaded profile (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadProfileRejectsFiles(t *testing.T) {
	const head = "apiVersion: sim.capstan.dev/v1alpha1\nkind: CloudProfile\n"
	const nodePool = "apiVersion: karpenter.sh/v1\nkind: NodePool\n---\n"
	for _, tc := range []struct{ name, data, want string }{
		{"no documents", "# nothing\n", `profile.yaml: no sim.capstan.dev/v1alpha1 CloudProfile among its 0 documents, of kinds []`},
		{"no CloudProfile", nodePool + "apiVersion: apps/v1\nkind: Deployment\n", `profile.yaml: no sim.capstan.dev/v1alpha1 CloudProfile among its 2 documents, of kinds ["NodePool" "Deployment"]`},
		{"two CloudProfiles", nodePool + head + "---\n" + head, `profile.yaml: documents 2 and 3 are both CloudProfiles; a file holds exactly one`},
		{"other version", "apiVersion: sim.capstan.dev/v1beta1\nkind: CloudProfile\n", `profile.yaml, document 1: apiVersion "sim.capstan.dev/v1beta1" is not supported, want "sim.capstan.dev/v1alpha1"`},
		{"unknown field", nodePool + head + "spec:\n  capacity:\n  - {instanceType: c4.xlarge, cuont: 1}\n", `decoding profile.yaml, document 2, strict decoding error: unknown field "spec.capacity[0].cuont"`},
		{"field in the wrong case", head + "spec:\n  Zones: [us-west-2a]\n", `decoding profile.yaml, document 1, strict decoding error: unknown field "spec.Zones"`},
		{"duplicate key", head + "spec:\n  region: us-west-2\n  region: us-east-1\n", `decoding profile.yaml, document 1, error converting YAML to JSON: yaml: unmarshal errors:`},
		{"wrong type", head + "spec:\n  capacity:\n  - count: many\n", `decoding profile.yaml, document 1, error unmarshaling JSON`},
		{"bad duration", head + "spec:\n  launchLatency: 2 seconds\n", `profile.yaml, document 1: spec.launchLatency: Invalid value: "2 seconds": time: unknown unit`},
		{"broken YAML in another document", "kind: [\n---\n" + head, `decoding profile.yaml, document 1, error converting YAML to JSON`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadProfileBytes("profile.yaml", []byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// profileTestValid uses every section and event type, so each rejection
// below changes one thing in an otherwise valid profile.
func profileTestValid() *simv1alpha1.CloudProfile {
	d := profileTestDuration
	return &simv1alpha1.CloudProfile{
		TypeMeta: metav1.TypeMeta{APIVersion: ProfileAPIVersion, Kind: ProfileKind},
		Spec: simv1alpha1.CloudProfileSpec{
			Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, Style: simv1alpha1.CloudStyleAWS, LaunchLatency: d("5s"),
			Capacity:   []simv1alpha1.CapacityPool{{InstanceType: "c5.xlarge", Zone: "us-west-2a", CapacityType: v1.CapacityTypeSpot, Count: 0}},
			SpotPrices: []simv1alpha1.SpotPrice{{InstanceType: "c4.xlarge", Zone: "*", Price: "0.0634"}},
			Reservations: []simv1alpha1.Reservation{{
				ID: "cr-0a1", InstanceType: "p5.48xlarge", Zone: "us-west-2a", Count: 2, Type: simv1alpha1.ReservationTypeTargeted,
				OwnerID: "111122223333", Tags: map[string]string{"team": "ml"}, StartTime: ptr.To(d("10m")), EndTime: ptr.To(d("2h")),
			}},
			Events: []simv1alpha1.CloudEvent{
				{At: d("1m"), Type: simv1alpha1.EventSpotInterruption, InstanceType: "c5.xlarge", Zone: "us-west-2a"},
				{At: d("2m"), Type: simv1alpha1.EventRebalanceRecommendation, InstanceID: "i-00000000002a"},
				{At: d("2m"), Type: simv1alpha1.EventScheduledChange, InstanceType: "c5.xlarge", Zone: "*"},
				{At: d("3m"), Type: simv1alpha1.EventCapacityChange, InstanceType: "c5.xlarge", Zone: "*", CapacityType: v1.CapacityTypeSpot, Count: ptr.To(3)},
				{At: d("4m"), Type: simv1alpha1.EventSpotPriceChange, InstanceType: "c4.xlarge", Zone: "us-west-2b", Price: "0.07"},
				{At: d("5m"), Type: simv1alpha1.EventReservationConsumedExternally, ReservationID: "cr-0a1", Count: ptr.To(1)},
				{At: d("6m"), Type: simv1alpha1.EventReservationExpired, ReservationID: "cr-0a1"},
				{At: d("7m"), Type: simv1alpha1.EventScale, Workload: "default/inflate", Replicas: ptr.To[int32](0)},
			},
		},
	}
}

func TestProfileValidation(t *testing.T) {
	type spec = simv1alpha1.CloudProfileSpec
	d := profileTestDuration
	for _, tc := range []struct {
		name   string
		mutate func(*spec)
		want   []string // lines, after "profile.yaml, document 2: "
	}{
		{"valid", func(*spec) {}, nil},
		{"unknown region", func(s *spec) { s.Region = "us-west" }, []string{`spec.region: Unsupported value: "us-west": supported values: "ap-northeast-1", "eu-central-1", "eu-west-1", "us-east-1", "us-east-2", "us-west-2"`}},
		{"unknown style", func(s *spec) { s.Style = "oracle"; s.Events = nil }, []string{`spec.style: Unsupported value: "oracle": supported values: "aws", "gcp", "azure"`}},
		{"negative launch latency", func(s *spec) { s.LaunchLatency = d("-1s") }, []string{`spec.launchLatency: Invalid value: "-1s": must not be negative`}},
		{"negative reservation refresh interval", func(s *spec) { s.ReservationRefreshInterval = d("-1m") }, []string{`spec.reservationRefreshInterval: Invalid value: "-1m0s": must not be negative`}},
		{"negative spot limit", func(s *spec) { s.MaxSpotInstances = -1 }, []string{`spec.maxSpotInstances: Invalid value: -1: must be at least 0`}},
		{"aws zone outside the region", func(s *spec) { s.Zones = append(s.Zones, "zone-c") }, []string{`spec.zones[2]: Invalid value: "zone-c": an aws-style zone is the region and a letter, like us-west-2a`}},
		{"duplicate zone", func(s *spec) { s.Zones = append(s.Zones, "us-west-2a") }, []string{`spec.zones[2]: Duplicate value: "us-west-2a"`}},
		{"zone not a label value", func(s *spec) { s.Zones = append(s.Zones, "us-west-2c!") }, []string{`spec.zones[2]: Invalid value: "us-west-2c!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`}},
		{"gcp zones need only be unique", func(s *spec) {
			s.Style, s.Zones, s.Events = simv1alpha1.CloudStyleGCP, []string{"us-west1-a", "us-west1-b", "us-west1-a"}, nil
			s.Capacity[0].Zone, s.Reservations[0].Zone = "us-west1-a", "us-west1-b"
		}, []string{`spec.zones[2]: Duplicate value: "us-west1-a"`}},
		{"pool of an unknown type", func(s *spec) { s.Capacity[0].InstanceType = "p9.huge" }, []string{`spec.capacity[0].instanceType: Invalid value: "p9.huge": not in the catalog`}},
		{"pool in an unknown zone", func(s *spec) { s.Capacity[0].Zone = "*" }, []string{`spec.capacity[0].zone: Unsupported value: "*": supported values: "us-west-2a", "us-west-2b"`}},
		{"reserved pool", func(s *spec) { s.Capacity[0].CapacityType = v1.CapacityTypeReserved }, []string{`spec.capacity[0].capacityType: Unsupported value: "reserved": supported values: "spot", "on-demand"`}},
		{"negative pool", func(s *spec) { s.Capacity[0].Count = -2 }, []string{`spec.capacity[0].count: Invalid value: -2: must be at least 0`}},
		{"duplicate pool", func(s *spec) { s.Capacity = append(s.Capacity, s.Capacity[0]) }, []string{`spec.capacity[1]: Duplicate value: "c5.xlarge/us-west-2a/spot"`}},
		{"spot price of an unknown type", func(s *spec) { s.SpotPrices[0].InstanceType = "c4.huge" }, []string{`spec.spotPrices[0].instanceType: Invalid value: "c4.huge": not in the catalog`}},
		{"spot price in an unknown zone", func(s *spec) { s.SpotPrices[0].Zone = "us-east-1a" }, []string{`spec.spotPrices[0].zone: Unsupported value: "us-east-1a": supported values: "us-west-2a", "us-west-2b", "*"`}},
		{"spot price not a decimal", func(s *spec) { s.SpotPrices[0].Price = "6e-2" }, []string{`spec.spotPrices[0].price: Invalid value: "6e-2": must be a decimal number of dollars per hour, like "0.0634"`}},
		{"zero spot price", func(s *spec) { s.SpotPrices[0].Price = "0.0" }, []string{`spec.spotPrices[0].price: Invalid value: "0.0": must be positive`}},
		{"overlapping spot prices", func(s *spec) {
			s.SpotPrices = append(s.SpotPrices, simv1alpha1.SpotPrice{InstanceType: "c4.xlarge", Zone: "us-west-2a", Price: "0.05"}, s.SpotPrices[0])
		}, []string{`spec.spotPrices[1].zone: Invalid value: "us-west-2a": overlaps an earlier price for c4.xlarge: use one "*" price or per-zone prices`, `spec.spotPrices[2]: Duplicate value: "c4.xlarge/*"`}},
		{"reservation id", func(s *spec) { s.Reservations[0].ID = "cr-0A1"; s.Events = s.Events[:5] }, []string{`spec.reservations[0].id: Invalid value: "cr-0A1": must match ^cr-[0-9a-z]+$ (at most 64 characters)`}},
		{"duplicate reservation", func(s *spec) { s.Reservations = append(s.Reservations, s.Reservations[0]) }, []string{`spec.reservations[1].id: Duplicate value: "cr-0a1"`}},
		{"reservation of an unknown type", func(s *spec) { s.Reservations[0].InstanceType = "p9.huge" }, []string{`spec.reservations[0].instanceType: Invalid value: "p9.huge": not in the catalog`}},
		{"reservation in an unknown zone", func(s *spec) { s.Reservations[0].Zone = "" }, []string{`spec.reservations[0].zone: Required value`}},
		{"empty reservation", func(s *spec) { s.Reservations[0].Count = 0; s.Events = s.Events[:5] }, []string{`spec.reservations[0].count: Invalid value: 0: must be at least 1`}},
		{"reservation type", func(s *spec) { s.Reservations[0].Type = "block" }, []string{`spec.reservations[0].type: Unsupported value: "block": supported values: "open", "targeted"`}},
		{"reservation owner", func(s *spec) { s.Reservations[0].OwnerID = "1111-2222-3333" }, []string{`spec.reservations[0].ownerID: Invalid value: "1111-2222-3333": must be a 12-digit account id`}},
		{"empty reservation tag", func(s *spec) { s.Reservations[0].Tags["env"] = "" }, []string{`spec.reservations[0].tags[env]: Invalid value: "": tag keys and values must not be empty`}},
		{"reservation ends before it starts", func(s *spec) { s.Reservations[0].EndTime = ptr.To(d("5m")) }, []string{`spec.reservations[0].endTime: Invalid value: "5m0s": must be later than the start (10m0s)`}},
		{"capacity block without an end", func(s *spec) { s.Reservations[0].CapacityBlock = true; s.Reservations[0].EndTime = nil }, []string{`spec.reservations[0].endTime: Required value: a capacity block ends: its instances are reclaimed at its end time`}},
		{"negative spot notice", func(s *spec) { s.SpotNotice = d("-1s") }, []string{`spec.spotNotice: Invalid value: "-1s": must not be negative`}},
		{"reservation starts before the cloud", func(s *spec) { s.Reservations[0].StartTime = ptr.To(d("-1m")) }, []string{`spec.reservations[0].startTime: Invalid value: "-1m0s": must not be negative`}},
		{"event before the start", func(s *spec) { s.Events[0].At = d("-1m") }, []string{`spec.events[0].at: Invalid value: "-1m0s": must not be negative`}},
		{"events out of order", func(s *spec) { s.Events[3].At = d("1m") }, []string{`spec.events[3].at: Invalid value: "1m0s": is earlier than the event before it (2m0s): list events in time order`}},
		{"unknown event type", func(s *spec) { s.Events[6].Type = "ReservationCancelled" }, []string{`spec.events[6].type: Unsupported value: "ReservationCancelled": supported values: "CapacityChange", "InstanceStop", "InstanceStopping", "InstanceTerminating", "KubeletStop", "RebalanceRecommendation", "ReservationConsumedExternally", "ReservationExpired", "Scale", "ScheduledChange", "SpotInterruption", "SpotPriceChange"`}},
		{"field the event type ignores", func(s *spec) { s.Events[0].Count = ptr.To(1) }, []string{`spec.events[0].count: Forbidden: not used by SpotInterruption events`}},
		{"interruption without a target", func(s *spec) { s.Events[0].InstanceType, s.Events[0].Zone = "", "" }, []string{`spec.events[0].instanceType: Required value`, `spec.events[0].zone: Required value`}},
		{"interruption by id and type", func(s *spec) { s.Events[1].InstanceType = "c5.xlarge" }, []string{`spec.events[1].instanceID: Forbidden: pick instances by instanceID or by instanceType and zone, not both`}},
		{"interruption of a bad id", func(s *spec) { s.Events[1].InstanceID = "vm-1" }, []string{`spec.events[1].instanceID: Invalid value: "vm-1": must be an instance id like i-00000000002a`}},
		{"rebalance off aws", func(s *spec) { s.Style = simv1alpha1.CloudStyleAzure }, []string{`spec.events[1].type: Invalid value: "RebalanceRecommendation": only the aws style sends rebalance recommendations`}},
		{"capacity change without count", func(s *spec) { s.Events[3].Count = nil }, []string{`spec.events[3].count: Required value`}},
		{"capacity change of reserved", func(s *spec) { s.Events[3].CapacityType = v1.CapacityTypeReserved }, []string{`spec.events[3].capacityType: Unsupported value: "reserved": supported values: "spot", "on-demand"`}},
		{"spot price change without price", func(s *spec) { s.Events[4].Price = "" }, []string{`spec.events[4].price: Required value`}},
		{"spot price change on gcp", func(s *spec) { s.Style = simv1alpha1.CloudStyleGCP; s.Events = s.Events[3:] }, []string{`spec.events[1].type: Invalid value: "SpotPriceChange": gcp-style spot prices are fixed for the run`}},
		{"unknown reservation", func(s *spec) { s.Events[6].ReservationID = "cr-0b2" }, []string{`spec.events[6].reservationID: Not found: "cr-0b2"`}},
		{"external use without count", func(s *spec) { s.Events[5].Count = nil }, []string{`spec.events[5].count: Required value`}},
		{"external use past the reservation", func(s *spec) { s.Events[5].Count = ptr.To(3) }, []string{`spec.events[5].count: Invalid value: 3: exceeds the reservation's 2 instances`}},
		{"scale of a bare name", func(s *spec) { s.Events[7].Workload = "inflate" }, []string{`spec.events[7].workload: Invalid value: "inflate": must name a Deployment as namespace/name`}},
		{"scale without replicas", func(s *spec) { s.Events[7].Replicas = nil }, []string{`spec.events[7].replicas: Required value`}},
		{"scale below zero", func(s *spec) { s.Events[7].Replicas = ptr.To[int32](-1) }, []string{`spec.events[7].replicas: Invalid value: -1: must not be negative`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := profileTestValid()
			tc.mutate(&p.Spec)
			doc, err := yaml.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			data := "apiVersion: karpenter.sh/v1\nkind: NodePool\n---\n" + string(doc)
			_, err = LoadProfileBytes("profile.yaml", []byte(data))
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, "profile.yaml, document 2: "+w)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// Validate works on profiles built in memory, which the loader would have
// defaulted: errors then name only the field.
func TestValidateInMemory(t *testing.T) {
	types, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	p := profileTestValid()
	p.Spec.Zones, p.Spec.Capacity, p.Spec.Reservations, p.Spec.Events = nil, nil, nil, nil
	err = Validate(p, types)
	var pe *ProfileError
	if !errors.As(err, &pe) {
		t.Fatalf("Validate = %v, want a *ProfileError", err)
	}
	if diff := cmp.Diff([]string{"spec.zones: Required value: a cloud needs at least one zone"}, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if len(pe.Errs) != 1 || pe.Errs[0].Field != "spec.zones" {
		t.Errorf("ProfileError.Errs = %v, want one error on spec.zones", pe.Errs)
	}
}

// DecodeProfile reads one document of a mixed stream as LoadProfileBytes
// reads a file's profile, naming the source it is given in errors.
func TestDecodeProfile(t *testing.T) {
	const head = "apiVersion: sim.capstan.dev/v1alpha1\nkind: CloudProfile\n"
	p, err := DecodeProfile("x.yaml, document 3", []byte(head+"spec:\n  style: azure\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"us-west-2-1", "us-west-2-2", "us-west-2-3"}, p.Spec.Zones); diff != "" {
		t.Errorf("defaulted zones (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"invalid", head + "spec:\n  region: mars-1\n", `x.yaml, document 3: spec.region: Unsupported value: "mars-1"`},
		{"unknown field", head + "spec:\n  regoin: us-east-1\n", `decoding x.yaml, document 3, strict decoding error: unknown field "spec.regoin"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := DecodeProfile("x.yaml, document 3", []byte(tc.doc)); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to start %q", err, tc.want)
			}
		})
	}
}

// profileTestManifests decodes a manifest file strictly by kind; decode
// returns the typed object for a kind, or nil for a kind the file may not
// hold.
func profileTestManifests(t *testing.T, path string, decode func(kind string) any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, doc := range SplitDocuments(data) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatalf("%s, document %d: %v", path, i+1, err)
		}
		obj := decode(tm.Kind)
		if obj == nil {
			t.Errorf("%s, document %d: kind %q does not belong in this file", path, i+1, tm.Kind)
			continue
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			t.Errorf("%s, document %d: %v", path, i+1, err)
		}
	}
}

// Every example's profile loads, its NodePools name SimNodeClasses of the
// same file and instance types of the catalog, its names are unique across
// examples (the API test creates them all in one cluster), and each
// scenario's premise holds in its files.
func TestExamples(t *testing.T) {
	profiles, err := filepath.Glob(filepath.Join(profileTestExamples, "*", "cloud-profile.yaml"))
	if err != nil || len(profiles) < 6 {
		t.Fatalf("found %d example profiles (%v), want the six documented ones", len(profiles), err)
	}
	types, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]map[string]bool{v1.LabelInstanceType: {}, v1.LabelInstanceFamily: {}}
	for _, it := range types {
		known[v1.LabelInstanceType][it.Name], known[v1.LabelInstanceFamily][it.Family] = true, true
	}
	// Names already taken by examples/api, then by each example in turn.
	taken := map[string]string{}
	apiFiles, _ := filepath.Glob(filepath.Join(profileTestExamples, "api", "*.yaml"))
	for _, f := range apiFiles {
		data, _ := os.ReadFile(f)
		for _, doc := range SplitDocuments(data) {
			var m metav1.PartialObjectMetadata
			_ = yaml.Unmarshal(doc, &m)
			taken[m.Kind+"/"+m.Name] = f
		}
	}
	for _, path := range profiles {
		dir := filepath.Dir(path)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			p, err := LoadProfile(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
				t.Error(err)
			}
			var pools []*v1.NodePool
			var classes []*simv1alpha1.SimNodeClass
			profileTestManifests(t, filepath.Join(dir, "nodepool.yaml"), func(kind string) any {
				switch kind {
				case "NodePool":
					pools = append(pools, &v1.NodePool{})
					return pools[len(pools)-1]
				case "SimNodeClass":
					classes = append(classes, &simv1alpha1.SimNodeClass{})
					return classes[len(classes)-1]
				}
				return nil
			})
			var deployments []*appsv1.Deployment
			var models int
			// An example of other workloads (gangs' pods, ProvisioningRequests)
			// keeps them in files of their own.
			if _, err := os.Stat(filepath.Join(dir, "workload.yaml")); err == nil {
				profileTestManifests(t, filepath.Join(dir, "workload.yaml"), func(kind string) any {
					switch kind {
					case "Deployment":
						deployments = append(deployments, &appsv1.Deployment{})
						return deployments[len(deployments)-1]
					case "OpenModel": // llmaz's; its CRD is not Capstan's to check
						models++
						return &map[string]any{}
					case "PodDisruptionBudget":
						return &policyv1.PodDisruptionBudget{}
					}
					return nil
				})
			}
			var objects []metav1.Object
			classNames := map[string]*simv1alpha1.SimNodeClass{}
			for _, c := range classes {
				objects, classNames[c.Name] = append(objects, c), c
			}
			for _, np := range pools {
				objects = append(objects, np)
				ref := np.Spec.Template.Spec.NodeClassRef
				if ref == nil || ref.Group != simv1alpha1.Group || ref.Kind != "SimNodeClass" || classNames[ref.Name] == nil {
					t.Errorf("NodePool %s: nodeClassRef %+v names no SimNodeClass of nodepool.yaml", np.Name, ref)
				}
				for _, r := range np.Spec.Template.Spec.Requirements {
					for _, v := range r.Values {
						if known[r.Key] != nil && !known[r.Key][v] {
							t.Errorf("NodePool %s: %s %q is not in the catalog", np.Name, r.Key, v)
						}
					}
				}
			}
			workloads := map[string]bool{}
			for _, d := range deployments {
				objects, workloads[d.Namespace+"/"+d.Name] = append(objects, d), true
			}
			for _, o := range objects {
				name := profileTestKind(o) + "/" + o.GetName()
				if prev, ok := taken[name]; ok {
					t.Errorf("%s is also defined in %s", name, prev)
				}
				taken[name] = dir
			}
			reservations := map[string]Reservation{}
			for _, r := range p.Spec.Reservations {
				reservations[r.ID] = Reservation{ID: r.ID, InstanceType: r.InstanceType, Zone: r.Zone, Type: r.Type, OwnerID: r.OwnerID, Tags: r.Tags}
			}
			selected := map[string]bool{}
			for _, c := range classes {
				if p.Spec.Style == simv1alpha1.CloudStyleGCP && c.Spec.SpotMaxPrice != nil {
					t.Errorf("SimNodeClass %s sets spotMaxPrice, which a gcp-style cloud ignores", c.Name)
				}
				for _, term := range c.Spec.CapacityReservationSelectorTerms {
					if _, ok := reservations[term.ID]; term.ID != "" && !ok {
						t.Errorf("SimNodeClass %s selects %s, which the profile does not define", c.Name, term.ID)
					}
					for id, r := range reservations {
						selected[id] = selected[id] || Selects(term, r)
					}
				}
			}
			for _, e := range p.Spec.Events {
				if e.Type == simv1alpha1.EventScale && !workloads[e.Workload] {
					t.Errorf("Scale event names %s, which workload.yaml does not define", e.Workload)
				}
			}
			profileTestScenario(t, filepath.Base(dir), p, classes, reservations, selected, models)
		})
	}
}

func profileTestKind(o metav1.Object) string {
	switch o.(type) {
	case *v1.NodePool:
		return "NodePool"
	case *simv1alpha1.SimNodeClass:
		return "SimNodeClass"
	}
	return "Deployment"
}

// profileTestScenario checks the premise each example's README describes.
func profileTestScenario(t *testing.T, name string, p *simv1alpha1.CloudProfile, classes []*simv1alpha1.SimNodeClass, reservations map[string]Reservation, selected map[string]bool, models int) {
	t.Helper()
	switch name {
	case "spot-shortage":
		for _, z := range p.Spec.Zones {
			want := simv1alpha1.CapacityPool{InstanceType: "c4.xlarge", Zone: z, CapacityType: v1.CapacityTypeSpot, Count: 0}
			if !slices.Contains(p.Spec.Capacity, want) {
				t.Errorf("no empty spot c4.xlarge pool in %s", z)
			}
		}
	case "spot-max-price":
		if len(classes) != 1 || classes[0].Spec.SpotMaxPrice == nil || len(p.Spec.SpotPrices) == 0 {
			t.Fatalf("want one SimNodeClass with a spotMaxPrice and a spot price override")
		}
		maxPrice, _ := strconv.ParseFloat(*classes[0].Spec.SpotMaxPrice, 64)
		price, _ := strconv.ParseFloat(p.Spec.SpotPrices[0].Price, 64)
		if maxPrice >= price {
			t.Errorf("spotMaxPrice %v is not below the spot price %v", maxPrice, price)
		}
	case "capacity-reservations":
		kinds := map[string]bool{}
		for id, r := range reservations {
			kinds[fmt.Sprintf("%s selected=%t", r.Type, selected[id])] = true
		}
		for _, want := range []string{"open selected=true", "targeted selected=true", "open selected=false"} {
			if !kinds[want] {
				t.Errorf("no reservation %s; have %v", want, kinds)
			}
		}
	case "gpu-flavors":
		if models != 1 {
			t.Errorf("workload.yaml holds %d OpenModels, want 1", models)
		}
	case "gcp-style-spot", "azure-style-spot":
		style := simv1alpha1.CloudStyle(strings.TrimSuffix(name, "-style-spot"))
		if p.Spec.Style != style || !slices.ContainsFunc(p.Spec.Events, func(e simv1alpha1.CloudEvent) bool { return e.Type == simv1alpha1.EventSpotInterruption }) {
			t.Errorf("want style %s and a SpotInterruption event", style)
		}
		if style == simv1alpha1.CloudStyleAzure {
			var policies []simv1alpha1.EvictionPolicy
			for _, c := range classes {
				policies = append(policies, c.Spec.EvictionPolicy)
			}
			if !slices.Contains(policies, simv1alpha1.EvictionPolicyDeallocate) || !slices.Contains(policies, simv1alpha1.EvictionPolicyDelete) {
				t.Errorf("eviction policies %v, want Deallocate and Delete", policies)
			}
		}
	case "consolidation":
		replicas := profileTestScales(p)
		if len(replicas) != 2 || replicas[0] >= replicas[1] {
			t.Errorf("Scale events to %v replicas, want a scale-down then a scale-up", replicas)
		}
	case "repair":
		stops := map[simv1alpha1.CloudEventType]bool{}
		for _, e := range p.Spec.Events {
			stops[e.Type] = e.Count != nil
		}
		if !stops[simv1alpha1.EventKubeletStop] || !stops[simv1alpha1.EventInstanceStop] || len(p.Spec.RepairPolicies) == 0 {
			t.Errorf("want counted KubeletStop and InstanceStop events and repairPolicies; events %v, %d policies", stops, len(p.Spec.RepairPolicies))
		}
	case "do-not-disrupt-duration":
		if len(p.Spec.Events) != 1 || p.Spec.Events[0].Type != simv1alpha1.EventScale {
			t.Errorf("want one Scale event, have %v", p.Spec.Events)
		}
	case "overlay":
		// The overlay only changes the choice if m7g.large lists below
		// m6i.large in the profile's region, and above the overlay's $0.05.
		prices := profileTestListPrices(t, p.Spec.Region)
		if !(0.05 < prices["m7g.large"] && prices["m7g.large"] < prices["m6i.large"]) {
			t.Errorf("list prices in %s: m7g.large %v, m6i.large %v; want 0.05 < m7g.large < m6i.large", p.Spec.Region, prices["m7g.large"], prices["m6i.large"])
		}
	case "balanced":
		// One move must reach the default threshold (0.5) and one fall
		// short, on the list prices of the profile's region: shrink's
		// m6i.4xlarge replaced by an m6i.large, keep's m6i.xlarge by a
		// c6i.xlarge, each the whole of its pool's disruption.
		prices := profileTestListPrices(t, p.Spec.Region)
		saved := func(from, to string) float64 { return (prices[from] - prices[to]) / prices[from] }
		if s := saved("m6i.4xlarge", "m6i.large"); s < 0.5 {
			t.Errorf("shrink's replace saves %.3f of its pool, want at least 0.5", s)
		}
		if s := saved("m6i.xlarge", "c6i.xlarge"); s <= 0 || s >= 0.5 {
			t.Errorf("keep's replace saves %.3f of its pool, want some but below 0.5", s)
		}
	case "static-nodepool":
		// The web tier bursts past what the static pool holds, then goes
		// back, so a dynamic node comes and goes beside it.
		replicas := profileTestScales(p)
		if len(replicas) != 2 || replicas[0] <= replicas[1] {
			t.Errorf("Scale events to %v replicas, want a scale-up then a scale-down", replicas)
		}
	case "capacity-buffer":
		// The buffer keeps a node warm for shop's third replica.
		if replicas := profileTestScales(p); len(replicas) != 1 || replicas[0] != 3 {
			t.Errorf("Scale events to %v replicas, want one to 3", replicas)
		}
	case "gang":
		// Fewer spot nodes than the gang of 6 needs, so its launch fails
		// part way and is released.
		want := simv1alpha1.CapacityPool{InstanceType: "c5.2xlarge", Zone: "us-west-2a", CapacityType: v1.CapacityTypeSpot, Count: 4}
		if !slices.Contains(p.Spec.Capacity, want) {
			t.Errorf("capacity %v, want %v", p.Spec.Capacity, want)
		}
	case "gpu-flavor-sizes":
		if models != 1 {
			t.Errorf("workload.yaml holds %d OpenModels, want 1", models)
		}
	case "provisioning-request":
		// train is Provisioned when its nodes register, 20 s after launch.
		if p.Spec.LaunchLatency.Duration != 20*time.Second {
			t.Errorf("launchLatency %s, want 20s", p.Spec.LaunchLatency.Duration)
		}
	default:
		t.Errorf("example %s has no scenario check here", name)
	}
}

// profileTestListPrices are the catalog's list prices in region, by
// instance type.
func profileTestListPrices(t *testing.T, region string) map[string]float64 {
	t.Helper()
	types, err := catalog.Load()
	if err != nil {
		t.Fatal(err)
	}
	prices := map[string]float64{}
	for _, it := range types {
		prices[it.Name] = it.Prices[region]
	}
	return prices
}

// profileTestScales are the replicas the profile's Scale events ask for,
// in order.
func profileTestScales(p *simv1alpha1.CloudProfile) []int32 {
	var replicas []int32
	for _, e := range p.Spec.Events {
		if e.Type == simv1alpha1.EventScale && e.Replicas != nil {
			replicas = append(replicas, *e.Replicas)
		}
	}
	return replicas
}
