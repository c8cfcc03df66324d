package effects

import v1 "github.com/capstan-dev/capstan/api/v1"

// SetNodePoolStatus replaces a NodePool's status (the NodePool
// controller's step decides all of it).
type SetNodePoolStatus struct {
	Name   string
	Status v1.NodePoolStatus
}

func (SetNodePoolStatus) isEffect() {}

// NodePoolRef refers to a NodePool.
func NodePoolRef(name string) Ref { return Ref{Kind: KindNodePool, Name: name} }
