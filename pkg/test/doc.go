// Package test holds what Capstan's tests share: builders for API objects
// (test.NodePool(...)), the real control-plane test environment (etcd and
// kube-apiserver through envtest, with Capstan's CRDs installed) and
// helpers. It is imported only from tests.
package test
