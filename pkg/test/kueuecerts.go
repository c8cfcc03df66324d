package test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// kueueCerts are the CA and webhook serving certificate the harness makes
// for Kueue, PEM-encoded, in the form Kueue's certificate management
// (github.com/open-policy-agent/cert-controller's rotator) keeps rather
// than replaces: an RSA CA whose certificate names kueueCAName, and a
// server certificate for the webhook Service's DNS name, valid beyond
// the rotator's 90-day look-ahead. The server certificate names 127.0.0.1
// too, the address the API server calls it on.
type kueueCerts struct {
	caPEM, caKeyPEM, certPEM, keyPEM []byte
}

// kueueCAName is the CA name Kueue's certificate management checks.
const kueueCAName = "kueue-ca"

// kueueCertValidity outlasts the rotator's look-ahead, so it never
// rotates the harness's certificate during a run.
const kueueCertValidity = 365 * 24 * time.Hour

// kueueWebhookDNSName is the name Kueue's certificate management expects
// in the serving certificate: its webhook Service's.
func kueueWebhookDNSName() string {
	return kueueServiceName + "." + KueueNamespace + ".svc"
}

func newKueueCerts() (*kueueCerts, error) {
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generating kueue's ca key, %w", err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: kueueCAName, Organization: []string{"kueue"}}, caKey)
	if err != nil {
		return nil, fmt.Errorf("generating kueue's ca, %w", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generating kueue's webhook key, %w", err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return nil, fmt.Errorf("generating a serial number, %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: kueueWebhookDNSName()},
		DNSNames:     []string{kueueWebhookDNSName()},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(kueueCertValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("signing kueue's webhook certificate, %w", err)
	}
	return &kueueCerts{
		caPEM:    pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: ca.Raw}),
		caKeyPEM: pem.EncodeToMemory(&pem.Block{Type: keyutil.RSAPrivateKeyBlockType, Bytes: x509.MarshalPKCS1PrivateKey(caKey)}),
		certPEM:  pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: der}),
		keyPEM:   pem.EncodeToMemory(&pem.Block{Type: keyutil.RSAPrivateKeyBlockType, Bytes: x509.MarshalPKCS1PrivateKey(key)}),
	}, nil
}
