package index

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/capstan-dev/capstan/api/v1"
)

const (
	// ProviderID indexes Nodes (spec.providerID) and NodeClaims
	// (status.providerID) by provider id.
	ProviderID = "spec.providerID"
	// NodeName indexes NodeClaims by status.nodeName.
	NodeName = "status.nodeName"
	// PodNode indexes Pods by the node they run on (spec.nodeName).
	PodNode = "spec.nodeName"
)

// Register adds the indexes to the manager's cache; call it once, before
// the controllers that list by them start.
func Register(ctx context.Context, mgr manager.Manager) error {
	indexer := mgr.GetFieldIndexer()
	if err := indexer.IndexField(ctx, &corev1.Node{}, ProviderID, func(o client.Object) []string {
		return []string{o.(*corev1.Node).Spec.ProviderID}
	}); err != nil {
		return fmt.Errorf("indexing nodes by providerID, %w", err)
	}
	if err := indexer.IndexField(ctx, &v1.NodeClaim{}, ProviderID, func(o client.Object) []string {
		return []string{o.(*v1.NodeClaim).Status.ProviderID}
	}); err != nil {
		return fmt.Errorf("indexing nodeclaims by providerID, %w", err)
	}
	if err := indexer.IndexField(ctx, &v1.NodeClaim{}, NodeName, func(o client.Object) []string {
		return []string{o.(*v1.NodeClaim).Status.NodeName}
	}); err != nil {
		return fmt.Errorf("indexing nodeclaims by node, %w", err)
	}
	if err := indexer.IndexField(ctx, &corev1.Pod{}, PodNode, func(o client.Object) []string {
		return []string{o.(*corev1.Pod).Spec.NodeName}
	}); err != nil {
		return fmt.Errorf("indexing pods by node, %w", err)
	}
	return nil
}

// NodeOf is the Node whose provider id is nc's, read through c (the
// ProviderID index); nil when nc has not launched or has no Node.
func NodeOf(ctx context.Context, c client.Reader, nc *v1.NodeClaim) (*corev1.Node, error) {
	if nc.Status.ProviderID == "" {
		return nil, nil
	}
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes, client.MatchingFields{ProviderID: nc.Status.ProviderID}); err != nil {
		return nil, fmt.Errorf("listing the node of nodeclaim %s, %w", nc.Name, err)
	}
	if len(nodes.Items) == 0 {
		return nil, nil
	}
	return &nodes.Items[0], nil
}
