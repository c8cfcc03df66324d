package test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

// writeKueueFixture lays out dir as tools.sh lays out bin/kueue, with a
// few of Kueue's manifests cut down to what readKueueManifests reads.
func writeKueueFixture(t *testing.T, dir string) {
	t.Helper()
	crd := func(name string) string {
		return "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + name + "\n"
	}
	patch := func(name string) string {
		return crd(name) + `spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service:
          namespace: system
          name: webhook-service
          path: /convert
      conversionReviewVersions:
      - v1
`
	}
	webhook := func(name, group, resource, path string) string {
		return `- admissionReviewVersions: [v1]
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: ` + path + `
  failurePolicy: Fail
  name: ` + name + `
  rules:
  - apiGroups: ["` + group + `"]
    apiVersions: [v1]
    operations: [CREATE]
    resources: [` + resource + `]
  sideEffects: None
`
	}
	files := map[string]string{
		"crd/bases/kueue.x-k8s.io_workloads.yaml":       crd("workloads.kueue.x-k8s.io"),
		"crd/bases/kueue.x-k8s.io_resourceflavors.yaml": crd("resourceflavors.kueue.x-k8s.io"),
		"crd/patches/webhook_in_workloads.yaml":         patch("workloads.kueue.x-k8s.io"),
		// Present in the module but commented out of its kustomization.
		"crd/patches/webhook_in_resourceflavors.yaml": patch("resourceflavors.kueue.x-k8s.io"),
		"crd/kustomization.yaml": `resources:
- bases/kueue.x-k8s.io_workloads.yaml
patches:
- path: patches/webhook_in_workloads.yaml
#- path: patches/webhook_in_resourceflavors.yaml
`,
		"webhook/manifests.yaml": "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata:\n  name: mutating-webhook-configuration\nwebhooks:\n" +
			webhook("mjob.kb.io", "batch", "jobs", "/mutate-batch-v1-job") +
			webhook("mpod.kb.io", "", "pods", "/mutate--v1-pod") +
			"---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: validating-webhook-configuration\nwebhooks:\n" +
			webhook("vworkload.kb.io", "kueue.x-k8s.io", "workloads", "/validate-kueue-x-k8s-io-v1beta2-workload") +
			webhook("vjobset.kb.io", "jobset.x-k8s.io", "jobsets", "/validate-jobset-x-k8s-io-v1alpha2-jobset"),
		"provisioningrequest/autoscaling.x-k8s.io_provisioningrequests.yaml": crd("provisioningrequests.autoscaling.x-k8s.io"),
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// kueueInstall is what the API server is told about Kueue's webhooks,
// reduced for comparison.
type kueueInstall struct {
	// Conversion is each CRD's conversion webhook URL ("" for none).
	Conversion map[string]string
	// Webhooks are the URLs of each configuration's webhooks, by name.
	Webhooks map[string]map[string]string
	// CABundles counts the webhooks and conversions that trust the CA.
	CABundles int
}

func TestKueueManifestsServeOnLoopback(t *testing.T) {
	dir := t.TempDir()
	writeKueueFixture(t, dir)
	m, err := readKueueManifests(dir)
	if err != nil {
		t.Fatal(err)
	}
	ca := []byte("ca")
	m.serveOn(9443, ca)

	got := kueueInstall{Conversion: map[string]string{}, Webhooks: map[string]map[string]string{}}
	for _, crd := range m.crds {
		got.Conversion[crd.Name] = ""
		if c := crd.Spec.Conversion; c != nil && c.Webhook != nil {
			got.Conversion[crd.Name] = ptr.Deref(c.Webhook.ClientConfig.URL, "")
			if string(c.Webhook.ClientConfig.CABundle) == string(ca) {
				got.CABundles++
			}
		}
	}
	got.Webhooks[m.mutating.Name] = map[string]string{}
	for _, w := range m.mutating.Webhooks {
		got.Webhooks[m.mutating.Name][w.Name] = ptr.Deref(w.ClientConfig.URL, "")
		if w.ClientConfig.Service == nil && string(w.ClientConfig.CABundle) == string(ca) {
			got.CABundles++
		}
	}
	got.Webhooks[m.validating.Name] = map[string]string{}
	for _, w := range m.validating.Webhooks {
		got.Webhooks[m.validating.Name][w.Name] = ptr.Deref(w.ClientConfig.URL, "")
		if w.ClientConfig.Service == nil && string(w.ClientConfig.CABundle) == string(ca) {
			got.CABundles++
		}
	}
	want := kueueInstall{
		// Only the CRDs the kustomization patches get the conversion
		// webhook: Kueue's certificate management updates those.
		Conversion: map[string]string{
			"resourceflavors.kueue.x-k8s.io": "",
			"workloads.kueue.x-k8s.io":       "https://127.0.0.1:9443/convert",
		},
		// The Pod and JobSet webhooks are dropped: their integrations are
		// not enabled, and the pod webhook would stop every pod.
		Webhooks: map[string]map[string]string{
			"kueue-mutating-webhook-configuration":   {"mjob.kb.io": "https://127.0.0.1:9443/mutate-batch-v1-job"},
			"kueue-validating-webhook-configuration": {"vworkload.kb.io": "https://127.0.0.1:9443/validate-kueue-x-k8s-io-v1beta2-workload"},
		},
		CABundles: 3,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("installed webhooks (-want +got):\n%s", diff)
	}
	if m.provisioningRequest.Name != "provisioningrequests.autoscaling.x-k8s.io" {
		t.Errorf("provisioning request crd %q", m.provisioningRequest.Name)
	}
}

func TestKueueManifestsMissing(t *testing.T) {
	dir := t.TempDir()
	writeKueueFixture(t, dir)
	if err := os.Remove(filepath.Join(dir, "provisioningrequest", "autoscaling.x-k8s.io_provisioningrequests.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := readKueueManifests(dir); err == nil {
		t.Error("read the manifests without the provisioning request crd")
	}
	if _, err := readKueueManifests(t.TempDir()); err == nil {
		t.Error("read the manifests of an empty directory")
	}
}
