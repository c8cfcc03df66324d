package simulator

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	"github.com/capstan-dev/capstan/pkg/buffers"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scheduling"
	"github.com/capstan-dev/capstan/pkg/state"
)

// BufferCost is what a CapacityBuffer holds at the end of the run and
// what that costs (docs/simulate.md, "Capacity buffers").
type BufferCost struct {
	// Name is "namespace/name".
	Name string `json:"name"`
	// Replicas is the buffer's size (status.replicas), Placed how many of
	// its virtual pods fit existing capacity at the end.
	Replicas int32 `json:"replicas"`
	Placed   int   `json:"placed"`
	// Nodes are the nodes holding its virtual pods, by name, with how
	// many each holds.
	Nodes map[string]int `json:"nodes"`
	// CostPerHour is the share of those nodes' price its virtual pods
	// hold: for each node, its price times the larger of the virtual
	// pods' share of its allocatable CPU and of its memory.
	CostPerHour float64 `json:"costPerHour"`
}

// bufferSizings sizes every CapacityBuffer from the world, as the
// controller's capacitybuffer controller and clusterstate.VirtualPods
// do from the API server: none while the CapacityBuffer gate is off.
func (w *world) bufferSizings() map[types.NamespacedName]buffers.Sizing {
	if !w.capacityBuffers || len(w.buffers) == 0 {
		return nil
	}
	out := map[types.NamespacedName]buffers.Sizing{}
	for i := range w.buffers {
		cb := &w.buffers[i]
		out[types.NamespacedName{Namespace: cb.Namespace, Name: cb.Name}] = buffers.Size(buffers.Input{Buffer: cb, Source: w.bufferSource(cb), Now: time.Time{}})
	}
	return out
}

// bufferPods are the buffers' virtual pods, in the buffers' order.
func (w *world) bufferPods() []corev1.Pod {
	sizings := w.bufferSizings()
	var out []corev1.Pod
	for i := range w.buffers {
		out = append(out, sizings[types.NamespacedName{Namespace: w.buffers[i].Namespace, Name: w.buffers[i].Name}].Pods...)
	}
	return out
}

// bufferSource is what clusterstate.ResolveBuffer reads in a cluster: a
// PodTemplate, or a workload's template and replicas (its scale).
func (w *world) bufferSource(cb *autoscalingv1beta1.CapacityBuffer) buffers.Source {
	switch ref := cb.Spec.ScalableRef; {
	case cb.Spec.PodTemplateRef != nil:
		for _, pt := range w.podTemplates {
			if pt.Namespace == cb.Namespace && pt.Name == cb.Spec.PodTemplateRef.Name {
				return buffers.Source{Template: &pt.Template, TemplateGeneration: pt.Generation}
			}
		}
		return buffers.Source{Reason: buffers.ReasonPodTemplateNotFound, Message: "podtemplate " + cb.Spec.PodTemplateRef.Name + " not found"}
	case ref != nil:
		if (ref.APIGroup != "apps" && ref.APIGroup != "") || !slices.Contains([]string{autoscalingv1beta1.KindDeployment, autoscalingv1beta1.KindStatefulSet, autoscalingv1beta1.KindReplicaSet}, ref.Kind) {
			return buffers.Source{Reason: buffers.ReasonResolutionFailed, Message: "unsupported scalableRef kind " + ref.Kind}
		}
		for _, wl := range w.workloads {
			if wl.kind == ref.Kind && wl.namespace == cb.Namespace && wl.name == ref.Name {
				return buffers.Source{Template: &wl.template, ScaleReplicas: wl.replicas}
			}
		}
		return buffers.Source{Reason: buffers.ReasonScalableRefNotFound, Message: ref.Kind + " " + ref.Name + " not found"}
	}
	return buffers.Source{}
}

// bufferCosts places the virtual pods as the provisioner would now and
// prices what each buffer holds (BufferCost); prices are the nodes' as
// the report gives them.
func (s *Simulator) bufferCosts(in provisioning.Input, nodes []Node) []BufferCost {
	sizings := s.world.bufferSizings()
	if len(sizings) == 0 {
		return nil
	}
	price := map[string]float64{}
	for _, n := range nodes {
		if n.DeletedAt == "" {
			price[n.Name] = n.PricePerHour
		}
	}
	byName := map[string]*provisioning.Node{}
	for _, n := range in.Nodes {
		byName[n.Name] = n
	}
	res := provisioning.Solve(in)
	placed := buffers.Placements(res.Nominations, nil, nil)
	held := map[types.NamespacedName]map[string]scheduling.Resources{}
	for _, nom := range res.Nominations {
		kind, ns, name, ok := state.VirtualOwner(nom.Pod)
		if !ok || kind != state.KindCapacityBuffer {
			continue
		}
		key := types.NamespacedName{Namespace: ns, Name: name}
		if held[key] == nil {
			held[key] = map[string]scheduling.Resources{}
		}
		held[key][nom.NodeName] = held[key][nom.NodeName].Add(scheduling.PodRequests(nom.Pod))
	}
	var out []BufferCost
	for key, sz := range sizings {
		c := BufferCost{Name: key.String(), Nodes: map[string]int{}}
		if sz.Status.Replicas != nil {
			c.Replicas = *sz.Status.Replicas
		}
		p := placed[key]
		c.Placed = p.Fitting()
		for node, n := range p.Existing {
			c.Nodes[node] = n
			if alloc := byName[node]; alloc != nil {
				c.CostPerHour += price[node] * share(held[key][node], scheduling.NewResources(alloc.Allocatable))
			}
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b BufferCost) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// share is the larger of used's share of allocatable CPU and memory, at
// most 1.
func share(used, allocatable scheduling.Resources) float64 {
	f := 0.0
	if allocatable.CPU > 0 {
		f = max(f, float64(used.CPU)/float64(allocatable.CPU))
	}
	if allocatable.Memory > 0 {
		f = max(f, float64(used.Memory)/float64(allocatable.Memory))
	}
	return min(f, 1)
}
