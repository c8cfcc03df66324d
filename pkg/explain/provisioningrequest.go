package explain

import (
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/provreq"
	"github.com/capstan-dev/capstan/pkg/state"
)

// ProvisioningRequest says where a ProvisioningRequest stands and why
// (docs/batch.md, "ProvisioningRequest").
type ProvisioningRequest struct {
	// Status's phase, reason and message are what the
	// provisioningrequest controller's step decides now (provreq.Decide),
	// which its conditions show once applied.
	provreq.Status
	// Pods counts the pods it asks for; Consumers those consuming it and
	// Bound those of them on a node; VirtualPods the capacity still held
	// for it in every solve.
	Pods        int `json:"pods"`
	Consumers   int `json:"consumers"`
	Bound       int `json:"bound"`
	VirtualPods int `json:"virtualPods"`
	// NodeClaims are its atomic group's, with their state.
	NodeClaims []RequestClaim `json:"nodeClaims,omitempty"`
	// BookingLeft is how long its booked capacity is still held.
	BookingLeft string `json:"bookingLeft,omitempty"`
}

// RequestClaim is one NodeClaim launched for a request.
type RequestClaim struct {
	Name       string `json:"name"`
	Launched   bool   `json:"launched"`
	Registered bool   `json:"registered"`
}

// ForProvisioningRequest explains r at now, solving against snapshot as
// the controller would.
func ForProvisioningRequest(r provreq.Request, snapshot state.Snapshot, now time.Time) ProvisioningRequest {
	pr := r.Object
	d := provreq.Decide(r, snapshot, provreq.Options{}, now)
	out := ProvisioningRequest{
		Status:    provreq.Status{Name: pr.Namespace + "/" + pr.Name, Class: pr.Spec.ProvisioningClassName, Phase: d.Phase, Reason: d.Reason, Message: d.Message},
		Consumers: len(r.Consumers), VirtualPods: len(d.Virtual),
	}
	for _, s := range pr.Spec.PodSets {
		out.Pods += int(s.Count)
	}
	for _, p := range r.Consumers {
		if p.Spec.NodeName != "" {
			out.Bound++
		}
	}
	for _, nc := range r.Claims {
		out.NodeClaims = append(out.NodeClaims, RequestClaim{Name: nc.Name,
			Launched:   meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeLaunched),
			Registered: meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeRegistered)})
	}
	if d.BookingLeft > 0 {
		out.BookingLeft = d.BookingLeft.String()
	}
	return out
}

// WriteProvisioningRequest writes r as text.
func WriteProvisioningRequest(w io.Writer, r ProvisioningRequest) error {
	var b strings.Builder
	line(&b, "ProvisioningRequest %s (%s)", r.Name, r.Class)
	if r.Phase == provreq.PhaseIgnored {
		line(&b, "  ignored: Capstan does not serve this class")
	} else {
		line(&b, "  %s: %s: %s", r.Phase, r.Reason, r.Message)
		line(&b, "  pods: %d asked, %d consuming it (%d bound), %d held as virtual pods", r.Pods, r.Consumers, r.Bound, r.VirtualPods)
	}
	for _, nc := range r.NodeClaims {
		line(&b, "  nodeclaim %s: launched %t, registered %t", nc.Name, nc.Launched, nc.Registered)
	}
	if r.BookingLeft != "" {
		line(&b, "  booking: %s left", r.BookingLeft)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
