package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-dev/capstan/config/rbac"
)

// The checked-in chart holds what chartgen writes from the checked-in
// CRDs and roles.
func TestChartIsUpToDate(t *testing.T) {
	root := filepath.Join("..", "..")
	out := t.TempDir()
	if err := run(filepath.Join(root, "config", "crd"), out); err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(root, "charts", "capstan")
	for _, dir := range []string{"crds", "files"} {
		got, err := os.ReadDir(filepath.Join(out, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range got {
			want, err := os.ReadFile(filepath.Join(out, dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			have, err := os.ReadFile(filepath.Join(chart, dir, e.Name()))
			if err != nil || string(have) != string(want) {
				t.Errorf("charts/capstan/%s/%s is stale (run make generate): %v", dir, e.Name(), err)
			}
		}
	}
}

func TestRulesRefusesUnexpectedRoles(t *testing.T) {
	role := func(name string) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}}}}
	}
	leader := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: rbac.Controller, Namespace: rbac.LeaderElectionNamespace}, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}}}}
	for _, tc := range []struct {
		name  string
		roles *rbac.Roles
		want  string
	}{
		{"all", &rbac.Roles{ClusterRoles: []*rbacv1.ClusterRole{role(rbac.Controller), role(rbac.SimKubelet)}, Roles: []*rbacv1.Role{leader}}, ""},
		{"sim kubelet missing", &rbac.Roles{ClusterRoles: []*rbacv1.ClusterRole{role(rbac.Controller)}, Roles: []*rbacv1.Role{leader}}, "incomplete"},
		{"unknown cluster role", &rbac.Roles{ClusterRoles: []*rbacv1.ClusterRole{role(rbac.Controller), role(rbac.SimKubelet), role("other")}, Roles: []*rbacv1.Role{leader}}, "unexpected generated ClusterRole other"},
		{"role elsewhere", &rbac.Roles{ClusterRoles: []*rbacv1.ClusterRole{role(rbac.Controller), role(rbac.SimKubelet)},
			Roles: []*rbacv1.Role{{ObjectMeta: metav1.ObjectMeta{Name: rbac.Controller, Namespace: "default"}}}}, "unexpected generated Role default/capstan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rules(tc.roles)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("rules: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("rules error %v, want %q", err, tc.want)
			}
		})
	}
}
