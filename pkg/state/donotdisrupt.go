package state

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

// EventInvalidDoNotDisrupt is the reason of the Warning event on a pod
// whose karpenter.sh/do-not-disrupt value is invalid, as the reference
// names it (pkg/utils/pod/events.go).
const EventInvalidDoNotDisrupt = "InvalidDoNotDisruptAnnotation"

// DoNotDisrupt is what a pod's karpenter.sh/do-not-disrupt annotation
// asks of voluntary disruption at an instant (docs/disruption.md,
// "do-not-disrupt with a duration").
type DoNotDisrupt struct {
	// Active: the pod may not be disrupted now.
	Active bool
	// Until is when a duration's protection ends; zero while it holds
	// until something else changes ("true", an invalid value, a pod not
	// started yet).
	Until time.Time
	// Invalid says why the value is neither "true", "false" nor a
	// positive duration; such a value protects as "true" does.
	Invalid string
}

// DoNotDisruptOf reads p's karpenter.sh/do-not-disrupt at now. A
// duration ("30m", Go's syntax) protects the pod from its
// status.startTime for that long, and while it has no start time yet, as
// the reference's pkg/utils/pod/scheduling.go (IsDoNotDisruptActive).
// Unlike the reference, which ignores an invalid value, Capstan holds the
// pod as for "true": a typo must not expose a workload its owner meant
// to protect. "false" asks for nothing.
func DoNotDisruptOf(p *corev1.Pod, now time.Time) DoNotDisrupt {
	dnd, d := parseDoNotDisrupt(p.Annotations)
	switch {
	case d == 0:
		return dnd
	case p.Status.StartTime == nil:
		return DoNotDisrupt{Active: true}
	}
	until := p.Status.StartTime.Add(d)
	return DoNotDisrupt{Active: now.Before(until), Until: until}
}

// NodeDoNotDisruptOf reads karpenter.sh/do-not-disrupt in the annotations
// of a Node, a NodeClaim or a NodePool's template with the pods' rules,
// but a duration, which counts from a pod's start, means nothing there:
// like any invalid value it protects as "true" does, and Invalid says so
// (docs/disruption.md, "do-not-disrupt on nodes").
func NodeDoNotDisruptOf(annotations map[string]string) DoNotDisrupt {
	dnd, d := parseDoNotDisrupt(annotations)
	if d != 0 {
		return DoNotDisrupt{Active: true, Invalid: fmt.Sprintf("duration %q applies to pods only", annotations[v1.DoNotDisruptAnnotationKey])}
	}
	return dnd
}

// parseDoNotDisrupt is the value's meaning when it needs no start time,
// else the positive duration it holds for.
func parseDoNotDisrupt(annotations map[string]string) (DoNotDisrupt, time.Duration) {
	value, ok := annotations[v1.DoNotDisruptAnnotationKey]
	switch {
	case !ok || value == "false":
		return DoNotDisrupt{}, 0
	case value == "true":
		return DoNotDisrupt{Active: true}, 0
	}
	d, err := time.ParseDuration(value)
	switch {
	case err != nil:
		return DoNotDisrupt{Active: true, Invalid: fmt.Sprintf("%q is neither \"true\" nor a duration", value)}, 0
	case d <= 0:
		return DoNotDisrupt{Active: true, Invalid: fmt.Sprintf("duration %q must be positive", value)}, 0
	}
	return DoNotDisrupt{}, d
}
