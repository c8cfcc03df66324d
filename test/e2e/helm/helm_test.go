//go:build e2e

package helm

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/config/rbac"
	"github.com/capstan-dev/capstan/pkg/test"
)

const (
	release   = "capstan"
	namespace = "capstan-system"
	// fieldOwner applies the chart, as `kubectl apply --server-side` would.
	fieldOwner = client.FieldOwner("capstan-e2e-helm")
)

// rendered is the chart as `helm template` renders it, by kind and name.
type rendered map[string]*unstructured.Unstructured

func (r rendered) get(t *testing.T, kind, name string, into any) {
	t.Helper()
	u, ok := r[kind+"/"+name]
	if !ok {
		t.Fatalf("the chart renders no %s %s", kind, name)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatalf("converting %s %s, %v", kind, name, err)
	}
}

// render runs `helm template` on the chart with testdata/values.yaml.
func render(t *testing.T, root string) (rendered, []*unstructured.Unstructured) {
	t.Helper()
	values, err := filepath.Abs(filepath.Join("testdata", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(root, "bin", "helm"), "template", release, filepath.Join(root, "charts", "capstan"),
		"--namespace", namespace, "--include-crds", "--values", values)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rendering the chart (bin/helm is built by make tools), %v: %s", err, stderr.String())
	}
	objs := rendered{}
	var all []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding the rendered chart, %v", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		objs[u.GetKind()+"/"+u.GetName()] = u
		all = append(all, u)
	}
	return objs, all
}

// The chart passes a server-side dry run whole; installed, its RBAC is the
// generated roles and no more, and `capstan controller` with the chart's
// flags and its ServiceAccount's token provisions and disrupts a workload.
func TestChartInstallsAndItsRBACSuffices(t *testing.T) {
	g := test.NewGomega(t)
	ctx := context.Background()
	root, err := test.ModuleRoot()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	objs, all := render(t, root)

	// Exactly the generated roles: the chart grants nothing else.
	roles, err := rbac.Load()
	g.Expect(err).NotTo(gomega.HaveOccurred())
	kinds := map[string]int{}
	for _, u := range all {
		kinds[u.GetKind()]++
	}
	g.Expect(kinds).To(gomega.Equal(map[string]int{
		"CustomResourceDefinition": 7, "ServiceAccount": 1, "ClusterRole": 2, "ClusterRoleBinding": 2, "Role": 1, "RoleBinding": 1,
		"ConfigMap": 2, "Deployment": 1, "PodDisruptionBudget": 1, "Service": 1,
	}), "the chart renders these kinds and no other RBAC")
	for _, want := range roles.ClusterRoles {
		got := &rbacv1.ClusterRole{}
		name := map[string]string{rbac.Controller: release, rbac.SimKubelet: release + "-sim-kubelet"}[want.Name]
		objs.get(t, "ClusterRole", name, got)
		g.Expect(got.Rules).To(gomega.Equal(want.Rules), "ClusterRole %s is the generated %s", name, want.Name)
	}
	g.Expect(roles.Roles).To(gomega.HaveLen(1))
	leader := &rbacv1.Role{}
	objs.get(t, "Role", release, leader)
	g.Expect(leader.Namespace).To(gomega.Equal(namespace))
	g.Expect(leader.Rules).To(gomega.Equal(roles.Roles[0].Rules))

	// kubectl apply --dry-run=server of everything the chart renders.
	g.Expect(cluster.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(gomega.Succeed())
	for _, u := range all {
		g.Expect(cluster.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), fieldOwner, client.ForceOwnership, client.DryRunAll)).
			To(gomega.Succeed(), "dry run of %s %s", u.GetKind(), u.GetName())
	}
	// Installed for real: the identity and its RBAC, and the cloud profile.
	// The Deployment is not: the controller runs out of cluster, as the
	// local cluster has no kubelet to run its image.
	for _, u := range all {
		switch u.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap":
			g.Expect(cluster.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), fieldOwner, client.ForceOwnership)).
				To(gomega.Succeed(), "applying %s %s", u.GetKind(), u.GetName())
		}
	}
	sa := &corev1.ServiceAccount{}
	objs.get(t, "ServiceAccount", release, sa)
	g.Expect(sa.Annotations).To(gomega.HaveKeyWithValue("example.com/cloud-role", "capstan-e2e"))

	metrics, health := startController(t, g, root, objs)
	g.Eventually(func(g gomega.Gomega) {
		resp, err := http.Get(health + "/readyz")
		g.Expect(err).NotTo(gomega.HaveOccurred())
		_ = resp.Body.Close()
		g.Expect(resp.StatusCode).To(gomega.Equal(http.StatusOK))
	}).WithTimeout(time.Minute).Should(gomega.Succeed())
	// It leads through the Lease the chart's Role names, in the chart's
	// namespace.
	g.Eventually(func(g gomega.Gomega) {
		lease := &coordinationv1.Lease{}
		g.Expect(cluster.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "capstan-controller"}, lease)).To(gomega.Succeed())
		g.Expect(lease.Spec.HolderIdentity).NotTo(gomega.BeNil())
	}).WithTimeout(time.Minute).Should(gomega.Succeed())

	provisionAndDisrupt(t, g)

	// Prometheus's view: a token allowed /metrics reads what the
	// dashboard charts.
	body := scrape(t, g, metrics)
	for _, m := range []string{"capstan_nodeclaims_created_total{", "capstan_disruption_decisions_total{", "capstan_nodeclaims_disrupted_total{",
		"capstan_provisioner_pending_pods ", "capstan_disruption_eligible_nodes{"} {
		g.Expect(body).To(gomega.ContainSubstring(m))
	}
	// Nothing the controller asked the API server was refused.
	log, err := os.ReadFile(filepath.Join(cluster.Logs(), "capstan.log"))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	g.Expect(strings.ToLower(string(log))).NotTo(gomega.ContainSubstring("forbidden"))
}

// startController runs bin/capstan controller with the chart's
// Deployment's arguments, changing only what belongs to a pod (files and
// ports), as the chart's ServiceAccount. It returns the metrics and health
// base URLs.
func startController(t *testing.T, g gomega.Gomega, root string, objs rendered) (string, string) {
	t.Helper()
	ctx := context.Background()
	deploy := &appsv1.Deployment{}
	objs.get(t, "Deployment", release, deploy)
	g.Expect(deploy.Spec.Template.Spec.ServiceAccountName).To(gomega.Equal(release))
	profile := &corev1.ConfigMap{}
	objs.get(t, "ConfigMap", release+"-cloud-profile", profile)
	profilePath := filepath.Join(cluster.Root, "helm-cloud-profile.yaml")
	g.Expect(os.WriteFile(profilePath, []byte(profile.Data["cloud-profile.yaml"]), 0o600)).To(gomega.Succeed())

	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	token, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, release,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	kubeconfig := tokenKubeconfig(g, token.Status.Token, filepath.Join(cluster.Root, "helm-capstan.kubeconfig"))

	metricsAddr, healthAddr := freeAddr(g), freeAddr(g)
	var args []string
	for _, a := range deploy.Spec.Template.Spec.Containers[0].Args {
		flag, _, _ := strings.Cut(a, "=")
		switch flag {
		case "--cloud-profile":
			a = flag + "=" + profilePath
		case "--sim-state":
			a = flag + "=" + filepath.Join(cluster.Root, "helm-sim-state.json")
		case "--metrics-bind-address":
			a = flag + "=" + metricsAddr
		case "--health-probe-bind-address":
			a = flag + "=" + healthAddr
		}
		args = append(args, a)
	}
	g.Expect(args).To(gomega.ContainElements("--leader-election-namespace="+namespace, "--metrics-secure=true", "--cloud-profile="+profilePath))
	g.Expect(cluster.StartProcess("capstan", filepath.Join(root, "bin", "capstan"), []string{"KUBECONFIG=" + kubeconfig}, args...)).To(gomega.Succeed())
	return "https://" + metricsAddr + "/metrics", "http://" + healthAddr
}

// tokenKubeconfig writes the cluster's kubeconfig with token as its user's
// only credential.
func tokenKubeconfig(g gomega.Gomega, token, path string) string {
	cfg, err := clientcmd.LoadFromFile(cluster.Kubeconfig)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	for _, a := range cfg.AuthInfos {
		a.ClientCertificate, a.ClientCertificateData, a.ClientKey, a.ClientKeyData = "", nil, "", nil
		a.Token = token
	}
	g.Expect(clientcmd.WriteToFile(*cfg, path)).To(gomega.Succeed())
	return path
}

func freeAddr(g gomega.Gomega) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// provisionAndDisrupt scales a Deployment up, which gets nodes, then to
// zero, whose empty nodes are disrupted.
func provisionAndDisrupt(t *testing.T, g gomega.Gomega) {
	t.Helper()
	ctx := context.Background()
	c := cluster.Client
	ns := test.Namespace(t, c)
	snc := test.SimNodeClass()
	np := test.NodePool(func(np *v1.NodePool) {
		np.Spec.Template.Spec.NodeClassRef.Name = snc.Name
		np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmptyOrUnderutilized
		np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("0s")
	})
	g.Expect(c.Create(ctx, snc)).To(gomega.Succeed())
	g.Expect(c.Create(ctx, np)).To(gomega.Succeed())
	t.Cleanup(func() {
		_ = c.Delete(ctx, np)
		_ = c.Delete(ctx, snc)
	})
	labels := map[string]string{"app": "web"}
	pod := test.Pod(ns, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}
	})
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](4), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: pod.Spec},
		},
	}
	g.Expect(c.Create(ctx, deploy)).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(test.RunningPods(c, ns)).To(gomega.HaveLen(4))
	}).WithTimeout(90 * time.Second).Should(gomega.Succeed())
	claims := test.NodeClaimsOf(c, np.Name)
	g.Expect(claims).NotTo(gomega.BeEmpty())
	used := map[string]bool{}
	for _, p := range test.RunningPods(c, ns) {
		used[p.Spec.NodeName] = true
	}
	for _, nc := range claims {
		g.Expect(used).To(gomega.HaveKey(nc.Status.NodeName), "nodeclaim %s launched a node no pod uses", nc.Name)
	}

	g.Expect(c.Patch(ctx, deploy, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":0}}`)))).To(gomega.Succeed())
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(test.NodeClaimsOf(c, np.Name)).To(gomega.BeEmpty())
		nodes := &corev1.NodeList{}
		g.Expect(c.List(ctx, nodes, client.MatchingLabels{v1.NodePoolLabelKey: np.Name})).To(gomega.Succeed())
		g.Expect(nodes.Items).To(gomega.BeEmpty())
	}).WithTimeout(90 * time.Second).Should(gomega.Succeed())
}

// scrape reads the controller's metrics as Prometheus would: with a token
// of its own ServiceAccount, allowed get on /metrics.
func scrape(t *testing.T, g gomega.Gomega, url string) string {
	t.Helper()
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cluster.Config)
	const name = "prometheus"
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "capstan-e2e-metrics-reader"},
			Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "capstan-e2e-metrics-reader"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "capstan-e2e-metrics-reader"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: namespace}}},
	}
	for _, o := range objs {
		g.Expect(cluster.Client.Create(ctx, o)).To(gomega.Succeed())
	}
	token, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	// The controller's certificate is self-signed by default.
	insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback scrape of a self-signed test endpoint
	var body string
	g.Eventually(func(g gomega.Gomega) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+token.Status.Token)
		resp, err := insecure.Do(req)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		defer func() { _ = resp.Body.Close() }()
		data, err := io.ReadAll(resp.Body)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(resp.StatusCode).To(gomega.Equal(http.StatusOK), "scrape: %s", data)
		body = string(data)
	}).Should(gomega.Succeed())
	return body
}
