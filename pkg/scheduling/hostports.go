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

// PodHostPorts lists the host ports of a pod's sidecar (restartable) init
// containers and containers. Like kube-scheduler, it leaves out the ports
// of regular init containers: they have exited before the pod runs.
func PodHostPorts(pod *corev1.Pod) []HostPort {
	var ports []HostPort
	add := func(containers []corev1.Container, sidecarsOnly bool) {
		for _, c := range containers {
			if sidecarsOnly && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways) {
				continue
			}
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
	add(pod.Spec.InitContainers, true)
	add(pod.Spec.Containers, false)
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
