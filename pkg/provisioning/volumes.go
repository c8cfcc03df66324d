package provisioning

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// Volumes are the storage objects pods' volumes refer to.
type Volumes struct {
	// Claims by "namespace/name".
	Claims map[string]*corev1.PersistentVolumeClaim
	// PersistentVolumes by name.
	PersistentVolumes map[string]*corev1.PersistentVolume
	// StorageClasses by name.
	StorageClasses map[string]*storagev1.StorageClass
}

// volumeRequirements are the zones (or other topology) a pod's volumes
// pin it to: a bound volume's node affinity, or for an unbound claim whose
// class binds on first consumer, the class's allowed topologies. Several
// alternative terms on one key become one In over their values; terms on
// different keys keep the first term only (a documented approximation).
func volumeRequirements(pod *corev1.Pod, vols Volumes) (scheduling.Requirements, error) {
	reqs := scheduling.Requirements{}
	for _, vol := range pod.Spec.Volumes {
		claimName := ""
		switch {
		case vol.PersistentVolumeClaim != nil:
			claimName = vol.PersistentVolumeClaim.ClaimName
		case vol.Ephemeral != nil:
			claimName = pod.Name + "-" + vol.Name
		default:
			continue
		}
		pvc, ok := vols.Claims[pod.Namespace+"/"+claimName]
		if !ok {
			if vol.Ephemeral != nil && vol.Ephemeral.VolumeClaimTemplate != nil {
				// Not created yet: its class decides, as for an unbound claim.
				pvc = &corev1.PersistentVolumeClaim{Spec: vol.Ephemeral.VolumeClaimTemplate.Spec}
			} else {
				return nil, fmt.Errorf("persistentvolumeclaim %s/%s not found", pod.Namespace, claimName)
			}
		}
		var terms []corev1.NodeSelectorTerm
		if pvc.Spec.VolumeName != "" {
			pv, ok := vols.PersistentVolumes[pvc.Spec.VolumeName]
			if !ok {
				return nil, fmt.Errorf("persistentvolume %s bound to claim %s/%s not found", pvc.Spec.VolumeName, pod.Namespace, claimName)
			}
			if pv.Spec.NodeAffinity != nil && pv.Spec.NodeAffinity.Required != nil {
				terms = pv.Spec.NodeAffinity.Required.NodeSelectorTerms
			}
		} else if pvc.Spec.StorageClassName != nil {
			sc, ok := vols.StorageClasses[*pvc.Spec.StorageClassName]
			if ok && sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
				terms = topologyTerms(sc.AllowedTopologies)
			}
		}
		reqs.Add(selectorRequirements(alternatives(terms))...)
	}
	return reqs, nil
}

func topologyTerms(topologies []corev1.TopologySelectorTerm) []corev1.NodeSelectorTerm {
	var terms []corev1.NodeSelectorTerm
	for _, t := range topologies {
		var term corev1.NodeSelectorTerm
		for _, e := range t.MatchLabelExpressions {
			term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{Key: e.Key, Operator: corev1.NodeSelectorOpIn, Values: e.Values})
		}
		terms = append(terms, term)
	}
	return terms
}

// alternatives folds ORed terms into requirements: exactly when every
// term is a single In on the same key (the usual zone list).
func alternatives(terms []corev1.NodeSelectorTerm) scheduling.Requirements {
	if len(terms) == 0 {
		return nil
	}
	sameKey := true
	var values []string
	for _, t := range terms {
		if len(t.MatchExpressions) != 1 || t.MatchExpressions[0].Operator != corev1.NodeSelectorOpIn || t.MatchExpressions[0].Key != terms[0].MatchExpressions[0].Key {
			sameKey = false
			break
		}
		values = append(values, t.MatchExpressions[0].Values...)
	}
	if sameKey && len(terms) > 1 {
		return scheduling.NewRequirements(scheduling.NewRequirement(terms[0].MatchExpressions[0].Key, corev1.NodeSelectorOpIn, values...))
	}
	return scheduling.NewNodeSelectorRequirements(terms[0].MatchExpressions...)
}
