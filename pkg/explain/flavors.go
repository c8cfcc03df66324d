package explain

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

// FlavorVerdict is what the provisioner would do for a model-serving pod
// with one of its llmaz flavors alone.
type FlavorVerdict struct {
	Flavor string `json:"flavor"`
	// Needs are the flavor's resources, which size its terms
	// ("2 nvidia.com/gpu"); empty when it names none and the pod's own
	// requests hold.
	Needs string `json:"needs,omitempty"`
	// Chosen: the first flavor that fits, which the next provisioning
	// uses.
	Chosen bool `json:"chosen,omitempty"`
	// Next is what the provisioning would do with this flavor: place or
	// launch (Fits), or why the flavor is skipped (Reason, Message).
	Fits    bool   `json:"fits"`
	Next    string `json:"next,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// flavorVerdicts decides for the pod once per flavor, in the order the
// provisioner tries them, each time with that flavor alone (the pod's
// flavors annotation narrowed to it): the provisioner's own decision
// (scaleup.Decide), so a skipped flavor's reason is the one it met, sized
// by the flavor's resources. nil for a pod without flavors.
func flavorVerdicts(in PodInput) []FlavorVerdict {
	name, ok := flavors.ModelName(in.Pod)
	if !ok {
		return nil
	}
	model, installed, err := in.Plan.Models.Lookup(name)
	if !installed || err != nil {
		return nil
	}
	_, names, err := flavors.ResolveWithNames(in.Pod, model)
	if err != nil {
		return nil
	}
	var out []FlavorVerdict
	chosen := false
	for _, fname := range slices.Compact(names) {
		if fname == "" {
			continue
		}
		f, _ := model.Flavor(fname)
		v := FlavorVerdict{Flavor: fname, Needs: flavors.Needs(f)}
		d := scaleup.Decide(withPod(in.Snapshot, narrowed(in.Pod, fname), nil), in.Plan, claimName)
		switch {
		case len(d.FlavorFailures) > 0:
			v.Reason, v.Message = d.FlavorFailures[0].Reason, d.FlavorFailures[0].Err.Error()
		case len(d.Result.Unplaced) > 0:
			v.Reason, v.Message = string(d.Result.Unplaced[0].Reason), d.Result.Unplaced[0].Message
		default:
			v.Fits, v.Next = true, next(d)
			v.Chosen, chosen = !chosen, true
		}
		out = append(out, v)
	}
	return out
}

// narrowed is the pod with its flavors annotation naming flavor alone.
func narrowed(pod *corev1.Pod, flavor string) *corev1.Pod {
	cp := pod.DeepCopy()
	if cp.Annotations == nil {
		cp.Annotations = map[string]string{}
	}
	cp.Annotations[flavors.FlavorsAnnotationKey] = flavor
	return cp
}

// describeFlavor is a flavor verdict for people: "flavor a100 (needs 2
// nvidia.com/gpu): skipped: NoInstanceTypeFits: …".
func describeFlavor(v FlavorVerdict) string {
	head := "flavor " + v.Flavor
	if v.Needs != "" {
		head += " (needs " + v.Needs + ")"
	}
	switch {
	case v.Chosen:
		return fmt.Sprintf("%s: chosen: %s", head, v.Next)
	case v.Fits:
		return fmt.Sprintf("%s: would fit, after an earlier flavor: %s", head, v.Next)
	}
	return fmt.Sprintf("%s: skipped: %s: %s", head, v.Reason, v.Message)
}
