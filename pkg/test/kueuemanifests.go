package test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// kueueManifests are the objects installed with Kueue's manager, read
// from the files tools.sh copies from the module cache into bin/kueue:
// config/components/crd and config/components/webhook of
// sigs.k8s.io/kueue, and the ProvisioningRequest CRD of
// k8s.io/autoscaler/cluster-autoscaler/apis.
type kueueManifests struct {
	crds []*apiextensionsv1.CustomResourceDefinition
	// conversion holds the conversion of the CRDs Kueue's kustomization
	// patches (crd/kustomization.yaml), by CRD name: those its conversion
	// webhook serves, and its certificate management updates.
	conversion          map[string]*apiextensionsv1.CustomResourceConversion
	mutating            *admissionregistrationv1.MutatingWebhookConfiguration
	validating          *admissionregistrationv1.ValidatingWebhookConfiguration
	provisioningRequest *apiextensionsv1.CustomResourceDefinition
}

// kueueGroups are the API groups of the webhooks the harness installs:
// Kueue's own kinds and batch/v1 Jobs, the one integration it enables.
// The others' webhooks (Pods, Deployments, ...) would call paths the
// manager does not serve.
var kueueGroups = []string{"kueue.x-k8s.io", "batch"}

// kueueNamePrefix is the prefix Kueue's kustomization gives its objects:
// the webhook configurations its certificate management updates are
// kueue-mutating-webhook-configuration and
// kueue-validating-webhook-configuration.
const kueueNamePrefix = "kueue-"

func readKueueManifests(dir string) (*kueueManifests, error) {
	m := &kueueManifests{conversion: map[string]*apiextensionsv1.CustomResourceConversion{}}
	paths, err := filepath.Glob(filepath.Join(dir, "crd", "bases", "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("listing kueue's crds, %w", err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: %s", errNoKueueManifest, filepath.Join(dir, "crd", "bases"))
	}
	for _, path := range paths {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := readYAML(path, crd); err != nil {
			return nil, err
		}
		m.crds = append(m.crds, crd)
	}
	var kustomization struct {
		Patches []struct {
			Path string `json:"path"`
		} `json:"patches"`
	}
	if err := readYAML(filepath.Join(dir, "crd", "kustomization.yaml"), &kustomization); err != nil {
		return nil, err
	}
	for _, p := range kustomization.Patches {
		patch := &apiextensionsv1.CustomResourceDefinition{}
		if err := readYAML(filepath.Join(dir, "crd", p.Path), patch); err != nil {
			return nil, err
		}
		if patch.Spec.Conversion != nil {
			m.conversion[patch.Name] = patch.Spec.Conversion
		}
	}
	// The webhook manifest holds both configurations, one document each.
	webhooks := filepath.Join(dir, "webhook", "manifests.yaml")
	docs, err := readManifestFile(webhooks)
	if err != nil {
		return nil, err
	}
	for _, doc := range docs {
		data, err := doc.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encoding %s, %w", webhooks, err)
		}
		switch doc.GetKind() {
		case "MutatingWebhookConfiguration":
			m.mutating = &admissionregistrationv1.MutatingWebhookConfiguration{}
			err = yaml.Unmarshal(data, m.mutating)
		case "ValidatingWebhookConfiguration":
			m.validating = &admissionregistrationv1.ValidatingWebhookConfiguration{}
			err = yaml.Unmarshal(data, m.validating)
		}
		if err != nil {
			return nil, fmt.Errorf("decoding %s, %w", webhooks, err)
		}
	}
	if m.mutating == nil || m.validating == nil {
		return nil, fmt.Errorf("%w: the webhook configurations in %s", errNoKueueManifest, webhooks)
	}
	m.provisioningRequest = &apiextensionsv1.CustomResourceDefinition{}
	if err := readYAML(filepath.Join(dir, "provisioningrequest", "autoscaling.x-k8s.io_provisioningrequests.yaml"), m.provisioningRequest); err != nil {
		return nil, err
	}
	return m, nil
}

// serveOn points the conversion webhooks of the patched CRDs and the
// webhooks of kueueGroups at the manager's webhook server on loopback
// port, trusting ca (Kueue's certificate management writes the same CA
// into them again), and drops the other webhooks.
func (m *kueueManifests) serveOn(port int, ca []byte) {
	base := "https://127.0.0.1:" + strconv.Itoa(port)
	url := func(service *admissionregistrationv1.ServiceReference) *string {
		if service == nil {
			return ptr.To(base)
		}
		return ptr.To(base + ptr.Deref(service.Path, ""))
	}
	for _, crd := range m.crds {
		conversion, ok := m.conversion[crd.Name]
		if !ok || conversion.Webhook == nil || conversion.Webhook.ClientConfig == nil || conversion.Webhook.ClientConfig.Service == nil {
			continue
		}
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: ptr.To(base + ptr.Deref(conversion.Webhook.ClientConfig.Service.Path, "")), CABundle: ca},
				ConversionReviewVersions: conversion.Webhook.ConversionReviewVersions,
			},
		}
	}
	m.mutating.Name = kueueNamePrefix + m.mutating.Name
	m.mutating.Webhooks = slices.DeleteFunc(m.mutating.Webhooks, func(w admissionregistrationv1.MutatingWebhook) bool { return !forKueueGroups(w.Rules) })
	for i := range m.mutating.Webhooks {
		cc := &m.mutating.Webhooks[i].ClientConfig
		*cc = admissionregistrationv1.WebhookClientConfig{URL: url(cc.Service), CABundle: ca}
	}
	m.validating.Name = kueueNamePrefix + m.validating.Name
	m.validating.Webhooks = slices.DeleteFunc(m.validating.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool { return !forKueueGroups(w.Rules) })
	for i := range m.validating.Webhooks {
		cc := &m.validating.Webhooks[i].ClientConfig
		*cc = admissionregistrationv1.WebhookClientConfig{URL: url(cc.Service), CABundle: ca}
	}
}

// forKueueGroups reports whether every rule of a webhook names only
// kueueGroups.
func forKueueGroups(rules []admissionregistrationv1.RuleWithOperations) bool {
	for _, r := range rules {
		for _, g := range r.APIGroups {
			if !slices.Contains(kueueGroups, g) {
				return false
			}
		}
	}
	return len(rules) > 0
}

// readYAML decodes one YAML document.
func readYAML(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: %w", errNoKueueManifest, err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		return fmt.Errorf("decoding %s, %w", path, err)
	}
	return nil
}
