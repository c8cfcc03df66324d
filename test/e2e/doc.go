// Package e2e holds Capstan's end-to-end suites. They run (build tag e2e)
// against the full local control plane — etcd, kube-apiserver,
// kube-scheduler, kube-controller-manager and kwok — where the real
// kube-scheduler decides placement; test/e2e/batch adds Kueue's manager.
package e2e
