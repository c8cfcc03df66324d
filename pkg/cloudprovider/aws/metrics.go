package aws

import (
	"context"
	"errors"
	"fmt"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	"github.com/prometheus/client_golang/prometheus"
)

// APIMetrics counts every attempt at an AWS API call, retries included,
// by operation and error code ("" for success), so throttling
// (RequestLimitExceeded) that the SDK's retryer absorbs still shows.
type APIMetrics struct {
	attempts *prometheus.CounterVec
}

// NewAPIMetrics registers capstan_cloudprovider_aws_api_attempts_total
// with reg.
func NewAPIMetrics(reg prometheus.Registerer) (*APIMetrics, error) {
	m := &APIMetrics{attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "capstan_cloudprovider_aws_api_attempts_total",
		Help: "Attempts at AWS API calls, retries included, by operation and error code (empty on success).",
	}, []string{"operation", "code"})}
	if err := reg.Register(m.attempts); err != nil {
		return nil, fmt.Errorf("registering aws api metrics, %w", err)
	}
	return m, nil
}

// Middleware adds the counting to an SDK client's stack, inside the
// retryer so each attempt counts (ec2.Options.APIOptions).
func (m *APIMetrics) Middleware(stack *middleware.Stack) error {
	return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("CapstanAPIMetrics",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleFinalize(ctx, in)
			code := ""
			if err != nil {
				code = "Unknown"
				var apiErr smithy.APIError
				if errors.As(err, &apiErr) {
					code = apiErr.ErrorCode()
				}
			}
			m.attempts.WithLabelValues(awsmiddleware.GetOperationName(ctx), code).Inc()
			return out, md, err
		}), "Retry", middleware.After)
}
