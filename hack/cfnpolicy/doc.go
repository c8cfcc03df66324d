// Command cfnpolicy writes, from Capstan's CloudFormation template
// (deploy/aws/cloudformation.yaml), the files that must say the same:
//
//   - docs/iam/capstan-controller-policy.yaml, the template's controller
//     policies on their own, which the local EC2 endpoint enforces in
//     tests (test/ec2endpoint/iampolicy reads it);
//   - deploy/aws/terraform/policies/*.json.tftpl, the same policy
//     documents as Terraform templates, which the Terraform module's
//     aws_iam_policy resources read with templatefile().
//
// `make generate` runs it and `make verify` fails when its output is
// stale; its test checks that the Terraform module makes what the
// template makes (queue, rules, node role, policies). docs/aws.md,
// "Infrastructure".
package main
