// Package aws is the end-to-end suite of the AWS cloud provider on the
// local control plane: `capstan controller --cloud-provider=aws` talks
// through the real aws-sdk-go-v2 to bin/ec2endpoint, the local EC2 (and
// Price List) endpoint over the simulated cloud, whose launched instances
// register real Nodes that kwok runs and the real kube-scheduler binds
// pods to. Scenarios, each in its own namespace with its own NodePool and
// EC2NodeClass, run in parallel: an EC2NodeClass in the reference's shape
// resolves the endpoint's subnets, security groups and AL2023 AMIs and a
// Deployment gets exactly the nodes it needs, labelled as EC2's, which
// are removed and their instances terminated when it scales to zero;
// spot that is out everywhere falls back to on-demand; a capacity
// reservation is filled first and never over-booked; an instance
// launched with the cluster's tags but no NodeClaim is garbage-collected;
// a spot interruption warning sent to the endpoint's SQS queue replaces
// the node; a launch the cloud refuses for a configuration reason is
// retried with backoff, deleted at the launch timeout and succeeds once
// the cause is gone. The controller discovers the cluster it joins nodes
// to through the endpoint's eks:DescribeCluster, and the endpoint
// registers a Node only for user data the node's own software accepts.
// The independent invariant checker (test/invariants) watches every
// scenario's pods and NodeClaims (reservation slots, Pending time); the
// cloud's inventory is compared with the NodeClaims by the scenarios
// themselves, through DescribeInstances, as the checker reads only the
// sim provider's state file.
//
// With CAPSTAN_E2E_IAM_POLICY naming a controller policy file
// (docs/iam), the endpoint refuses the controller's requests as IAM would
// under that policy; the scenarios' own calls sign as the endpoint's
// administrator. `make e2e` runs the suite once under each policy.
package aws
