package provreq

import (
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1 "k8s.io/api/core/v1"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/state"
)

// The reasons and messages of the conditions Capstan sets. Those Cluster
// Autoscaler defines (cluster-autoscaler/provisioningrequest/conditions)
// keep its words, with Capstan named where it names itself; the rest are
// Capstan's (docs/batch.md).
const (
	ReasonAccepted               = "Accepted"
	ReasonCapacityIsFound        = "CapacityIsFound"
	ReasonCapacityIsNotFound     = "CapacityIsNotFound"
	ReasonCapacityIsProvisioned  = "CapacityIsProvisioned"
	ReasonFailedToCreatePods     = "FailedToCreatePods"
	ReasonReservationExpired     = "CapacityReservationTimeExpired"
	ReasonBookingConsumed        = "CapacityBookingConsumed"
	ReasonExpired                = "Expired"
	ReasonNodeClaimsLaunching    = "NodeClaimsLaunching"
	ReasonNodeClaimLaunchFailed  = "NodeClaimLaunchFailed"
	MessageAccepted              = "ProvisioningRequest is accepted by Capstan"
	MessageCapacityIsFound       = "Capacity is found in the cluster"
	MessageReservationExpired    = "Capacity reservation time is expired"
	MessageBookingConsumed       = "Capacity booking consumed: all pods scheduled"
	MessageExpired               = "ProvisioningRequest is expired"
	messageCapacityIsNotFoundFmt = "Capacity is not found, Capstan will try to find it later: %s"
)

// Defaults, from Cluster Autoscaler's processors/provreq/processor.go
// (defaultReservationTime, defaultExpirationTime) and its initial retry
// time (--provisioning-request-initial-backoff-time).
const (
	DefaultBookingDuration = 10 * time.Minute
	DefaultExpiry          = 7 * 24 * time.Hour
	DefaultRetryInterval   = time.Minute
	// DefaultTemplateGrace is how long a request may name a PodTemplate
	// not yet seen before it fails: Kueue creates the templates and the
	// request together, and a watch may deliver them in either order.
	DefaultTemplateGrace = 30 * time.Second
)

// ParameterValidUntilSeconds is the class parameter the API documents for
// the atomic class: how long after creation provisioning is tried before
// the request fails.
const ParameterValidUntilSeconds = "ValidUntilSeconds"

// Options tune the steps; the zero value takes the defaults.
type Options struct {
	BookingDuration time.Duration
	Expiry          time.Duration
	RetryInterval   time.Duration
	TemplateGrace   time.Duration
}

func (o Options) withDefaults() Options {
	if o.BookingDuration <= 0 {
		o.BookingDuration = DefaultBookingDuration
	}
	if o.Expiry <= 0 {
		o.Expiry = DefaultExpiry
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = DefaultRetryInterval
	}
	if o.TemplateGrace <= 0 {
		o.TemplateGrace = DefaultTemplateGrace
	}
	return o
}

// Served reports whether Capstan answers requests of class; others are
// ignored, as the API asks of an autoscaler that does not know a class.
func Served(class string) bool {
	return class == autoscalingv1.ProvisioningClassCheckCapacity || class == autoscalingv1.ProvisioningClassBestEffortAtomicScaleUp
}

// Kind is the kind virtual pods name (state.VirtualPodFor): a
// ProvisioningRequest's hold their capacity (state.Yields).
const Kind = "ProvisioningRequest"

// Key names a request as its atomic group and its virtual pods do:
// ProvisioningRequest/<namespace>/<name>.
func Key(pr *autoscalingv1.ProvisioningRequest) string {
	return state.VirtualPodFor(Kind, pr.Namespace, pr.Name)
}

// Request is one ProvisioningRequest with what its step reads.
type Request struct {
	Object *autoscalingv1.ProvisioningRequest
	// Templates are the PodTemplates of its namespace its pod sets name,
	// by name.
	Templates map[string]*corev1.PodTemplate
	// Consumers are the pods, not terminal, that consume it (the consume
	// annotation names it).
	Consumers []*corev1.Pod
	// Claims are the NodeClaims launched for its atomic group.
	Claims []*v1.NodeClaim
}

// consumedBy is the request a pod consumes, by the API's annotation or
// the deprecated one Cluster Autoscaler still reads
// (provisioningrequest/pods/pods.go).
func consumedBy(p *corev1.Pod) string {
	if name := p.Annotations[autoscalingv1.ProvisioningRequestPodAnnotationKey]; name != "" {
		return name
	}
	return p.Annotations[deprecatedConsumeAnnotation]
}

const deprecatedConsumeAnnotation = "cluster-autoscaler.kubernetes.io/consume-provisioning-request"

// deadline is when an unprovisioned request fails: ValidUntilSeconds
// after creation when the parameter is a valid count, else the expiry.
func deadline(pr *autoscalingv1.ProvisioningRequest, expiry time.Duration) time.Time {
	if v, ok := pr.Spec.Parameters[ParameterValidUntilSeconds]; ok {
		if s, err := strconv.Atoi(string(v)); err == nil && s > 0 {
			return pr.CreationTimestamp.Add(time.Duration(s) * time.Second)
		}
	}
	return pr.CreationTimestamp.Add(expiry)
}

// PodsOf expands a request's pod sets into its virtual pods, Count of
// each template (state.NewVirtualPod, numbered across the sets),
// annotated as consuming it (as Cluster Autoscaler's
// provisioningrequest/pods does) and, for the atomic class, as one atomic
// group (gang.AtomicGroupAnnotationKey, Key), so the provisioner's solve
// places them all or none.
func PodsOf(pr *autoscalingv1.ProvisioningRequest, templates map[string]*corev1.PodTemplate) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	for i, set := range pr.Spec.PodSets {
		t := templates[set.PodTemplateRef.Name]
		if t == nil {
			return nil, fmt.Errorf("pod set %d: PodTemplate %s/%s not found", i, pr.Namespace, set.PodTemplateRef.Name)
		}
		for range int(set.Count) {
			p := state.NewVirtualPod(Kind, pr.Namespace, pr.Name, len(pods), t.Template)
			p.CreationTimestamp = pr.CreationTimestamp
			p.Annotations[autoscalingv1.ProvisioningRequestPodAnnotationKey] = pr.Name
			p.Annotations[autoscalingv1.ProvisioningClassPodAnnotationKey] = pr.Spec.ProvisioningClassName
			if pr.Spec.ProvisioningClassName == autoscalingv1.ProvisioningClassBestEffortAtomicScaleUp {
				p.Annotations[gang.AtomicGroupAnnotationKey] = Key(pr)
			}
			pods = append(pods, p)
		}
	}
	return pods, nil
}

// PhaseOf reads where a request stands from its conditions alone, with
// the condition that says so: for reports and explain, which show the
// request as stored.
func PhaseOf(pr *autoscalingv1.ProvisioningRequest) (Phase, *metav1.Condition) {
	conds := pr.Status.Conditions
	class := pr.Spec.ProvisioningClassName
	if !Served(class) {
		return PhaseIgnored, nil
	}
	for _, t := range []struct {
		typ   string
		phase Phase
	}{{autoscalingv1.Failed, PhaseFailed}, {autoscalingv1.BookingExpired, PhaseBookingExpired}} {
		if c := meta.FindStatusCondition(conds, t.typ); c != nil && c.Status == metav1.ConditionTrue {
			return t.phase, c
		}
	}
	c := meta.FindStatusCondition(conds, autoscalingv1.Provisioned)
	switch {
	case c == nil || c.Status != metav1.ConditionTrue:
		return PhasePending, c
	case class == autoscalingv1.ProvisioningClassBestEffortAtomicScaleUp:
		return PhaseBooked, c
	}
	return PhaseProvisioned, c
}

// Status is a request as reports and explain show it: its name
// (namespace/name), class and phase, with the condition's reason and
// message.
type Status struct {
	Name    string `json:"name"`
	Class   string `json:"class"`
	Phase   Phase  `json:"phase"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}
