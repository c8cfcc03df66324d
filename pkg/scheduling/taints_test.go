package scheduling

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func taint(key, value string, effect corev1.TaintEffect) corev1.Taint {
	return corev1.Taint{Key: key, Value: value, Effect: effect}
}

func TestTolerates(t *testing.T) {
	const (
		noSchedule       = corev1.TaintEffectNoSchedule
		preferNoSchedule = corev1.TaintEffectPreferNoSchedule
		noExecute        = corev1.TaintEffectNoExecute
		exists           = corev1.TolerationOpExists
		equal            = corev1.TolerationOpEqual
	)
	cases := []struct {
		name        string
		tolerations []corev1.Toleration
		taints      []corev1.Taint
		wantErr     string
	}{
		{name: "no taints"},
		{
			name:    "untolerated NoSchedule blocks",
			taints:  []corev1.Taint{taint("dedicated", "gpu", noSchedule)},
			wantErr: "taint dedicated=gpu:NoSchedule not tolerated",
		},
		{
			name:    "untolerated NoExecute blocks",
			taints:  []corev1.Taint{taint("node.kubernetes.io/unreachable", "", noExecute)},
			wantErr: "taint node.kubernetes.io/unreachable=:NoExecute not tolerated",
		},
		{
			name:   "untolerated PreferNoSchedule never blocks",
			taints: []corev1.Taint{taint("dedicated", "gpu", preferNoSchedule)},
		},
		{
			name:        "Equal with the same key and value tolerates",
			tolerations: []corev1.Toleration{{Key: "dedicated", Operator: equal, Value: "gpu"}},
			taints:      []corev1.Taint{taint("dedicated", "gpu", noSchedule)},
		},
		{
			name:        "empty operator means Equal",
			tolerations: []corev1.Toleration{{Key: "dedicated", Value: "gpu"}},
			taints:      []corev1.Taint{taint("dedicated", "gpu", noSchedule)},
		},
		{
			name:        "Equal with another value does not tolerate",
			tolerations: []corev1.Toleration{{Key: "dedicated", Operator: equal, Value: "cpu"}},
			taints:      []corev1.Taint{taint("dedicated", "gpu", noSchedule)},
			wantErr:     "taint dedicated=gpu:NoSchedule not tolerated",
		},
		{
			name:        "Equal with another key does not tolerate",
			tolerations: []corev1.Toleration{{Key: "team", Operator: equal, Value: "gpu"}},
			taints:      []corev1.Taint{taint("dedicated", "gpu", noSchedule)},
			wantErr:     "taint dedicated=gpu:NoSchedule not tolerated",
		},
		{
			name:        "Exists on the key tolerates any value",
			tolerations: []corev1.Toleration{{Key: "dedicated", Operator: exists}},
			taints:      []corev1.Taint{taint("dedicated", "gpu", noSchedule), taint("dedicated", "", noExecute)},
		},
		{
			name:        "Exists on another key does not tolerate",
			tolerations: []corev1.Toleration{{Key: "team", Operator: exists}},
			taints:      []corev1.Taint{taint("dedicated", "gpu", noExecute)},
			wantErr:     "taint dedicated=gpu:NoExecute not tolerated",
		},
		{
			name:        "Exists with an empty key tolerates every taint",
			tolerations: []corev1.Toleration{{Operator: exists}},
			taints: []corev1.Taint{
				taint("dedicated", "gpu", noSchedule),
				taint("node.kubernetes.io/not-ready", "", noExecute),
				taint("spot", "true", preferNoSchedule),
			},
		},
		{
			name:        "a toleration for NoSchedule does not tolerate NoExecute",
			tolerations: []corev1.Toleration{{Key: "dedicated", Operator: exists, Effect: noSchedule}},
			taints:      []corev1.Taint{taint("dedicated", "gpu", noSchedule), taint("dedicated", "gpu", noExecute)},
			wantErr:     "taint dedicated=gpu:NoExecute not tolerated",
		},
		{
			name:        "a toleration for NoExecute tolerates NoExecute",
			tolerations: []corev1.Toleration{{Key: "dedicated", Operator: equal, Value: "gpu", Effect: noExecute}},
			taints:      []corev1.Taint{taint("dedicated", "gpu", noExecute)},
		},
		{
			name:        "an empty-key Exists toleration for one effect leaves the other",
			tolerations: []corev1.Toleration{{Operator: exists, Effect: noExecute}},
			taints:      []corev1.Taint{taint("a", "", noExecute), taint("b", "x", noSchedule)},
			wantErr:     "taint b=x:NoSchedule not tolerated",
		},
		{
			name:        "a toleration without effect tolerates every effect",
			tolerations: []corev1.Toleration{{Key: "dedicated", Operator: equal, Value: "gpu"}},
			taints:      []corev1.Taint{taint("dedicated", "gpu", noSchedule), taint("dedicated", "gpu", noExecute)},
		},
		{
			name: "the first untolerated taint is named",
			tolerations: []corev1.Toleration{
				{Key: "a", Operator: exists},
			},
			taints: []corev1.Taint{
				taint("a", "1", noSchedule),
				taint("b", "2", preferNoSchedule),
				taint("c", "3", noExecute),
				taint("d", "4", noSchedule),
			},
			wantErr: "taint c=3:NoExecute not tolerated",
		},
		{
			name: "every taint tolerated by some toleration",
			tolerations: []corev1.Toleration{
				{Key: "a", Operator: exists},
				{Key: "b", Operator: equal, Value: "2", Effect: noExecute},
			},
			taints: []corev1.Taint{taint("a", "1", noSchedule), taint("b", "2", noExecute)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantErr, errString(Tolerates(tc.tolerations, tc.taints))); diff != "" {
				t.Errorf("Tolerates error (-want +got):\n%s", diff)
			}
		})
	}
}
