package effects

// RemoveLabels removes labels, by key, from an object: MergeMetadata only
// adds them, and a node whose capacity reservation ended loses its
// reservation's labels.
type RemoveLabels struct {
	Object Ref
	Keys   []string
}

func (RemoveLabels) isEffect() {}
