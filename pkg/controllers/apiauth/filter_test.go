package apiauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-logr/logr"
	"github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-dev/capstan/pkg/controllers/apiauth"
	"github.com/capstan-dev/capstan/pkg/test"
)

// tokenFor creates a service account and returns a token the API server
// accepts for it.
func tokenFor(t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

func grant(t *testing.T, cs kubernetes.Interface, ns, sa string, rule rbacv1.PolicyRule, namespaced bool) {
	t.Helper()
	ctx := context.Background()
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}}
	name := sa + "-reader"
	if namespaced {
		if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return
	}
	name = ns + "-" + name
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Unauthenticated requests are refused; an authenticated user sees an
// explanation only of what RBAC lets it read, and metrics only with the
// non-resource grant.
func TestFilter(t *testing.T) {
	g := test.NewGomega(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	httpClient, err := rest.HTTPClientFor(env.Config)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	filter, err := apiauth.FilterProvider(env.Config, httpClient)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	handler, err := filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	srv := httptest.NewServer(handler)
	defer srv.Close()

	ns := test.Namespace(t, env.Client)
	stranger := tokenFor(t, cs, ns, "stranger")
	reader := tokenFor(t, cs, ns, "reader")
	grant(t, cs, ns, "reader", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}, true)
	grant(t, cs, ns, "reader", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}, false)

	status := func(token, path string) int {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name, token, path string
		want              int
	}{
		{"no token, metrics", "", "/metrics", http.StatusUnauthorized},
		{"no token, explain", "", "/explain/pod/" + ns + "/web", http.StatusUnauthorized},
		{"a bad token", "not-a-token", "/explain/pod/" + ns + "/web", http.StatusUnauthorized},
		{"no RBAC on pods", stranger, "/explain/pod/" + ns + "/web", http.StatusForbidden},
		{"no RBAC on metrics", stranger, "/metrics", http.StatusForbidden},
		{"get pods in the namespace", reader, "/explain/pod/" + ns + "/web", http.StatusOK},
		{"pods of another namespace", reader, "/explain/pod/kube-system/web", http.StatusForbidden},
		{"no RBAC on nodepools", reader, "/explain/nodepool/default", http.StatusForbidden},
		{"no RBAC on nodes", reader, "/explain/node/node-1", http.StatusForbidden},
		{"metrics granted", reader, "/metrics", http.StatusOK},
	} {
		if got := status(tc.token, tc.path); got != tc.want {
			t.Errorf("%s: GET %s answered %d, want %d", tc.name, tc.path, got, tc.want)
		}
	}
}
