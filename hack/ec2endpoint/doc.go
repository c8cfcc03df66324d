// Command ec2endpoint serves the EC2 Query API, and the SQS interruption
// queue, the Price List API and IAM's instance profiles the AWS provider
// also calls, over Capstan's simulated cloud (test/ec2endpoint) on a
// local address, so the AWS cloud provider, its real SDK and the rest of
// Capstan can run against it:
//
//	go run ./hack/ec2endpoint --listen 127.0.0.1:0 --cloud-profile examples/profile.yaml \
//		--sim-state /tmp/ec2.json --kubeconfig kubeconfig --cluster-name dev
//
// It prints the URL it listens on as its first line of output (point the
// provider's endpoint overrides at it: --aws-endpoint,
// --aws-pricing-endpoint, --aws-sqs-endpoint, --aws-iam-endpoint) and
// serves until interrupted.
// Without --cloud-profile it runs the embedded default profile, as
// `capstan controller` does; with --kubeconfig, launched instances
// register their Nodes on that cluster (simapi.Kubelet), so kwok runs
// their pods. With --iam-policy (a CloudFormation template of IAM
// policies, as docs/iam ships; repeatable) it authorizes every request
// not signed with access key AKIDADMIN under those policies, refusing as
// IAM would (see test/ec2endpoint, Authorization).
package main
