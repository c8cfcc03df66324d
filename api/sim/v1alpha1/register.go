package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the API group of the simulated cloud.
const Group = "sim.capstan.dev"

// Labels the simulated cloud sets on the Nodes its instances register.
const (
	// LabelKubelet names what runs the node's kubelet; "kwok" nodes are
	// kept Ready and run their pods by kwok in the local cluster, so a test
	// can stop one node's heartbeat by dropping the label.
	LabelKubelet = Group + "/kubelet"
	KubeletKwok  = "kwok"
)

// SimNodeClassKind is the kind a NodePool's nodeClassRef names for the
// simulated cloud.
const SimNodeClassKind = "SimNodeClass"

// SchemeGroupVersion is the group and version of the types in this package.
var SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: "v1alpha1"}

// AddToScheme registers SimNodeClass with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &SimNodeClass{}, &SimNodeClassList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
