package rbac_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/capstan-dev/capstan/config/rbac"
)

// allowed is every permission Capstan's generated roles may grant, and why.
// A rule the markers grant beyond this fails the test, and so does an
// allowlisted rule they no longer grant: widen this table only with the
// client call that needs it.
var allowed = []struct {
	role          string // "ClusterRole/name" or "Role/namespace/name"
	apiGroup      string
	resource      string
	resourceNames []string
	verbs         []string
	reason        string
}{
	{"ClusterRole/capstan", "", "pods", nil, []string{"get", "list", "watch", "delete"},
		"the cluster snapshot reads pending and bound pods; termination deletes a pod whose eviction is refused past its grace period"},
	{"ClusterRole/capstan", "", "pods/eviction", nil, []string{"create"},
		"termination drains a node by evicting its pods, honouring PodDisruptionBudgets"},
	{"ClusterRole/capstan", "", "namespaces", nil, []string{"get", "list", "watch"},
		"the snapshot matches pod affinity namespace selectors"},
	{"ClusterRole/capstan", "", "persistentvolumeclaims", nil, []string{"get", "list", "watch"},
		"volume topology and attach limits of pending pods"},
	{"ClusterRole/capstan", "", "persistentvolumes", nil, []string{"get", "list", "watch"},
		"zones of bound volumes pending pods must follow"},
	{"ClusterRole/capstan", "storage.k8s.io", "volumeattachments", nil, []string{"get", "list", "watch"},
		"termination waits for a node's volumes to detach before the instance goes"},
	{"ClusterRole/capstan", "storage.k8s.io", "storageclasses", nil, []string{"get", "list", "watch"},
		"zones allowed for volumes not yet provisioned"},
	{"ClusterRole/capstan", "apps", "daemonsets", nil, []string{"get", "list", "watch"},
		"daemonset overhead on new nodes"},
	{"ClusterRole/capstan", "", "nodes", nil, []string{"get", "list", "watch", "patch", "delete"},
		"the snapshot reads nodes; the nodeclaim controller patches synced labels and taints, termination taints, deletes and releases (finalizer) them; never create, update or status (the kubelet's)"},
	{"ClusterRole/capstan", "", "events", nil, []string{"create", "patch"},
		"core/v1 events of leader election and the event recorder; patch aggregates repeats"},
	{"ClusterRole/capstan", "events.k8s.io", "events", nil, []string{"create", "patch"},
		"events.k8s.io/v1 events of the controllers' recorder; patch updates an event series"},
	{"ClusterRole/capstan", "karpenter.sh", "nodeclaims", nil, []string{"get", "list", "watch", "create", "patch", "delete"},
		"the provisioner creates NodeClaims; lifecycle and termination patch finalizers and fields; lifecycle, termination and garbage collection delete them"},
	{"ClusterRole/capstan", "karpenter.sh", "nodeclaims/status", nil, []string{"patch"},
		"launch, registration and initialization conditions, patched"},
	{"ClusterRole/capstan", "karpenter.sh", "nodepools", nil, []string{"get", "list", "watch", "patch"},
		"NodePools are read and annotated with their hash; users create and delete them, Capstan never does"},
	{"ClusterRole/capstan", "karpenter.sh", "nodepools/status", nil, []string{"patch"},
		"NodePool resources and conditions, patched"},
	{"ClusterRole/capstan", "karpenter.sh", "nodeoverlays", nil, []string{"get", "list", "watch"},
		"NodeOverlays are read to adjust the instance types every decision sees; users create and delete them"},
	{"ClusterRole/capstan", "karpenter.sh", "nodeoverlays/status", nil, []string{"patch"},
		"NodeOverlay ValidationSucceeded and Ready conditions, patched"},
	{"ClusterRole/capstan", "sim.capstan.dev", "simnodeclasses", nil, []string{"get", "list", "watch"},
		"the simulated cloud's NodeClass, read by the cloud and its controller"},
	{"ClusterRole/capstan", "sim.capstan.dev", "simnodeclasses/status", nil, []string{"patch"},
		"the simnodeclass controller patches reservations and conditions"},
	{"ClusterRole/capstan", "karpenter.k8s.aws", "ec2nodeclasses", nil, []string{"get", "list", "watch", "patch"},
		"the AWS provider's NodeClass, read by the provider, its controller and the NodePool controller; " +
			"the ec2nodeclass controller patches the termination finalizer onto classes with spec.role and off once their instance profile is deleted"},
	{"ClusterRole/capstan", "karpenter.k8s.aws", "ec2nodeclasses/status", nil, []string{"patch"},
		"the ec2nodeclass controller patches resolved subnets, security groups, AMIs, reservations and conditions"},
	{"ClusterRole/capstan", "llmaz.io", "openmodels", nil, []string{"get", "list", "watch"},
		"model flavors of llmaz pods"},
	{"ClusterRole/capstan", "autoscaling.x-k8s.io", "provisioningrequests", nil, []string{"get", "list", "watch"},
		"the provisioningrequest controller answers ProvisioningRequests (docs/batch.md)"},
	{"ClusterRole/capstan", "autoscaling.x-k8s.io", "provisioningrequests/status", nil, []string{"patch"},
		"the provisioningrequest controller sets their conditions"},
	{"ClusterRole/capstan", "", "podtemplates", nil, []string{"get", "list", "watch"},
		"a ProvisioningRequest's pod sets name PodTemplates"},
	{"ClusterRole/capstan", "scheduling.k8s.io", "podgroups", nil, []string{"get", "list", "watch"},
		"gangs' min counts: the Workload API's PodGroups, where the API server serves them (docs/batch.md)"},
	{"ClusterRole/capstan", "scheduling.x-k8s.io", "podgroups", nil, []string{"get", "list", "watch"},
		"gangs' min counts: scheduler-plugins' PodGroups, where its CRD is installed (docs/batch.md)"},
	{"ClusterRole/capstan", "policy", "poddisruptionbudgets", nil, []string{"get", "list", "watch"},
		"the snapshot carries PDBs: voluntary disruption leaves a node alone while a PDB would refuse evicting its pods"},
	{"ClusterRole/capstan", "autoscaling.x-k8s.io", "capacitybuffers", nil, []string{"get", "list", "watch"},
		"CapacityBuffers are sized into virtual pods every solve keeps capacity for (docs/batch.md)"},
	{"ClusterRole/capstan", "autoscaling.x-k8s.io", "capacitybuffers/status", nil, []string{"patch"},
		"the capacitybuffer controller writes each buffer's replicas and conditions"},
	{"ClusterRole/capstan", "", "podtemplates", nil, []string{"get", "list", "watch"},
		"a CapacityBuffer's podTemplateRef is the shape of its chunks"},
	{"ClusterRole/capstan", "apps", "deployments", nil, []string{"get", "list", "watch"},
		"a CapacityBuffer's scalableRef: its pod template is the shape of the buffer's chunks"},
	{"ClusterRole/capstan", "apps", "statefulsets", nil, []string{"get", "list", "watch"},
		"a CapacityBuffer's scalableRef: its pod template is the shape of the buffer's chunks"},
	{"ClusterRole/capstan", "apps", "replicasets", nil, []string{"get", "list", "watch"},
		"a CapacityBuffer's scalableRef: its pod template is the shape of the buffer's chunks"},
	{"ClusterRole/capstan", "apps", "deployments/scale", nil, []string{"get"},
		"a CapacityBuffer's percentage is of its scalableRef's replicas, read through the scale subresource"},
	{"ClusterRole/capstan", "apps", "statefulsets/scale", nil, []string{"get"},
		"a CapacityBuffer's percentage is of its scalableRef's replicas, read through the scale subresource"},
	{"ClusterRole/capstan", "apps", "replicasets/scale", nil, []string{"get"},
		"a CapacityBuffer's percentage is of its scalableRef's replicas, read through the scale subresource"},
	{"ClusterRole/capstan", "authentication.k8s.io", "tokenreviews", nil, []string{"create"},
		"--metrics-secure: the bearer token of a request to metrics or explain is checked with the API server"},
	{"ClusterRole/capstan", "authorization.k8s.io", "subjectaccessreviews", nil, []string{"create"},
		"--metrics-secure: whether the requester may read what it asks (the pod, NodePool or node explained, or /metrics)"},
	{"ClusterRole/capstan", "", "services", []string{"kube-dns"}, []string{"get"},
		"the AWS provider gives nodes the kube-dns Service's cluster IP as their cluster DNS address, as the reference does"},
	{"Role/kube-system/capstan", "coordination.k8s.io", "leases", nil, []string{"create"},
		"leader election creates its Lease the first time; RBAC cannot limit create by name, and create cannot overwrite another component's Lease"},
	{"Role/kube-system/capstan", "coordination.k8s.io", "leases", []string{"capstan-controller"}, []string{"get", "update"},
		"leader election reads and renews its own Lease (LeaderElectionID) only, never kube-scheduler's, kube-controller-manager's or node heartbeats"},
	{"ClusterRole/capstan-sim-kubelet", "", "nodes", nil, []string{"create"},
		"the simulated cloud's kubelet registers a launched instance's Node"},
	{"ClusterRole/capstan-sim-kubelet", "", "nodes/status", nil, []string{"patch"},
		"the simulated cloud's kubelet reports the Node's capacity and allocatable"},
}

// grant is one (role, group, resource, names) with its verbs.
type grant struct {
	role, apiGroup, resource, resourceNames string
}

func TestRolesMatchAllowlist(t *testing.T) {
	roles, err := rbac.Load()
	if err != nil {
		t.Fatal(err)
	}
	got := map[grant][]string{}
	add := func(t *testing.T, role string, rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			if len(r.NonResourceURLs) > 0 {
				t.Errorf("%s grants non-resource URLs %v", role, r.NonResourceURLs)
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					k := grant{role, g, res, strings.Join(r.ResourceNames, ",")}
					got[k] = append(got[k], r.Verbs...)
				}
			}
		}
	}
	for _, r := range roles.ClusterRoles {
		if r.AggregationRule != nil {
			t.Errorf("ClusterRole/%s aggregates other roles", r.Name)
		}
		add(t, "ClusterRole/"+r.Name, r.Rules)
	}
	for _, r := range roles.Roles {
		add(t, fmt.Sprintf("Role/%s/%s", r.Namespace, r.Name), r.Rules)
	}

	want := map[grant][]string{}
	for _, a := range allowed {
		if a.reason == "" {
			t.Errorf("allowlisted %s %s/%s has no reason", a.role, a.apiGroup, a.resource)
		}
		k := grant{a.role, a.apiGroup, a.resource, strings.Join(a.resourceNames, ",")}
		want[k] = append(want[k], a.verbs...)
	}
	for k, verbs := range got {
		verbs = sorted(verbs)
		allowedVerbs := sorted(want[k])
		for _, v := range verbs {
			if v == rbacv1.VerbAll || k.apiGroup == rbacv1.APIGroupAll || k.resource == rbacv1.ResourceAll {
				t.Errorf("%s grants a wildcard: %q on %q/%q", k.role, v, k.apiGroup, k.resource)
			}
			if !slices.Contains(allowedVerbs, v) {
				t.Errorf("%s grants %s on %s (group %q, names %q), not in the allowlist", k.role, v, k.resource, k.apiGroup, k.resourceNames)
			}
		}
	}
	for k, verbs := range want {
		for _, v := range sorted(verbs) {
			if !slices.Contains(got[k], v) {
				t.Errorf("allowlisted %s on %s (group %q, names %q) is not granted by %s: drop it from the allowlist", v, k.resource, k.apiGroup, k.resourceNames, k.role)
			}
		}
	}
}

func TestRoleNames(t *testing.T) {
	roles, err := rbac.Load()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range roles.ClusterRoles {
		names = append(names, "ClusterRole/"+r.Name)
	}
	for _, r := range roles.Roles {
		names = append(names, "Role/"+r.Namespace+"/"+r.Name)
	}
	want := []string{
		"ClusterRole/" + rbac.Controller, "ClusterRole/" + rbac.SimKubelet,
		"Role/" + rbac.LeaderElectionNamespace + "/" + rbac.Controller,
	}
	if !slices.Equal(sorted(names), sorted(want)) {
		t.Errorf("roles %v, want %v", sorted(names), sorted(want))
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}
