package apiauth

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/controllers/explainserver"
)

// retry is the API server's own backoff for its authentication and
// authorization webhooks.
var retry = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// FilterProvider is a metricsserver.Options.FilterProvider: every request
// to the metrics server, explain included, must carry a bearer token the
// API server accepts, for a user allowed what Attributes says.
func FilterProvider(c *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationv1.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the TokenReview client, %w", err)
	}
	authz, err := authorizationv1.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the SubjectAccessReview client, %w", err)
	}
	authenticator, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                &apiserver.AnonymousAuthConfig{Enabled: false},
		CacheTTL:                 time.Minute,
		TokenAccessReviewClient:  authn,
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      &retry,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("creating the authenticator, %w", err)
	}
	authorize, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: authz,
		AllowCacheTTL:             time.Minute,
		DenyCacheTTL:              10 * time.Second,
		WebhookRetryBackoff:       &retry,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("creating the authorizer, %w", err)
	}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			res, ok, err := authenticator.AuthenticateRequest(r)
			switch {
			case err != nil:
				log.V(1).Info("authentication failed", "error", err.Error())
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			case !ok:
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			attrs := Attributes(res.User, r)
			decision, reason, err := authorize.Authorize(r.Context(), attrs)
			if err != nil {
				log.Error(err, "authorizing a request", "user", res.User.GetName(), "path", r.URL.Path)
				http.Error(w, "authorization failed", http.StatusInternalServerError)
				return
			}
			if decision != authorizer.DecisionAllow {
				log.V(1).Info("request forbidden", "user", res.User.GetName(), "path", r.URL.Path, "reason", reason)
				http.Error(w, fmt.Sprintf("user %q may not %s", res.User.GetName(), describe(attrs)), http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
		}), nil
	}, nil
}

// Attributes are what the user must be allowed for the request: for an
// explain of a pod, NodePool or node, `get` on that object, as reading it
// through the API would need; for anything else (metrics), the verb on
// the non-resource path.
func Attributes(u user.Info, r *http.Request) authorizer.AttributesRecord {
	attrs := authorizer.AttributesRecord{User: u, Verb: strings.ToLower(r.Method), Path: r.URL.Path}
	rest, ok := strings.CutPrefix(r.URL.Path, explainserver.Path)
	if !ok || r.Method != http.MethodGet {
		return attrs
	}
	parts := strings.Split(rest, "/")
	object := authorizer.AttributesRecord{User: u, Verb: "get", ResourceRequest: true, APIVersion: "v1"}
	switch {
	case len(parts) == 3 && parts[0] == "pod" && parts[1] != "" && parts[2] != "":
		object.Resource, object.Namespace, object.Name = "pods", parts[1], parts[2]
	case len(parts) == 2 && parts[0] == "nodepool" && parts[1] != "":
		object.APIGroup, object.APIVersion, object.Resource, object.Name = v1.Group, v1.SchemeGroupVersion.Version, "nodepools", parts[1]
	case len(parts) == 2 && parts[0] == "node" && parts[1] != "":
		object.Resource, object.Name = "nodes", parts[1]
	default:
		return attrs
	}
	return object
}

// describe says what attrs ask, for the 403 message.
func describe(a authorizer.AttributesRecord) string {
	if !a.ResourceRequest {
		return a.Verb + " " + a.Path
	}
	resource := a.Resource
	if a.APIGroup != "" {
		resource += "." + a.APIGroup
	}
	if a.Namespace != "" {
		return fmt.Sprintf("%s %s %s/%s", a.Verb, resource, a.Namespace, a.Name)
	}
	return fmt.Sprintf("%s %s %s", a.Verb, resource, a.Name)
}
