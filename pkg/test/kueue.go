package test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// Where the harness runs Kueue. Kueue's internal certificate management
// reads its webhook certificate from the Secret kueueSecretName in
// KueueNamespace and checks that it names the Service kueueServiceName
// there (sigs.k8s.io/kueue pkg/util/cert); no such Service exists, as the
// API server calls the webhooks on loopback (kueuemanifests.go).
const (
	KueueNamespace   = "kueue-system"
	kueueServiceName = "kueue-webhook-service"
	kueueSecretName  = "kueue-webhook-server-cert"
)

// KueueDir is where `make tools` puts Kueue's manager and the manifests
// the harness installs with it (hack/tools.sh): bin/kueue at the module
// root.
func KueueDir() (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "bin", "kueue")
	if _, err := os.Stat(filepath.Join(dir, "kueue")); err != nil {
		return "", fmt.Errorf("kueue binary not found in %s (run `make tools`), %w", dir, err)
	}
	return dir, nil
}

// StartKueue runs Kueue's manager on the cluster, as test/e2e/batch does:
// it installs the ProvisioningRequest CRD (unless the cluster serves it
// already), Kueue's CRDs and its webhook configurations (the API server
// calls the webhooks on loopback, with a certificate made here), then
// starts bin/kueue as the process "kueue" with a config file under Root
// (the batch/Job integration only, no leader election, metrics and health
// on free loopback ports) and waits until it is ready, so its webhooks
// answer. The ProvisioningRequest admission check controller of Kueue
// v0.17 has no feature gate: it starts when the API serves
// ProvisioningRequests. Stop kills it with the rest.
func (c *Cluster) StartKueue(ctx context.Context) error {
	dir, err := KueueDir()
	if err != nil {
		return err
	}
	var ports [3]int
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return err
		}
	}
	webhookPort, metricsPort, healthPort := ports[0], ports[1], ports[2]
	certs, err := newKueueCerts()
	if err != nil {
		return err
	}
	m, err := readKueueManifests(dir)
	if err != nil {
		return err
	}
	m.serveOn(webhookPort, certs.caPEM)
	if err := c.installKueue(ctx, m, certs); err != nil {
		return err
	}
	kueueRoot := mkdir(c.Root, "kueue")
	certDir := mkdir(kueueRoot, "certs")
	for name, data := range map[string][]byte{corev1.TLSCertKey: certs.certPEM, corev1.TLSPrivateKeyKey: certs.keyPEM} {
		if err := os.WriteFile(filepath.Join(certDir, name), data, 0o600); err != nil {
			return fmt.Errorf("writing kueue's webhook certificate, %w", err)
		}
	}
	config, err := kueueConfig(webhookPort, metricsPort, healthPort, certDir)
	if err != nil {
		return err
	}
	configPath := filepath.Join(kueueRoot, "config.yaml")
	if err := os.WriteFile(configPath, config, 0o600); err != nil {
		return fmt.Errorf("writing kueue's config, %w", err)
	}
	p, err := startProcessEnv(c.Logs(), "kueue", filepath.Join(dir, "kueue"), []string{"KUBECONFIG=" + c.Kubeconfig}, "--config="+configPath)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, p)
	return waitHealthy(ctx, p, "http://127.0.0.1:"+strconv.Itoa(healthPort)+"/readyz")
}

// installKueue creates what Kueue's manager needs before it starts: the
// CRDs, its namespace with the webhook Secret, and the webhook
// configurations.
func (c *Cluster) installKueue(ctx context.Context, m *kueueManifests, certs *kueueCerts) error {
	crds := m.crds
	existing := &metav1.PartialObjectMetadata{}
	existing.SetGroupVersionKind(m.provisioningRequest.GroupVersionKind())
	switch err := c.Client.Get(ctx, client.ObjectKeyFromObject(m.provisioningRequest), existing); {
	case apierrors.IsNotFound(err):
		crds = append(crds, m.provisioningRequest)
	case err != nil:
		return fmt.Errorf("looking up the provisioningrequests crd, %w", err)
	}
	if _, err := envtest.InstallCRDs(c.Config, envtest.CRDInstallOptions{CRDs: crds}); err != nil {
		return fmt.Errorf("installing kueue's crds, %w", err)
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace}},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: kueueSecretName, Namespace: KueueNamespace},
			Data: map[string][]byte{
				"ca.crt": certs.caPEM, "ca.key": certs.caKeyPEM,
				corev1.TLSCertKey: certs.certPEM, corev1.TLSPrivateKeyKey: certs.keyPEM,
			},
		},
		m.mutating, m.validating,
	}
	for _, obj := range objs {
		if err := c.Client.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %T %s, %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// kueueConfig is the manager's Configuration (config.kueue.x-k8s.io
// v1beta2, sigs.k8s.io/kueue apis/config/v1beta2). Internal certificate
// management stays on, fed the Secret installKueue made: off, Kueue reads
// its metrics certificate from a fixed path under /etc.
func kueueConfig(webhookPort, metricsPort, healthPort int, certDir string) ([]byte, error) {
	config := map[string]any{
		"apiVersion":     "config.kueue.x-k8s.io/v1beta2",
		"kind":           "Configuration",
		"namespace":      KueueNamespace,
		"webhook":        map[string]any{"host": "127.0.0.1", "port": webhookPort, "certDir": certDir},
		"metrics":        map[string]any{"bindAddress": "127.0.0.1:" + strconv.Itoa(metricsPort)},
		"health":         map[string]any{"healthProbeBindAddress": "127.0.0.1:" + strconv.Itoa(healthPort)},
		"leaderElection": map[string]any{"leaderElect": false},
		"internalCertManagement": map[string]any{
			"enable": true, "webhookServiceName": kueueServiceName, "webhookSecretName": kueueSecretName,
		},
		"integrations": map[string]any{"frameworks": []string{"batch/job"}},
		// The visibility API server would listen on a fixed port; nothing
		// here reads pending workloads through it.
		"featureGates": map[string]bool{"VisibilityOnDemand": false},
	}
	out, err := yaml.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("encoding kueue's config, %w", err)
	}
	return out, nil
}

// errNoKueueManifest is a manifest missing from bin/kueue: tools.sh copies
// them with the binary.
var errNoKueueManifest = errors.New("kueue manifest missing (rerun `make tools` after removing bin/kueue)")
