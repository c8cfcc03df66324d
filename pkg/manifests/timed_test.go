package manifests

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/test"
)

// timed returns doc with the timing annotations given as "key: value"
// lines, placed in its flow-style metadata.
func timed(doc string, annotations ...string) string {
	if len(annotations) == 0 {
		return doc
	}
	var pairs []string
	for _, a := range annotations {
		k, v, _ := strings.Cut(a, ": ")
		pairs = append(pairs, "simulate.capstan.dev/"+k+": "+`"`+v+`"`)
	}
	return strings.Replace(doc, "metadata: {", "metadata: {annotations: {"+strings.Join(pairs, ", ")+"}, ", 1)
}

const (
	timedWeb   = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 2, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: c}]}}}\n"
	timedPool  = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec: {template: {spec: {requirements: [], nodeClassRef: {group: sim.capstan.dev, kind: SimNodeClass, name: default}}}}\n"
	timedModel = "apiVersion: llmaz.io/v1alpha1\nkind: OpenModel\nmetadata: {name: m}\nspec: {inferenceConfig: {flavors: [{name: a10g, limits: {nvidia.com/gpu: 1}}]}}\n"
	timedPDB   = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\nspec: {minAvailable: 1, selector: {matchLabels: {a: b}}}\n"
	timedPod   = "apiVersion: v1\nkind: Pod\nmetadata: {name: once}\nspec: {containers: [{name: c}]}\n"
)

func docs(d ...string) string { return strings.Join(d, "---\n") }

type change struct {
	At     time.Duration
	Delete bool
	Ref    string
	Source string
	Type   string
}

func changes(s *Set) []change {
	var out []change
	for _, t := range s.Timed {
		out = append(out, change{At: t.At, Delete: t.Delete, Ref: t.Ref(), Source: t.Source, Type: reflect.TypeOf(t.Object).String()})
	}
	return out
}

// Objects with apply-at are only on the timeline; delete-at alone leaves
// the object with those applied at the start and schedules its deletion;
// versions of one object follow each other; the timeline is in time
// order, deletions first at one instant, whatever the order read.
func TestTimeline(t *testing.T) {
	set := &Set{}
	data := docs(
		timed(timedWeb, "apply-at: 1h", "delete-at: 1h30m"),
		timedPool,
		timed(strings.Replace(timedPool, "requirements: []", "requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]", 1), "apply-at: 30m"),
		timed(timedPDB, "delete-at: 45m"),
		timed(timedModel, "apply-at: 0s"),
		timed(timedPod, "apply-at: 10m", "delete-at: 30m"),
		timed(strings.Replace(timedWeb, "replicas: 2", "replicas: 5", 1), "apply-at: 1h30m"),
	)
	if err := newLoader(t).Read("x.yaml", []byte(data), set); err != nil {
		t.Fatal(err)
	}
	want := []change{
		{0, false, "openmodel/m", "x.yaml, document 5", "*flavors.OpenModel"},
		{10 * time.Minute, false, "pod/default/once", "x.yaml, document 6", "*v1.Pod"},
		{30 * time.Minute, true, "pod/default/once", "x.yaml, document 6", "*v1.Pod"},
		{30 * time.Minute, false, "nodepool/default", "x.yaml, document 3", "*v1.NodePool"},
		{45 * time.Minute, true, "poddisruptionbudget/default/web", "x.yaml, document 4", "*v1.PodDisruptionBudget"},
		{time.Hour, false, "deployment/default/web", "x.yaml, document 1", "*v1.Deployment"},
		{90 * time.Minute, true, "deployment/default/web", "x.yaml, document 1", "*v1.Deployment"},
		{90 * time.Minute, false, "deployment/default/web", "x.yaml, document 7", "*v1.Deployment"},
	}
	if diff := cmp.Diff(want, changes(set)); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	if len(set.NodePools) != 1 || len(set.PodDisruptionBudgets) != 1 || len(set.Deployments) != 0 || len(set.Pods) != 0 || len(set.OpenModels) != 0 {
		t.Errorf("applied at the start: %d NodePools, %d PDBs, %d Deployments, %d Pods, %d OpenModels; want the untimed NodePool and the PDB only",
			len(set.NodePools), len(set.PodDisruptionBudgets), len(set.Deployments), len(set.Pods), len(set.OpenModels))
	}
	// Timed objects are read as the others: validated and defaulted.
	pool := set.Timed[3].Object.(*v1.NodePool)
	if len(pool.Spec.Template.Spec.Requirements) != 1 || pool.Spec.Disruption.ConsolidateAfter.Duration == nil {
		t.Errorf("the edited NodePool %+v is not the second version, defaulted", pool.Spec)
	}
	if d := set.Timed[7].Object.(*appsv1.Deployment); *d.Spec.Replicas != 5 || d.Namespace != "default" {
		t.Errorf("the second Deployment: %d replicas in %q", *d.Spec.Replicas, d.Namespace)
	}
	if set.Timed[0].Object.(*flavors.OpenModel).Name != "m" {
		t.Error("the OpenModel is not on the timeline")
	}
	if p := set.Timed[1].Object.(*corev1.Pod); p.Name != "once" {
		t.Errorf("pod %s", p.Name)
	}
}

// Across streams, read in any order, the timeline stays in time order.
func TestTimelineAcrossStreams(t *testing.T) {
	l := newLoader(t)
	set := &Set{}
	for _, tc := range []struct{ src, data string }{
		{"late.yaml", timed(timedWeb, "apply-at: 2h")},
		{"early.yaml", timed(timedPod, "apply-at: 1m")},
		{"base.yaml", timedWeb},
	} {
		if err := l.Read(tc.src, []byte(tc.data), set); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, c := range changes(set) {
		got = append(got, c.At.String()+" "+c.Ref+" "+c.Source)
	}
	want := []string{"1m0s pod/default/once early.yaml, document 1", "2h0m0s deployment/default/web late.yaml, document 1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
}

func TestTimingErrors(t *testing.T) {
	const profile = "apiVersion: sim.capstan.dev/v1alpha1\nkind: CloudProfile\nmetadata: {name: cloud}\n"
	ns := "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n"
	l := newLoader(t)
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"not a duration", timed(timedWeb, "apply-at: soon"),
			[]string{`x.yaml, document 1 (Deployment web): metadata.annotations[simulate.capstan.dev/apply-at]: Invalid value: "soon": must be a duration from the start of the run, such as 30m or 1h30m`}},
		{"a bare number is not a duration", timed(timedPool, "delete-at: 30"),
			[]string{`x.yaml, document 1 (NodePool default): metadata.annotations[simulate.capstan.dev/delete-at]: Invalid value: "30": must be a duration from the start of the run, such as 30m or 1h30m`}},
		{"negative", timed(timedPod, "apply-at: -5m"),
			[]string{`x.yaml, document 1 (Pod once): metadata.annotations[simulate.capstan.dev/apply-at]: Invalid value: "-5m": must not be negative`}},
		{"deleted before applied", timed(timedWeb, "apply-at: 1h", "delete-at: 30m"),
			[]string{`x.yaml, document 1 (Deployment web): metadata.annotations[simulate.capstan.dev/delete-at]: Invalid value: "30m": must be after simulate.capstan.dev/apply-at (1h0m0s)`}},
		{"deleted when applied", timed(timedWeb, "apply-at: 1h", "delete-at: 60m"),
			[]string{`x.yaml, document 1 (Deployment web): metadata.annotations[simulate.capstan.dev/delete-at]: Invalid value: "60m": must be after simulate.capstan.dev/apply-at (1h0m0s)`}},
		{"deleted at the start", timed(timedPDB, "delete-at: 0s"),
			[]string{`x.yaml, document 1 (PodDisruptionBudget web): metadata.annotations[simulate.capstan.dev/delete-at]: Invalid value: "0s": must be after the start of the run, when an object without simulate.capstan.dev/apply-at is applied`}},
		{"on a CloudProfile", timed(profile, "apply-at: 1h"),
			[]string{`x.yaml, document 1 (CloudProfile cloud): metadata.annotations[simulate.capstan.dev/apply-at]: Forbidden: a CloudProfile is the cloud of the whole run; time its changes with spec.events`}},
		{"deleting a Namespace", timed(ns, "delete-at: 1h"),
			[]string{`x.yaml, document 1 (Namespace team): metadata.annotations[simulate.capstan.dev/delete-at]: Forbidden: deleting a Namespace, with everything in it, is not simulated`}},
		{"reported with the kind's own errors", timed(strings.Replace(timedWeb, "replicas: 2", "replicas: -1", 1), "apply-at: soon"), []string{
			`x.yaml, document 1 (Deployment web): metadata.annotations[simulate.capstan.dev/apply-at]: Invalid value: "soon": must be a duration from the start of the run, such as 30m or 1h30m`,
			`x.yaml, document 1 (Deployment web): spec.replicas: Invalid value: -1: must be greater than or equal to 0`,
		}},
		{"a Namespace applied later is fine", timed(ns, "apply-at: 1h"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			if err := l.Read("x.yaml", []byte(tc.data), &Set{}); err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// Two documents of one object are versions of it only when they follow
// each other in time.
func TestTimedVersions(t *testing.T) {
	l := newLoader(t)
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"an edit at 30m", docs(timedPool, timed(timedPool, "apply-at: 30m")), nil},
		{"edits read before the original", docs(timed(timedPool, "apply-at: 1h"), timed(timedPool, "apply-at: 30m"), timedPool), nil},
		{"deleted, then applied again when deleted", docs(timed(timedWeb, "delete-at: 30m"), timed(timedWeb, "apply-at: 30m")), nil},
		{"two at the same instant", docs(timed(timedWeb, "apply-at: 30m"), timed(timedWeb, "apply-at: 0.5h")),
			[]string{`x.yaml, document 2 (Deployment web): metadata.name: Duplicate value: "web": Deployment default/web is already applied at 30m0s in x.yaml, document 1`}},
		{"apply-at 0s is the start", docs(timedWeb, timed(timedWeb, "apply-at: 0s")),
			[]string{`x.yaml, document 2 (Deployment web): metadata.name: Duplicate value: "web": Deployment default/web is already applied at 0s in x.yaml, document 1`}},
		{"both untimed, as ever", docs(timedWeb, timedWeb),
			[]string{`x.yaml, document 2 (Deployment web): metadata.name: Duplicate value: "web": Deployment default/web is already in x.yaml, document 1`}},
		{"applied again while the earlier one is still there", docs(timed(timedWeb, "delete-at: 1h"), timed(timedWeb, "apply-at: 30m")),
			[]string{`x.yaml, document 2 (Deployment web): metadata.annotations[simulate.capstan.dev/apply-at]: Invalid value: "30m": Deployment default/web from x.yaml, document 1 is there until its simulate.capstan.dev/delete-at, 1h0m0s`}},
		{"deleting after the next version is applied", docs(timed(timedWeb, "apply-at: 30m"), timed(timedWeb, "delete-at: 1h")),
			[]string{`x.yaml, document 2 (Deployment web): metadata.annotations[simulate.capstan.dev/delete-at]: Invalid value: "1h": Deployment default/web is applied again at 30m0s from x.yaml, document 1, before this deletes it`}},
		{"of several it overlaps, the one read first is named", docs(timed(timedWeb, "apply-at: 50m"), timed(timedWeb, "apply-at: 40m"), timed(timedWeb, "apply-at: 10m", "delete-at: 1h")),
			[]string{`x.yaml, document 3 (Deployment web): metadata.annotations[simulate.capstan.dev/delete-at]: Invalid value: "1h": Deployment default/web is applied again at 50m0s from x.yaml, document 1, before this deletes it`}},
		{"cluster-scoped kinds by name", docs(timed(timedModel, "apply-at: 1h"), timedModel, timed(timedModel, "apply-at: 60m")),
			[]string{`x.yaml, document 3 (OpenModel m): metadata.name: Duplicate value: "m": OpenModel m is already applied at 1h0m0s in x.yaml, document 1`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			if err := l.Read("x.yaml", []byte(tc.data), &Set{}); err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// objects and merge cover every list of a Set, so a kind added to Set is
// not silently dropped when read.
func TestEveryListIsMergedAndListed(t *testing.T) {
	typ := reflect.TypeFor[Set]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() || f.Type.Kind() != reflect.Slice || f.Name == "Skipped" || f.Name == "Timed" || f.Name == "Warnings" {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			one := &Set{}
			list := reflect.ValueOf(one).Elem().Field(i)
			elem := reflect.New(f.Type.Elem()).Elem()
			if elem.Kind() == reflect.Pointer {
				elem.Set(reflect.New(f.Type.Elem().Elem()))
			}
			list.Set(reflect.Append(list, elem))
			if n := len(one.objects()); n != 1 {
				t.Errorf("objects lists %d objects of a Set with one %s", n, f.Name)
			}
			into := &Set{}
			into.merge(one)
			if n := reflect.ValueOf(into).Elem().Field(i).Len(); n != 1 {
				t.Errorf("merge kept %d of one %s", n, f.Name)
			}
		})
	}
}

// BenchmarkGrowthTimedLoad reads n timed Pods at four sizes: n Pods
// each applied at its own instant, and n versions of one Pod, each
// deleted before the next is applied. Both must take n log n, which ns/n
// shows as a figure that barely grows, beside the peak heap
// (docs/simulate.md, "Scale").
func BenchmarkGrowthTimedLoad(b *testing.B) {
	axes := []struct {
		name string
		doc  func(i int) string
	}{
		{"Pods", func(i int) string {
			return fmt.Sprintf("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d, annotations: {%s: %ds}}\nspec: {containers: [{name: app, image: app}]}\n", i, ApplyAtAnnotation, i)
		}},
		{"VersionsOfOnePod", func(i int) string {
			return fmt.Sprintf("---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {%s: %ds, %s: %ds}}\nspec: {containers: [{name: app, image: app}]}\n", ApplyAtAnnotation, 2*i, DeleteAtAnnotation, 2*i+1)
		}},
	}
	for _, axis := range axes {
		for _, n := range []int{2500, 5000, 10000, 20000} {
			b.Run(fmt.Sprintf("%s/n=%d", axis.name, n), func(b *testing.B) {
				var stream strings.Builder
				for i := range n {
					stream.WriteString(axis.doc(i))
				}
				data := []byte(stream.String())
				runtime.GC()
				peak := test.SampleHeap(time.Millisecond)
				for b.Loop() {
					set := &Set{}
					if err := Read("growth.yaml", data, set); err != nil {
						b.Fatal(err)
					}
					if len(set.Timed) < n {
						b.Fatalf("%d timed changes, want at least %d", len(set.Timed), n)
					}
				}
				b.ReportMetric(float64(peak.Stop())/1e6, "peak-MB")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/n")
			})
		}
	}
}
