// Package provisioning is the end-to-end suite of `capstan controller`
// provisioning on the local control plane: the real kube-scheduler decides
// where pods go, so a plan that under-provisions leaves pods Pending and
// fails the test.
package provisioning
