// Package batch is the end-to-end suite of batch workloads queued in
// Kueue: the real Kueue manager (built by `make tools`, started by the
// harness) admits a Job through a ProvisioningRequest admission check
// only once Capstan has launched capacity for all its pods, and never
// admits one whose capacity the cloud cannot give (docs/batch.md).
package batch
