package test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestKueueConfig checks the manager's config against Kueue v0.17's
// Configuration (apis/config/v1beta2): field names as its JSON tags spell
// them, loopback endpoints, and only the batch/Job integration.
func TestKueueConfig(t *testing.T) {
	data, err := kueueConfig(9443, 8443, 8081, "/certs")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion":     "config.kueue.x-k8s.io/v1beta2",
		"kind":           "Configuration",
		"namespace":      "kueue-system",
		"webhook":        map[string]any{"host": "127.0.0.1", "port": float64(9443), "certDir": "/certs"},
		"metrics":        map[string]any{"bindAddress": "127.0.0.1:8443"},
		"health":         map[string]any{"healthProbeBindAddress": "127.0.0.1:8081"},
		"leaderElection": map[string]any{"leaderElect": false},
		"internalCertManagement": map[string]any{
			"enable": true, "webhookServiceName": "kueue-webhook-service", "webhookSecretName": "kueue-webhook-server-cert",
		},
		"integrations": map[string]any{"frameworks": []any{"batch/job"}},
		"featureGates": map[string]any{"VisibilityOnDemand": false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kueue's config (-want +got):\n%s", diff)
	}
}
