// Package aws is Amazon EC2 as a provider of `capstan controller`
// (--cloud-provider=aws): its flags, its EC2NodeClass kind, its RBAC and
// its controllers, wired to pkg/cloudprovider/aws and the AWS SDK.
package aws
