// Command chartgen copies what controller-gen generates into the Helm chart
// charts/capstan: the CRDs of config/crd into the chart's crds/, and the
// rules of config/rbac's roles into files/rbac.yaml, which the chart's RBAC
// templates read. The chart then grants exactly the generated roles, no
// more. `make generate` runs it after controller-gen, so `make verify`
// fails on a chart out of step.
package main
