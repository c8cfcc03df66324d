package simapi_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/test"
)

type nodeClasses map[string]*simv1alpha1.SimNodeClass

func (n nodeClasses) SimNodeClass(_ context.Context, name string) (*simv1alpha1.SimNodeClass, error) {
	if nc, ok := n[name]; ok {
		return nc, nil
	}
	return nil, fmt.Errorf("simnodeclass %s not found", name)
}

func profile(style simv1alpha1.CloudStyle, mods ...func(*simv1alpha1.CloudProfileSpec)) *simv1alpha1.CloudProfile {
	p := &simv1alpha1.CloudProfile{Spec: simv1alpha1.CloudProfileSpec{
		Region: "us-west-2", Zones: []string{"us-west-2a", "us-west-2b"}, Style: style,
		LaunchLatency: metav1.Duration{Duration: 2 * time.Second},
	}}
	for _, m := range mods {
		m(&p.Spec)
	}
	return p
}

func claim(name string, reqs ...v1.NodeSelectorRequirementWithMinValues) *v1.NodeClaim {
	return test.NodeClaim(func(nc *v1.NodeClaim) {
		nc.Name = name
		nc.Spec.Requirements = reqs
		nc.Labels = map[string]string{v1.NodePoolLabelKey: "default"}
	})
}

func in(key string, values ...string) v1.NodeSelectorRequirementWithMinValues {
	return v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}
