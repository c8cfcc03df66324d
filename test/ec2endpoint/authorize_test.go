package ec2endpoint_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/test/ec2endpoint"
)

// authTemplate allows EC2's reads in the endpoint's region and the
// interruption queue's URL, and denies the Price List outright.
const authTemplate = `
Resources:
  P:
    Type: AWS::IAM::ManagedPolicy
    Properties:
      PolicyDocument: !Sub |
        {"Version": "2012-10-17", "Statement": [
          {"Effect": "Allow", "Action": "ec2:Describe*", "Resource": "*",
           "Condition": {"StringEquals": {"aws:RequestedRegion": "${AWS::Region}"}}},
          {"Effect": "Allow", "Action": "sqs:GetQueueUrl", "Resource": "arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:${ClusterName}"},
          {"Sid": "NoPrices", "Effect": "Deny", "Action": "pricing:*", "Resource": "*"}]}
`

// authClients are the SDK clients of an endpoint enforcing authTemplate,
// signing with key.
type authClients struct {
	ec2     *ec2.Client
	iam     *iam.Client
	sqs     *sqs.Client
	pricing *pricing.Client
}

func authEndpoint(t *testing.T, key string) authClients {
	t.Helper()
	s, err := ec2endpoint.New(ec2endpoint.Options{Clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		ClusterName: "test-cluster", PolicyTemplates: [][]byte{[]byte(authTemplate)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	creds := credentials.NewStaticCredentialsProvider(key, "SECRET", "")
	return authClients{
		ec2: ec2.New(ec2.Options{Region: "us-west-2", BaseEndpoint: aws.String(srv.URL), Credentials: creds, RetryMaxAttempts: 1, HTTPClient: ec2endpoint.NewHTTPClient()}),
		iam: iam.New(iam.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds, RetryMaxAttempts: 1, HTTPClient: ec2endpoint.NewHTTPClient()}),
		sqs: sqs.New(sqs.Options{Region: "us-west-2", BaseEndpoint: aws.String(srv.URL), Credentials: creds, RetryMaxAttempts: 1, HTTPClient: ec2endpoint.NewHTTPClient()}),
		pricing: pricing.New(pricing.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds, RetryMaxAttempts: 1,
			HTTPClient: ec2endpoint.NewHTTPClient()}),
	}
}

// Each protocol answers a refusal as its service does: EC2
// UnauthorizedOperation, IAM AccessDenied, SQS AccessDenied (its
// query-compatible code), the Price List AccessDeniedException; all 403,
// naming the principal, action and resource in IAM's sentence.
func TestRefusalsByService(t *testing.T) {
	c := authEndpoint(t, "AKID")
	ctx := context.Background()
	const principal = "arn:aws:sts::111122223333:assumed-role/capstan-controller/capstan"
	for _, tc := range []struct {
		name, code, message string
		call                func() error
	}{
		{"ec2 allowed", "", "", func() error {
			_, err := c.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
			return err
		}},
		{"ec2 implicitly denied", "UnauthorizedOperation",
			"You are not authorized to perform this operation. User: " + principal + " is not authorized to perform: ec2:CreateLaunchTemplate on resource: arn:aws:ec2:us-west-2:111122223333:launch-template/* because no identity-based policy allows the ec2:CreateLaunchTemplate action. Encoded authorization failure message: ",
			func() error {
				_, err := c.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("tmpl"),
					LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-1")}})
				return err
			}},
		{"ec2 dry run of a denied action", "UnauthorizedOperation", "", func() error {
			_, err := c.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{DryRun: aws.Bool(true), LaunchTemplateName: aws.String("tmpl"),
				LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-1")}})
			return err
		}},
		{"ec2 dry run of an allowed action", "DryRunOperation", "", func() error {
			_, err := c.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{DryRun: aws.Bool(true)})
			return err
		}},
		{"iam", "AccessDenied",
			"User: " + principal + " is not authorized to perform: iam:GetInstanceProfile on resource: arn:aws:iam::111122223333:instance-profile/p because no identity-based policy allows the iam:GetInstanceProfile action",
			func() error {
				_, err := c.iam.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("p")})
				return err
			}},
		{"sqs allowed", "", "", func() error {
			_, err := c.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("test-cluster")})
			return err
		}},
		{"sqs on another queue", "AccessDenied", "", func() error {
			_, err := c.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("other")})
			return err
		}},
		{"pricing explicitly denied", "AccessDeniedException",
			"User: " + principal + " is not authorized to perform: pricing:GetProducts on resource: * with an explicit deny in an identity-based policy",
			func() error {
				_, err := c.pricing.GetProducts(ctx, &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2")})
				return err
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if got := apiCode(t, err); got != tc.code {
				t.Fatalf("code %q, want %q (%v)", got, tc.code, err)
			}
			if tc.code != "" && tc.code != "DryRunOperation" && httpStatus(err) != http.StatusForbidden {
				t.Errorf("HTTP status %d, want 403", httpStatus(err))
			}
			if tc.message != "" && !strings.Contains(err.Error(), tc.message) {
				t.Errorf("error %v, want the message %q", err, tc.message)
			}
		})
	}
}

// The administrator's key is never refused: IAM answers its request on
// the merits.
func TestAdministratorIsNotRestricted(t *testing.T) {
	c := authEndpoint(t, ec2endpoint.AdminAccessKeyID)
	_, err := c.iam.GetInstanceProfile(context.Background(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String("p")})
	if got := apiCode(t, err); got != "NoSuchEntity" {
		t.Errorf("code %q, want NoSuchEntity", got)
	}
}

// Tag specifications name only resource types the operation creates
// (EC2 API Reference: CreateFleet's TagSpecifications, and
// LaunchTemplateTagSpecificationRequest).
func TestTagSpecificationTypes(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	_, err := f.client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("tmpl"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-1"),
			TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{{ResourceType: ec2types.ResourceTypeFleet, Tags: []ec2types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}}}})
	if got := apiCode(t, err); got != "InvalidParameterValue" {
		t.Errorf("launch template data tagging a fleet: %q, want InvalidParameterValue", got)
	}
	in := fleetInput("tmpl", "on-demand")
	in.TagSpecifications = []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeNetworkInterface, Tags: []ec2types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}}
	_, err = f.client.CreateFleet(ctx, in)
	if got := apiCode(t, err); got != "InvalidParameterValue" {
		t.Errorf("a fleet tagging a network interface: %q, want InvalidParameterValue", got)
	}
}

// noSnapshots allows everything but launching from EBS snapshots.
const noSnapshots = `
Resources:
  P:
    Type: AWS::IAM::ManagedPolicy
    Properties:
      PolicyDocument: !Sub |
        {"Version": "2012-10-17", "Statement": [
          {"Effect": "Allow", "Action": "*", "Resource": "*"},
          {"Sid": "NoSnapshots", "Effect": "Deny", "Action": "ec2:RunInstances", "Resource": "arn:${AWS::Partition}:ec2:*::snapshot/*"}]}
`

// A launch the caller may not make fails its override among the fleet's
// errors, as an instant fleet reports RunInstances refusals; the fleet
// itself is created.
func TestFleetLaunchRefusedPerOverride(t *testing.T) {
	f := newFixture(t, profile(), func(o *ec2endpoint.Options) { o.PolicyTemplates = [][]byte{[]byte(noSnapshots)} })
	plain := createTemplate(t, f, "plain", nil)
	if diff := cmp.Diff(outcome{Launched: "m5.large/" + subnetA + "/on-demand"}, outcomeOf(launch(t, f, fleetInput(plain, v1.CapacityTypeOnDemand, override("m5.large", subnetA))))); diff != "" {
		t.Errorf("without a snapshot (-want +got):\n%s", diff)
	}
	snap := createTemplate(t, f, "from-snapshot", func(d *ec2types.RequestLaunchTemplateData) {
		d.BlockDeviceMappings = []ec2types.LaunchTemplateBlockDeviceMappingRequest{{DeviceName: aws.String("/dev/xvda"),
			Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{SnapshotId: aws.String("snap-0123")}}}
	})
	if diff := cmp.Diff(outcome{Errors: []string{"m5.large/us-west-2a/on-demand: UnauthorizedOperation"}}, outcomeOf(launch(t, f, fleetInput(snap, v1.CapacityTypeOnDemand, override("m5.large", subnetA))))); diff != "" {
		t.Errorf("from a snapshot (-want +got):\n%s", diff)
	}
}
