package aws

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/capstan-dev/capstan/pkg/readlimit"
)

// NewHTTPClient is the HTTP client the provider's SDK clients use: the
// SDK's own transport, with each request's body read into memory first.
// The SDK closes a request's body as soon as the response arrives, while
// net/http may still read it to check that nothing follows its
// Content-Length; when the answer is that quick (an endpoint on the same
// host) the transport then drops the connection with the response half
// read. EC2 Query and Price List request bodies are small: one over
// MaxRequestBytes is refused rather than buffered.
func NewHTTPClient() *http.Client {
	return &http.Client{Transport: bufferedBodies{next: awshttp.NewBuildableClient().GetTransport()}}
}

// MaxRequestBytes caps a request body the client buffers: far above any
// the provider builds (user data, the largest part, is at most 16 KiB).
const MaxRequestBytes = 16 << 20

type bufferedBodies struct{ next http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (b bufferedBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return b.next.RoundTrip(r)
	}
	body, err := readlimit.All(r.Body, MaxRequestBytes)
	_ = r.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the request body, %w", err)
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return b.next.RoundTrip(r)
}
