package ec2endpoint

import (
	"encoding/json"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	k8sresource "k8s.io/apimachinery/pkg/api/resource"
)

// blockDevice is a launch template's EBS block device mapping.
type blockDevice struct {
	deviceName, volumeType, snapshotID, kmsKeyID string
	// volumeSize is in GiB, 0 for the snapshot's (the image's) size.
	volumeSize, iops, throughput   int
	encrypted, deleteOnTermination *bool
}

// parseBlockDevices reads LaunchTemplateData's BlockDeviceMapping list.
func parseBlockDevices(p params) ([]blockDevice, error) {
	var out []blockDevice
	for _, m := range p.items("BlockDeviceMapping") {
		d := blockDevice{deviceName: m.get("DeviceName"), volumeType: m.get("Ebs.VolumeType"), snapshotID: m.get("Ebs.SnapshotId"), kmsKeyID: m.get("Ebs.KmsKeyId")}
		for key, to := range map[string]*int{"Ebs.VolumeSize": &d.volumeSize, "Ebs.Iops": &d.iops, "Ebs.Throughput": &d.throughput} {
			if v := m.get(key); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return nil, errorf("InvalidParameterValue", "Invalid value '%s' for %s", v, key)
				}
				*to = n
			}
		}
		for key, to := range map[string]**bool{"Ebs.Encrypted": &d.encrypted, "Ebs.DeleteOnTermination": &d.deleteOnTermination} {
			if v := m.get(key); v != "" {
				b := v == "true"
				*to = &b
			}
		}
		// The EC2 API model's VolumeType values.
		if types := []string{"standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"}; d.volumeType != "" && !slices.Contains(types, d.volumeType) {
			return nil, errorf("InvalidParameterValue", "Value (%s) for parameter volumeType is invalid.", d.volumeType)
		}
		out = append(out, d)
	}
	return out, nil
}

// kubeletDevice is the device the node's kubelet keeps its root
// directory (and so its pods' ephemeral storage) on: AL2023's root
// volume, Bottlerocket's data volume (Bottlerocket's AMIs map a small OS
// volume on /dev/xvda and the data volume on /dev/xvdb).
func kubeletDevice(agent nodeAgent) string {
	if agent == agentBottlerocket {
		return "/dev/xvdb"
	}
	return "/dev/xvda"
}

// imageVolumeGiB is the size of every synthesized image's volumes, which
// an instance gets for a device its template does not size.
const imageVolumeGiB = 20

// nodeCapacity is what the kubelet of an instance of type it, launched
// from template data d on image img, reports beyond the simulated
// cloud's Node: pods as its user data's maxPods, else the VPC CNI's
// limit on the default network card (nodeadm's and Bottlerocket's own
// default); ephemeral storage as the volume its root directory is on;
// the extended resources its accelerators' device plugins advertise
// (acceleratorCapacity).
func (s *Server) nodeCapacity(it string, d templateData, img image) corev1.ResourceList {
	agent := agentOf(img)
	out := corev1.ResourceList{}
	pods, ok := userDataMaxPods(d.userData, agent)
	if !ok {
		n := networkLimits()[it]
		pods = n.cards[n.defaultCard]*(n.ips-1) + 2
	}
	out[corev1.ResourcePods] = *k8sresource.NewQuantity(int64(pods), k8sresource.DecimalSI)
	gib := imageVolumeGiB
	for _, bd := range d.blockDevices {
		if bd.deviceName == kubeletDevice(agent) && bd.volumeSize > 0 {
			gib = bd.volumeSize
		}
	}
	out[corev1.ResourceEphemeralStorage] = *k8sresource.NewQuantity(int64(gib)<<30, k8sresource.BinarySI)
	for name, n := range acceleratorCapacity(s.published[it]) {
		out[corev1.ResourceName(name)] = *k8sresource.NewQuantity(n, k8sresource.DecimalSI)
	}
	return out
}

// userDataMaxPods is the maxPods user data gives the kubelet: the last
// NodeConfig's kubelet.config.maxPods that sets it, or Bottlerocket's
// settings.kubernetes.max-pods; false when it sets none or does not
// read.
func userDataMaxPods(b64 string, agent nodeAgent) (int, bool) {
	raw, err := userDataBytes(b64)
	if err != nil {
		return 0, false
	}
	if agent == agentBottlerocket {
		kube, err := BottlerocketKubernetes(raw)
		if n, ok := kube["max-pods"].(int64); err == nil && ok {
			return int(n), true
		}
		return 0, false
	}
	docs, err := nodeConfigDocuments(raw)
	if err != nil {
		return 0, false
	}
	pods, found := 0, false
	for _, doc := range docs {
		cfg, err := decodeNodeConfig(doc)
		if err != nil {
			return 0, false
		}
		if v, ok := cfg.Spec.Kubelet.Config["maxPods"]; ok {
			if err := json.Unmarshal(v.Raw, &pods); err == nil {
				found = true
			}
		}
	}
	return pods, found
}

// reported is node with capacity as its kubelet reports it: each
// resource of capacity replaces the Node's, its allocatable keeping the
// reservation the Node had for it.
func reported(node *corev1.Node, capacity corev1.ResourceList) *corev1.Node {
	out := node.DeepCopy()
	if out.Status.Capacity == nil {
		out.Status.Capacity = corev1.ResourceList{}
	}
	if out.Status.Allocatable == nil {
		out.Status.Allocatable = corev1.ResourceList{}
	}
	for name, q := range capacity {
		alloc := q.DeepCopy()
		if old, ok := out.Status.Capacity[name]; ok {
			reserved := old.DeepCopy()
			reserved.Sub(out.Status.Allocatable[name])
			alloc.Sub(reserved)
			if alloc.Sign() < 0 {
				alloc = k8sresource.Quantity{}
			}
		}
		out.Status.Capacity[name] = q
		out.Status.Allocatable[name] = alloc
	}
	return out
}

// image is the image with id.
func (s *Server) image(id string) (image, bool) {
	images := s.imageList()
	i := slices.IndexFunc(images, func(img image) bool { return img.id == id })
	if i < 0 {
		return image{}, false
	}
	return images[i], true
}
