package provreq

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/state"
)

// Objects are the lists the steps read, as a shell gathers them.
type Objects struct {
	Requests   []autoscalingv1.ProvisioningRequest
	Templates  []corev1.PodTemplate
	Pods       []corev1.Pod
	NodeClaims []v1.NodeClaim
}

// Requests pairs each request with its templates, consumers and claims,
// in the order of objs.Requests.
func Requests(objs Objects) []Request {
	templates := map[string]map[string]*corev1.PodTemplate{}
	for i := range objs.Templates {
		t := &objs.Templates[i]
		if templates[t.Namespace] == nil {
			templates[t.Namespace] = map[string]*corev1.PodTemplate{}
		}
		templates[t.Namespace][t.Name] = t
	}
	consumers := map[string][]*corev1.Pod{}
	for i := range objs.Pods {
		p := &objs.Pods[i]
		if name := consumedBy(p); name != "" && !state.IsTerminal(p) {
			consumers[p.Namespace+"/"+name] = append(consumers[p.Namespace+"/"+name], p)
		}
	}
	claims := map[string][]*v1.NodeClaim{}
	for i := range objs.NodeClaims {
		nc := &objs.NodeClaims[i]
		if key := groupOf(nc); key != "" {
			claims[key] = append(claims[key], nc)
		}
	}
	out := make([]Request, 0, len(objs.Requests))
	for i := range objs.Requests {
		pr := &objs.Requests[i]
		out = append(out, Request{
			Object:    pr,
			Templates: templates[pr.Namespace],
			Consumers: consumers[pr.Namespace+"/"+pr.Name],
			Claims:    claims[Key(pr)],
		})
	}
	return out
}

// groupOf is the atomic group a NodeClaim was launched for.
func groupOf(nc *v1.NodeClaim) string { return nc.Annotations[gang.AtomicGroupAnnotationKey] }

// sizeOf is how many NodeClaims the claim's group launch made, 0 unknown.
func sizeOf(nc *v1.NodeClaim) int {
	n, err := strconv.Atoi(nc.Annotations[gang.AtomicGroupSizeAnnotationKey])
	if err != nil {
		return 0
	}
	return n
}
