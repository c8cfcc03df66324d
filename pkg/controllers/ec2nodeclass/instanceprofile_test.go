package ec2nodeclass

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

func TestInstanceProfileName(t *testing.T) {
	for _, tc := range []struct {
		cluster, region, class, want string
	}{
		// FNV-1 (64-bit) of "us-west-2default" is 0x3874681344356699.
		{"my-cluster", "us-west-2", "default", fmt.Sprintf("my-cluster_%d", uint64(0x3874681344356699))},
		{"c", "", "", "c_14695981039346656037"}, // the FNV-1 offset basis: nothing hashed
	} {
		if got := InstanceProfileName(tc.cluster, tc.region, tc.class); got != tc.want {
			t.Errorf("InstanceProfileName(%q, %q, %q) = %s, want %s", tc.cluster, tc.region, tc.class, got, tc.want)
		}
	}
	// Each class and region its own; the same class the same name.
	a := InstanceProfileName("c", "us-west-2", "a")
	if a != InstanceProfileName("c", "us-west-2", "a") || a == InstanceProfileName("c", "us-west-2", "b") || a == InstanceProfileName("c", "us-east-1", "a") {
		t.Errorf("names collide or vary: %s", a)
	}
}

func TestInstanceProfileTagsAndPath(t *testing.T) {
	nc := &awsv1.EC2NodeClass{}
	nc.Name = "default"
	nc.Spec.Tags = map[string]string{"team": "ml", "eks:eks-cluster-name": "overridden"}
	want := map[string]string{"team": "ml", "kubernetes.io/cluster/c": "owned", "eks:eks-cluster-name": "c",
		"karpenter.k8s.aws/ec2nodeclass": "default", "topology.kubernetes.io/region": "us-west-2"}
	if diff := cmp.Diff(want, InstanceProfileTags(nc, "c", "us-west-2")); diff != "" {
		t.Errorf("tags (-want +got):\n%s", diff)
	}
	if nc.Spec.Tags["eks:eks-cluster-name"] != "overridden" {
		t.Error("InstanceProfileTags changed spec.tags")
	}
	tags := IAMTags(map[string]string{"b": "2", "a": "1"})
	if len(tags) != 2 || *tags[0].Key != "a" || *tags[1].Value != "2" {
		t.Errorf("IAMTags = %+v", tags)
	}
	if got := InstanceProfilePath("us-west-2", "c", "uid-1"); got != "/karpenter/us-west-2/c/uid-1/" {
		t.Errorf("path = %s", got)
	}
}

func TestRoleChanges(t *testing.T) {
	for _, tc := range []struct {
		name       string
		roles      []string
		role       string
		wantRemove []string
		wantAdd    bool
	}{
		{"new profile", nil, "r", nil, true},
		{"already holds it", []string{"r"}, "r", nil, false},
		{"another role", []string{"old"}, "r", []string{"old"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remove, add := RoleChanges(tc.roles, tc.role)
			if !cmp.Equal(remove, tc.wantRemove) || add != tc.wantAdd {
				t.Errorf("RoleChanges = %v, %v; want %v, %v", remove, add, tc.wantRemove, tc.wantAdd)
			}
		})
	}
	for in, want := range map[string]string{"KarpenterNodeRole": "KarpenterNodeRole", "team/KarpenterNodeRole": "KarpenterNodeRole", "/a/b/r": "r"} {
		if got := RoleName(in); got != want {
			t.Errorf("RoleName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNodeClaimsOf(t *testing.T) {
	claim := func(name, group, kind, class string) v1.NodeClaim {
		c := v1.NodeClaim{}
		c.Name = name
		c.Spec.NodeClassRef = &v1.NodeClassReference{Group: group, Kind: kind, Name: class}
		return c
	}
	claims := []v1.NodeClaim{
		claim("b", awsv1.Group, "EC2NodeClass", "default"),
		claim("a", awsv1.Group, "EC2NodeClass", "default"),
		claim("other-class", awsv1.Group, "EC2NodeClass", "gpu"),
		claim("sim", "sim.capstan.dev", "SimNodeClass", "default"),
		{},
	}
	if got := NodeClaimsOf(claims, "default"); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("NodeClaimsOf = %v", got)
	}
	if got := WaitingMessage([]string{"a", "b"}); got != "waiting on 2 NodeClaim(s) to terminate before deleting the instance profile: a, b" {
		t.Errorf("WaitingMessage = %s", got)
	}
	if got := WaitingMessage([]string{"1", "2", "3", "4", "5", "6", "7"}); got != "waiting on 7 NodeClaim(s) to terminate before deleting the instance profile: 1, 2, 3, 4, 5 and 2 more" {
		t.Errorf("WaitingMessage = %s", got)
	}
	withRole := &awsv1.EC2NodeClass{Spec: awsv1.EC2NodeClassSpec{Role: "r"}}
	if !NeedsFinalizer(withRole) || NeedsFinalizer(&awsv1.EC2NodeClass{}) {
		t.Error("NeedsFinalizer: only with spec.role")
	}
}

func TestIsRoleNotFound(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("adding role, %w", &smithy.GenericAPIError{Code: "NoSuchEntity", Message: "The role with name r cannot be found."}), true},
		{&smithy.GenericAPIError{Code: "NoSuchEntity", Message: "Instance Profile p cannot be found."}, false},
		{&smithy.GenericAPIError{Code: "AccessDenied", Message: "not authorized on role r"}, false},
		{errors.New("the role with name r cannot be found"), false},
		{nil, false},
	} {
		if got := IsRoleNotFound(tc.err); got != tc.want {
			t.Errorf("IsRoleNotFound(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	// A role that does not exist is not retried at once; other IAM
	// failures are.
	if (Found{InstanceProfileErr: fmt.Errorf("x, %w", &smithy.GenericAPIError{Code: "NoSuchEntity", Message: "The role with name r cannot be found."})}).Err() != nil {
		t.Error("Found.Err returns a role not found")
	}
	if (Found{InstanceProfileErr: &smithy.GenericAPIError{Code: "AccessDenied"}}).Err() == nil {
		t.Error("Found.Err drops AccessDenied")
	}
}

// An IAM failure after the profile was ready for the class's generation
// keeps it; for a new generation it does not.
func TestResolveInstanceProfileKept(t *testing.T) {
	nc := goodClass()
	nc.Spec.InstanceProfile, nc.Spec.Role = nil, "r"
	nc.Status.InstanceProfile = "c_1"
	nc.Status.Conditions = []metav1.Condition{{Type: awsv1.ConditionTypeInstanceProfileReady, Status: metav1.ConditionTrue,
		Reason: awsv1.ConditionTypeInstanceProfileReady, ObservedGeneration: nc.Generation}}
	found := Found{InstanceProfileErr: &smithy.GenericAPIError{Code: "Throttling", Message: "Rate exceeded"}}
	name, c := resolveInstanceProfile(nc, found)
	if name != "c_1" || c.Status != metav1.ConditionTrue {
		t.Errorf("kept: %s, %+v", name, c)
	}
	nc.Generation++
	name, c = resolveInstanceProfile(nc, found)
	if name != "" || c.Status != metav1.ConditionFalse || c.Reason != ReasonInstanceProfileCreationFailed {
		t.Errorf("new generation: %s, %+v", name, c)
	}
	// A missing role is never kept: the role changed.
	nc.Generation--
	name, c = resolveInstanceProfile(nc, Found{InstanceProfileErr: &smithy.GenericAPIError{Code: "NoSuchEntity", Message: "The role with name r cannot be found."}})
	if name != "" || c.Reason != ReasonRoleNotFound {
		t.Errorf("role not found: %s, %+v", name, c)
	}
}
