package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/capstan-dev/capstan/pkg/test"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// start runs the command with args until the test ends and returns an
// SDK client for the URL it printed.
func start(t *testing.T, args ...string) *ec2.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, w)
		_ = w.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL: %v (run: %v)", err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	return ec2.New(ec2.Options{
		Region: "us-west-2", BaseEndpoint: aws.String(strings.TrimSpace(line)), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""), HTTPClient: ec2endpoint.NewHTTPClient(),
	})
}

func zones(t *testing.T, c *ec2.Client) []string {
	t.Helper()
	out, err := c.DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, z := range out.AvailabilityZones {
		names = append(names, *z.ZoneName)
	}
	return names
}

func TestServesTheDefaultProfile(t *testing.T) {
	c := start(t, "--listen", "127.0.0.1:0")
	if diff := cmp.Diff([]string{"us-west-2a", "us-west-2b", "us-west-2c"}, zones(t, c)); diff != "" {
		t.Errorf("zones (-want +got):\n%s", diff)
	}
}

// With --iam-policy, what the policy does not allow is refused: the
// reference's controller policy allows no DescribeAvailabilityZones.
func TestIAMPolicy(t *testing.T) {
	c := start(t, "--listen", "127.0.0.1:0", "--iam-policy", filepath.Join("..", "..", "docs", "iam", "karpenter-controller-policy.yaml"))
	_, err := c.DescribeAvailabilityZones(context.Background(), &ec2.DescribeAvailabilityZonesInput{})
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "UnauthorizedOperation" {
		t.Errorf("DescribeAvailabilityZones: %v, want UnauthorizedOperation", err)
	}
	if _, err := c.DescribeInstanceTypes(context.Background(), &ec2.DescribeInstanceTypesInput{}); err != nil {
		t.Errorf("DescribeInstanceTypes, which the policy allows: %v", err)
	}
}

func TestRefusesBadArguments(t *testing.T) {
	for _, args := range [][]string{{"--no-such-flag"}, {"extra"}, {"--cloud-profile", "/nonexistent.yaml"}, {"--iam-policy", "/nonexistent.yaml"}, {"--iam-policy", "main.go"}} {
		if err := run(context.Background(), args, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

const profileYAML = `apiVersion: sim.capstan.dev/v1alpha1
kind: CloudProfile
spec:
  region: us-west-2
  zones: [us-west-2a, us-west-2b]
  style: aws
  launchLatency: 1ms
`

// With a profile, a state file and a kubeconfig: a launched instance's
// Node registers on the cluster as EC2's would, and the instance and its
// tags outlive a restart.
func TestProfileStateAndNodes(t *testing.T) {
	env := test.EnvironmentFor(t)
	dir := t.TempDir()
	profile, state, kubeconfig := filepath.Join(dir, "profile.yaml"), filepath.Join(dir, "state.json"), filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(profile, []byte(profileYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := env.Config
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["test"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	kc.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	ca := base64.StdEncoding.EncodeToString(cfg.CAData)
	args := []string{"--cloud-profile", profile, "--sim-state", state, "--kubeconfig", kubeconfig, "--cluster-name", "dev",
		"--cluster-endpoint", cfg.Host, "--cluster-ca-bundle", ca, "--service-cidr", "10.96.0.0/12"}
	// What the node's nodeadm needs to join the endpoint's cluster.
	userData := base64.StdEncoding.EncodeToString([]byte("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: dev\n" +
		"    apiServerEndpoint: " + cfg.Host + "\n    certificateAuthority: " + ca + "\n    cidr: 10.96.0.0/12\n"))
	id := func() string {
		c := start(t, args...)
		if diff := cmp.Diff([]string{"us-west-2a", "us-west-2b"}, zones(t, c)); diff != "" {
			t.Errorf("zones (-want +got):\n%s", diff)
		}
		ctx := context.Background()
		if _, err := c.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
			LaunchTemplateName: aws.String("dev-nodes"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-00000000000000001"), UserData: aws.String(userData)},
		}); err != nil {
			t.Fatal(err)
		}
		out, err := c.CreateFleet(ctx, &ec2.CreateFleetInput{
			Type: ec2types.FleetTypeInstant,
			TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
				DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand, TotalTargetCapacity: aws.Int32(1),
			},
			LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
				LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String("dev-nodes")},
				Overrides:                   []ec2types.FleetLaunchTemplateOverridesRequest{{InstanceType: "m5.large", SubnetId: aws.String("subnet-00000000000000002")}},
			}},
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{{Key: aws.String("team"), Value: aws.String("dev")}}}},
		})
		if err != nil || len(out.Instances) != 1 {
			t.Fatalf("fleet %+v, %v", out, err)
		}
		return out.Instances[0].InstanceIds[0]
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		nodes := &corev1.NodeList{}
		if err := env.Client.List(context.Background(), nodes); err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) == 1 && nodes.Items[0].Spec.ProviderID == "aws:///us-west-2b/"+id && strings.HasPrefix(nodes.Items[0].Name, "ip-10-0-32-") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes %+v, want one for %s", nodes.Items, id)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The first run's cleanup stops it at the end of the test; a second
	// one on the same state file sees the instance.
	c := start(t, args...)
	out, err := c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	inst := out.Reservations[0].Instances[0]
	if len(inst.Tags) != 1 || *inst.Tags[0].Value != "dev" || *inst.SubnetId != "subnet-00000000000000002" {
		t.Errorf("instance after a restart: tags %v, subnet %s", inst.Tags, *inst.SubnetId)
	}
}
