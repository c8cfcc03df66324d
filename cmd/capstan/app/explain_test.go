package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capstan-dev/capstan/pkg/explain"
)

// kubeconfigWithToken points KUBECONFIG at a kubeconfig whose user has a
// bearer token, for the test's duration.
func kubeconfigWithToken(t *testing.T, token string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: ` + token + `}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
}

// Over https, `capstan explain` presents the kubeconfig's credentials,
// verifies the controller's certificate unless told not to, and refuses
// an answer larger than MaxAnswerBytes.
func TestAskAuthenticatesOverHTTPS(t *testing.T) {
	kubeconfigWithToken(t, "s3cret")
	var gotAuth string
	big := false
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		if big {
			_, _ = w.Write([]byte(strings.Repeat(" ", MaxAnswerBytes+1)))
			return
		}
		_, _ = w.Write([]byte(`{"nodeClaim": "nc-1"}`))
	}))
	defer srv.Close()
	ctx := context.Background()

	var answer explain.Node
	q := question{path: "/explain/node/nc-1", kind: "node", name: "nc-1"}
	if err := ask(ctx, ExplainOptions{Controller: srv.URL}, q, &answer); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a self-signed certificate was trusted without being told to: %v", err)
	}
	if err := ask(ctx, ExplainOptions{Controller: srv.URL, ControllerInsecure: true}, q, &answer); err != nil {
		t.Fatal(err)
	}
	if gotAuth != "Bearer s3cret" || answer.NodeClaim != "nc-1" {
		t.Errorf("Authorization %q, answer %+v; want the kubeconfig's token and the answer", gotAuth, answer)
	}
	big = true
	if err := ask(ctx, ExplainOptions{Controller: srv.URL, ControllerInsecure: true}, q, &answer); err == nil || !strings.Contains(err.Error(), "more than 16 MiB") {
		t.Errorf("an oversized answer was read: %v", err)
	}
}
