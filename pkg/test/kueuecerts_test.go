package test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"
)

// TestKueueCertsKeptByKueue checks the certificates against what Kueue's
// certificate management (cert-controller's rotator: ValidCert and
// buildArtifactsFromSecret) requires before it keeps a Secret's
// certificates instead of replacing them, which would leave the API
// server trusting a CA the webhook server does not serve.
func TestKueueCertsKeptByKueue(t *testing.T) {
	certs, err := newKueueCerts()
	if err != nil {
		t.Fatal(err)
	}
	ca := parseCert(t, certs.caPEM)
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	// The rotator checks each certificate at now plus its look-ahead.
	lookahead := time.Now().Add(90 * 24 * time.Hour)

	if _, err := ca.Verify(x509.VerifyOptions{DNSName: kueueCAName, Roots: roots, CurrentTime: lookahead}); err != nil {
		t.Errorf("the ca is not valid as kueue's: %v", err)
	}
	if _, err := tls.X509KeyPair(certs.caPEM, certs.caKeyPEM); err != nil {
		t.Errorf("the ca's key pair: %v", err)
	}
	block, _ := pem.Decode(certs.caKeyPEM)
	if block == nil {
		t.Fatal("the ca key is not PEM")
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err != nil {
		t.Errorf("the ca key is not PKCS #1, as the rotator reads it: %v", err)
	}

	server := parseCert(t, certs.certPEM)
	for _, name := range []string{kueueWebhookDNSName(), "127.0.0.1"} {
		if _, err := server.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: lookahead, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("the serving certificate is not valid for %s: %v", name, err)
		}
	}
	if _, err := tls.X509KeyPair(certs.certPEM, certs.keyPEM); err != nil {
		t.Errorf("the serving key pair: %v", err)
	}
}

func parseCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatal("not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
