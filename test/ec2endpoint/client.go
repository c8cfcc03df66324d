package ec2endpoint

import (
	"net/http"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

// NewHTTPClient is an HTTP client for SDK clients of the endpoint (the
// SDK's HTTPClient option): the AWS provider's own (aws.NewHTTPClient).
// The SDK closes a request's body as soon as the response arrives, while
// Go's transport may still read it; against a server as fast as this one
// the transport then closes the connection under the response being read
// (aws/aws-sdk-go-v2#2737). Tests use RetryMaxAttempts 1, so without it
// they would fail at random.
func NewHTTPClient() *http.Client { return aws.NewHTTPClient() }
