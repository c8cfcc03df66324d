//go:build e2e

package security

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/test"
)

// insecure trusts the controller's self-signed certificate: what is
// tested is who may ask, not the certificate.
var insecure = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

func get(g gomega.Gomega, token, path string) int {
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := insecure.Do(req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	_ = resp.Body.Close()
	return resp.StatusCode
}

func serviceAccountToken(g gomega.Gomega, cs kubernetes.Interface, ns, name string) string {
	ctx := context.Background()
	_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return tr.Status.Token
}

// tokenKubeconfig is the cluster's kubeconfig with token as its user's
// only credential.
func tokenKubeconfig(g gomega.Gomega, t *testing.T, token string) string {
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for _, a := range cfg.AuthInfos {
		a.ClientCertificate, a.ClientCertificateData, a.ClientKey, a.ClientKeyData = "", nil, "", nil
		a.Token = token
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(clientcmd.WriteToFile(*cfg, path)).To(gomega.Succeed())
	return path
}

// Nobody reads metrics or explanations without a token the API server
// accepts; a user sees an explanation only of a pod RBAC lets it read, and
// `capstan explain` gets it with the user's kubeconfig.
func TestSecureEndpoints(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	ns := test.Namespace(t, cluster.Client)
	pod := test.Pod(ns)
	g.Expect(cluster.Client.Create(ctx, pod)).To(gomega.Succeed())

	// The controller is up once it refuses an anonymous request.
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(get(g, "", "/metrics")).To(gomega.Equal(http.StatusUnauthorized))
	}).WithTimeout(time.Minute).Should(gomega.Succeed())
	g.Expect(get(g, "", "/explain/pod/"+ns+"/"+pod.Name)).To(gomega.Equal(http.StatusUnauthorized))

	stranger := serviceAccountToken(g, cs, ns, "stranger")
	g.Expect(get(g, stranger, "/explain/pod/"+ns+"/"+pod.Name)).To(gomega.Equal(http.StatusForbidden))
	g.Expect(get(g, stranger, "/metrics")).To(gomega.Equal(http.StatusForbidden))

	reader := serviceAccountToken(g, cs, ns, "reader")
	_, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: ns}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(get(g, reader, "/explain/pod/"+ns+"/"+pod.Name)).To(gomega.Equal(http.StatusOK))
	}).WithTimeout(30 * time.Second).Should(gomega.Succeed())
	g.Expect(get(g, reader, "/explain/nodepool/default")).To(gomega.Equal(http.StatusForbidden))

	root, err := test.ModuleRoot()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	cmd := exec.Command(filepath.Join(root, "bin", "capstan"), "explain", "pod", ns+"/"+pod.Name, "-o", "json",
		"--controller-address", base, "--controller-insecure-skip-tls-verify")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+tokenKubeconfig(g, t, reader))
	out, err := cmd.Output()
	g.Expect(err).NotTo(gomega.HaveOccurred(), "capstan explain: %s", out)
	var answer explain.Pod
	g.Expect(json.Unmarshal(out, &answer)).To(gomega.Succeed())
	g.Expect(answer.Pod).To(gomega.Equal(ns + "/" + pod.Name))
}
