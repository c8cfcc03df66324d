package ec2endpoint

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
)

// NewHTTPClient is an HTTP client for SDK clients of the endpoint (the
// SDK's HTTPClient option). The SDK closes a request's body as soon as
// the response arrives, while Go's transport may still read it; against a
// server as fast as this one the transport then closes the connection
// under the response being read, and the call fails with "use of closed
// network connection" (aws/aws-sdk-go-v2#2737). The SDK's default
// retryer retries that; a client with RetryMaxAttempts 1, as tests use,
// would fail at random. This client hands the transport a copy of the
// body, which the SDK cannot close.
func NewHTTPClient() *http.Client {
	return &http.Client{Transport: bufferedBodies{next: http.DefaultTransport.(*http.Transport).Clone()}}
}

// bufferedBodies sends each request with an in-memory copy of its body.
type bufferedBodies struct {
	next http.RoundTripper
}

func (b bufferedBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return b.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the request body, %w", err)
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return b.next.RoundTrip(out)
}
