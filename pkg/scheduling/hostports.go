package scheduling

import corev1 "k8s.io/api/core/v1"

// HostPort is a host port a pod binds, as kube-scheduler's NodePorts filter
// compares them: the same port and protocol conflict when either IP is
// unspecified or both are equal.
type HostPort struct {
	IP       string
	Port     int32
	Protocol corev1.Protocol
}

// PodHostPorts lists the host ports of a pod's containers and init
// containers.
func PodHostPorts(pod *corev1.Pod) []HostPort {
	var ports []HostPort
	add := func(containers []corev1.Container) {
		for _, c := range containers {
			for _, p := range c.Ports {
				if p.HostPort <= 0 {
					continue
				}
				proto := p.Protocol
				if proto == "" {
					proto = corev1.ProtocolTCP
				}
				ip := p.HostIP
				if ip == "" {
					ip = "0.0.0.0"
				}
				ports = append(ports, HostPort{IP: ip, Port: p.HostPort, Protocol: proto})
			}
		}
	}
	add(pod.Spec.InitContainers)
	add(pod.Spec.Containers)
	return ports
}

// Conflicts reports whether two host ports cannot share a node.
func (h HostPort) Conflicts(o HostPort) bool {
	if h.Port != o.Port || h.Protocol != o.Protocol {
		return false
	}
	return h.IP == o.IP || h.IP == "0.0.0.0" || o.IP == "0.0.0.0"
}

// PortsConflict reports whether any port of a conflicts with any of b.
func PortsConflict(a, b []HostPort) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Conflicts(y) {
				return true
			}
		}
	}
	return false
}
