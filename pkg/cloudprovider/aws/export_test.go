package aws

import (
	"context"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
	v1 "github.com/capstan-dev/capstan/api/v1"
)

// UserData is userData for the tests of package aws_test, which read it
// with the local endpoint's node-side readers.
func UserData(b Bootstrap, cluster string, maxPods int32, nc *v1.NodeClaim, class *awsv1.EC2NodeClass) (string, error) {
	return userData(nodeUserData{cluster: cluster, bootstrap: b, maxPods: maxPods}, nc, class)
}

// KnownCluster is a cluster whose bootstrap is known up front.
type KnownCluster Bootstrap

// Bootstrap implements Cluster.
func (k KnownCluster) Bootstrap(context.Context) (Bootstrap, error) { return Bootstrap(k), nil }
