package scheduling

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestPodHostPorts(t *testing.T) {
	withPorts := func(c corev1.Container, ports ...corev1.ContainerPort) corev1.Container {
		c.Ports = ports
		return c
	}
	cases := []struct {
		name string
		spec corev1.PodSpec
		want []HostPort
	}{
		{name: "no containers"},
		{
			name: "container ports without a host port are ignored",
			spec: corev1.PodSpec{Containers: []corev1.Container{
				withPorts(corev1.Container{Name: "app"}, corev1.ContainerPort{ContainerPort: 8080}, corev1.ContainerPort{ContainerPort: 53, Protocol: corev1.ProtocolUDP}),
			}},
		},
		{
			name: "protocol defaults to TCP and IP to 0.0.0.0",
			spec: corev1.PodSpec{Containers: []corev1.Container{
				withPorts(corev1.Container{Name: "app"}, corev1.ContainerPort{ContainerPort: 80, HostPort: 8080}),
			}},
			want: []HostPort{{IP: "0.0.0.0", Port: 8080, Protocol: corev1.ProtocolTCP}},
		},
		{
			name: "explicit protocol and IP are kept",
			spec: corev1.PodSpec{Containers: []corev1.Container{
				withPorts(corev1.Container{Name: "dns"},
					corev1.ContainerPort{ContainerPort: 53, HostPort: 53, Protocol: corev1.ProtocolUDP, HostIP: "10.0.0.1"},
					corev1.ContainerPort{ContainerPort: 53, HostPort: 53, Protocol: corev1.ProtocolSCTP},
				),
			}},
			want: []HostPort{
				{IP: "10.0.0.1", Port: 53, Protocol: corev1.ProtocolUDP},
				{IP: "0.0.0.0", Port: 53, Protocol: corev1.ProtocolSCTP},
			},
		},
		{
			name: "every container's ports, in order",
			spec: corev1.PodSpec{Containers: []corev1.Container{
				withPorts(corev1.Container{Name: "a"}, corev1.ContainerPort{HostPort: 1}, corev1.ContainerPort{ContainerPort: 2}),
				withPorts(corev1.Container{Name: "b"}, corev1.ContainerPort{HostPort: 3}),
			}},
			want: []HostPort{
				{IP: "0.0.0.0", Port: 1, Protocol: corev1.ProtocolTCP},
				{IP: "0.0.0.0", Port: 3, Protocol: corev1.ProtocolTCP},
			},
		},
		{
			// kube-scheduler's NodePorts counts only init containers that
			// run for the pod's lifetime; the others have exited by then.
			name: "sidecar init containers' ports first, regular init containers' ignored",
			spec: corev1.PodSpec{
				InitContainers: []corev1.Container{
					withPorts(corev1.Container{Name: "setup"}, corev1.ContainerPort{HostPort: 9000}),
					withPorts(corev1.Container{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}, corev1.ContainerPort{HostPort: 15001}),
				},
				Containers: []corev1.Container{
					withPorts(corev1.Container{Name: "app"}, corev1.ContainerPort{HostPort: 8080}),
				},
			},
			want: []HostPort{
				{IP: "0.0.0.0", Port: 15001, Protocol: corev1.ProtocolTCP},
				{IP: "0.0.0.0", Port: 8080, Protocol: corev1.ProtocolTCP},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, PodHostPorts(&corev1.Pod{Spec: tc.spec})); diff != "" {
				t.Errorf("PodHostPorts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHostPortConflicts(t *testing.T) {
	tcp := func(ip string, port int32) HostPort {
		return HostPort{IP: ip, Port: port, Protocol: corev1.ProtocolTCP}
	}
	udp := func(ip string, port int32) HostPort {
		return HostPort{IP: ip, Port: port, Protocol: corev1.ProtocolUDP}
	}
	cases := []struct {
		name string
		a, b HostPort
		want bool
	}{
		{name: "same IP, port and protocol", a: tcp("10.0.0.1", 80), b: tcp("10.0.0.1", 80), want: true},
		{name: "both on every IP", a: tcp("0.0.0.0", 80), b: tcp("0.0.0.0", 80), want: true},
		{name: "every IP against one IP", a: tcp("0.0.0.0", 80), b: tcp("10.0.0.1", 80), want: true},
		{name: "different IPs", a: tcp("10.0.0.1", 80), b: tcp("10.0.0.2", 80)},
		{name: "different ports", a: tcp("0.0.0.0", 80), b: tcp("0.0.0.0", 81)},
		{name: "different protocols", a: tcp("0.0.0.0", 53), b: udp("0.0.0.0", 53)},
		{name: "different protocols on the same IP", a: tcp("10.0.0.1", 53), b: udp("10.0.0.1", 53)},
		{name: "same UDP port", a: udp("10.0.0.1", 53), b: udp("0.0.0.0", 53), want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Conflicts(tc.b); got != tc.want {
				t.Errorf("%v.Conflicts(%v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
			if got := tc.b.Conflicts(tc.a); got != tc.want {
				t.Errorf("%v.Conflicts(%v) = %v, want %v", tc.b, tc.a, got, tc.want)
			}
		})
	}
}

func TestPortsConflict(t *testing.T) {
	web := HostPort{IP: "0.0.0.0", Port: 80, Protocol: corev1.ProtocolTCP}
	dns := HostPort{IP: "10.0.0.1", Port: 53, Protocol: corev1.ProtocolUDP}
	dnsOther := HostPort{IP: "10.0.0.2", Port: 53, Protocol: corev1.ProtocolUDP}
	metrics := HostPort{IP: "0.0.0.0", Port: 9100, Protocol: corev1.ProtocolTCP}
	cases := []struct {
		name string
		a, b []HostPort
		want bool
	}{
		{name: "both empty"},
		{name: "one side empty", a: []HostPort{web}},
		{name: "no pair conflicts", a: []HostPort{web, dns}, b: []HostPort{dnsOther, metrics}},
		{name: "one pair conflicts", a: []HostPort{dns, web}, b: []HostPort{metrics, web}, want: true},
		{name: "the last pair conflicts", a: []HostPort{web, dns}, b: []HostPort{metrics, dns}, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := PortsConflict(tc.a, tc.b); got != tc.want {
				t.Errorf("PortsConflict(a, b) = %v, want %v", got, tc.want)
			}
			if got := PortsConflict(tc.b, tc.a); got != tc.want {
				t.Errorf("PortsConflict(b, a) = %v, want %v", got, tc.want)
			}
		})
	}
}
