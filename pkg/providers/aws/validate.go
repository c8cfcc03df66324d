package aws

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
)

// clusterName is what EKS accepts as a cluster name (CreateCluster's
// name: letters, digits, hyphens and underscores, starting with a letter
// or digit, at most 100 characters). It is written into tags, user data
// and the reference's discovery tags, so nothing else may pass.
var clusterName = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$`)

// validateClusterName checks --cluster-name.
func validateClusterName(name string) error {
	switch {
	case name == "":
		return errors.New("--cluster-name is required with --cloud-provider=aws")
	case !clusterName.MatchString(name):
		return fmt.Errorf("--cluster-name %q is not a cluster name: 1 to 100 letters, digits, hyphens and underscores, starting with a letter or digit", name)
	}
	return nil
}

// validateURL checks an endpoint flag: empty, or an absolute http(s) URL
// with a host, as the SDK's BaseEndpoint and nodes' API server endpoint
// need.
func validateURL(flag, s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%s %q is not a URL, %w", flag, s, err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%s %q is not an absolute http or https URL with a host", flag, s)
	}
	return nil
}

// validateServiceCIDR checks --service-cidr: empty, or an IPv4 or IPv6
// CIDR.
func validateServiceCIDR(s string) error {
	if s == "" {
		return nil
	}
	if _, err := netip.ParsePrefix(s); err != nil {
		return fmt.Errorf("--service-cidr %q is not a CIDR, %w", s, err)
	}
	return nil
}

// validateCABundle checks --cluster-ca-bundle: empty, or base64 of one or
// more PEM certificates, as kubeconfigs and EKS carry it and nodes read
// it, each certificate parsing and nothing else in it.
func validateCABundle(s string) error {
	if s == "" {
		return nil
	}
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("--cluster-ca-bundle is not base64, %w", err)
	}
	n := 0
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		n++
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("--cluster-ca-bundle holds a PEM %q block, want only CERTIFICATE blocks", block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("--cluster-ca-bundle certificate %d does not parse, %w", n, err)
		}
	}
	switch {
	case n == 0:
		return errors.New("--cluster-ca-bundle holds no PEM certificate")
	case strings.TrimSpace(string(data)) != "":
		return fmt.Errorf("--cluster-ca-bundle holds more than PEM certificates after certificate %d", n)
	}
	return nil
}
