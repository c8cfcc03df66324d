package rbac

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var files embed.FS

// Names of the generated roles.
const (
	// Controller is the ClusterRole, and the Role in the leader-election
	// namespace, of `capstan controller` whatever its cloud.
	Controller = "capstan"
	// SimKubelet is the ClusterRole the simulated cloud's kubelet needs on
	// top of Controller: bind it only when the controller runs on the
	// simulated cloud.
	SimKubelet = "capstan-sim-kubelet"
	// LeaderElectionNamespace is the namespace of the generated Role: the
	// default of --leader-election-namespace.
	LeaderElectionNamespace = "kube-system"
)

// Roles are the embedded roles, decoded.
type Roles struct {
	ClusterRoles []*rbacv1.ClusterRole
	Roles        []*rbacv1.Role
}

// Load decodes every embedded role; any other kind is an error.
func Load() (*Roles, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("listing embedded roles, %w", err)
	}
	roles := &Roles{}
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("reading roles %s, %w", name, err)
		}
		if err := roles.decode(name, data); err != nil {
			return nil, err
		}
	}
	return roles, nil
}

func (r *Roles) decode(name string, data []byte) error {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading roles %s, %w", name, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return fmt.Errorf("decoding roles %s, %w", name, err)
		}
		switch meta.Kind {
		case "ClusterRole":
			role := &rbacv1.ClusterRole{}
			if err := yaml.UnmarshalStrict(doc, role); err != nil {
				return fmt.Errorf("decoding clusterrole in %s, %w", name, err)
			}
			r.ClusterRoles = append(r.ClusterRoles, role)
		case "Role":
			role := &rbacv1.Role{}
			if err := yaml.UnmarshalStrict(doc, role); err != nil {
				return fmt.Errorf("decoding role in %s, %w", name, err)
			}
			r.Roles = append(r.Roles, role)
		default:
			return fmt.Errorf("unexpected kind %q in %s", meta.Kind, name)
		}
	}
}
