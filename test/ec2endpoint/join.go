package ec2endpoint

import (
	"context"
	"maps"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// joiningKey is the context key of a launch's verdicts on its
// candidates' user data.
type joiningKey struct{}

// withJoining is ctx carrying, for the candidates of one launch, why the
// node of each would not join (whyNotJoining), by instance type and
// zone: the kubelet reads it when the sim launches one of them.
func (s *Server) withJoining(ctx context.Context, group []candidate) context.Context {
	why := map[string]string{}
	for _, c := range group {
		if w := s.whyNotJoining(c.template.data.userData, c.imageID); w != "" {
			why[c.instanceType+"/"+c.zone] = w
		}
	}
	return context.WithValue(ctx, joiningKey{}, why)
}

// joiningKubelet registers the Node of a launched instance only when its
// user data lets its node join the cluster; otherwise the instance runs
// and its Node never appears, as on EC2, and the endpoint records why.
type joiningKubelet struct {
	inner sim.Kubelet

	mu        sync.Mutex
	notJoined map[string]string
}

func newJoiningKubelet(inner sim.Kubelet) *joiningKubelet {
	if inner == nil {
		inner = sim.NewMemoryKubelet()
	}
	return &joiningKubelet{inner: inner, notJoined: map[string]string{}}
}

// Launch implements sim.Kubelet.
func (k *joiningKubelet) Launch(ctx context.Context, node *corev1.Node, registerAt time.Time) {
	why, _ := ctx.Value(joiningKey{}).(map[string]string)
	if w := why[node.Labels[v1.LabelInstanceType]+"/"+node.Labels[v1.LabelZone]]; w != "" {
		id := node.Spec.ProviderID[strings.LastIndexByte(node.Spec.ProviderID, '/')+1:]
		k.mu.Lock()
		k.notJoined[id] = w
		k.mu.Unlock()
		log.FromContext(ctx).Info("instance launched, its node will not join", "instance", id, "reason", w)
		return
	}
	k.inner.Launch(ctx, node, registerAt)
}

// Stop implements sim.Kubelet.
func (k *joiningKubelet) Stop(ctx context.Context, nodeName string) { k.inner.Stop(ctx, nodeName) }

// NotJoined are the instances launched whose Node never registers
// because of their user data, by instance id, with why.
func (s *Server) NotJoined() map[string]string {
	s.kubelet.mu.Lock()
	defer s.kubelet.mu.Unlock()
	return maps.Clone(s.kubelet.notJoined)
}
