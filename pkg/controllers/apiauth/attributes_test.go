package apiauth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

func TestAttributes(t *testing.T) {
	u := &user.DefaultInfo{Name: "alice"}
	cases := []struct {
		method, path string
		want         authorizer.AttributesRecord
	}{
		{http.MethodGet, "/metrics", authorizer.AttributesRecord{User: u, Verb: "get", Path: "/metrics"}},
		{http.MethodGet, "/explain/pod/default/web-0", authorizer.AttributesRecord{User: u, Verb: "get", ResourceRequest: true, APIVersion: "v1", Resource: "pods", Namespace: "default", Name: "web-0"}},
		{http.MethodGet, "/explain/nodepool/gpu", authorizer.AttributesRecord{User: u, Verb: "get", ResourceRequest: true, APIGroup: "karpenter.sh", APIVersion: "v1", Resource: "nodepools", Name: "gpu"}},
		{http.MethodGet, "/explain/node/ip-10-0-0-1", authorizer.AttributesRecord{User: u, Verb: "get", ResourceRequest: true, APIVersion: "v1", Resource: "nodes", Name: "ip-10-0-0-1"}},
		// Shapes explain does not serve are checked as plain paths.
		{http.MethodGet, "/explain/pod/default", authorizer.AttributesRecord{User: u, Verb: "get", Path: "/explain/pod/default"}},
		{http.MethodGet, "/explain/secret/default/x", authorizer.AttributesRecord{User: u, Verb: "get", Path: "/explain/secret/default/x"}},
		{http.MethodPost, "/explain/pod/default/web-0", authorizer.AttributesRecord{User: u, Verb: "post", Path: "/explain/pod/default/web-0"}},
	}
	for _, tc := range cases {
		got := Attributes(u, httptest.NewRequest(tc.method, tc.path, nil))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tc.method, tc.path, diff)
		}
	}
}
