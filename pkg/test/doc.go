// Package test holds what Capstan's tests share: builders for API objects
// (test.NodePool(...)), the real control-plane test environment (etcd and
// kube-apiserver through envtest, with Capstan's CRDs installed), the full
// local cluster end-to-end suites run on (with Kueue's manager when a suite
// asks, StartKueue) and helpers. It is imported only from tests.
package test
