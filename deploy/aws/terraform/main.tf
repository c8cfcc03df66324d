# Capstan's AWS infrastructure for one cluster, as Terraform: what
# deploy/aws/cloudformation.yaml makes, resource for resource (the
# interruption queue and its policy, the EventBridge rules feeding it,
# the node role, Capstan's controller policies). The policy documents
# under policies/ are generated from the CloudFormation template
# (hack/cfnpolicy, `make generate`), and hack/cfnpolicy's test checks
# that this module makes what the template makes. docs/aws.md,
# "Infrastructure".

terraform {
  required_version = ">= 1.3"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0"
    }
  }
}

variable "cluster_name" {
  description = "EKS cluster name (Capstan's --cluster-name); also the interruption queue's name"
  type        = string
  validation {
    condition     = can(regex("^[0-9A-Za-z][A-Za-z0-9_-]{0,79}$", var.cluster_name))
    error_message = "cluster_name must be 1 to 80 letters, digits, hyphens and underscores, starting with a letter or digit."
  }
}

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  # What a node needs to join, pull images and run the VPC CNI, and
  # Session Manager, as the reference's template grants.
  node_managed_policies = [
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonSSMManagedInstanceCore",
  ]
  # The EventBridge rules feeding the queue, by name.
  interruption_rules = {
    scheduled_change                  = { source = "aws.health", detail_type = "AWS Health Event", description = "AWS Health events (scheduled changes)" }
    spot_interruption                 = { source = "aws.ec2", detail_type = "EC2 Spot Instance Interruption Warning", description = "EC2 spot interruption warnings" }
    rebalance                         = { source = "aws.ec2", detail_type = "EC2 Instance Rebalance Recommendation", description = "EC2 rebalance recommendations" }
    instance_state_change             = { source = "aws.ec2", detail_type = "EC2 Instance State-change Notification", description = "EC2 instance state changes" }
    reservation_interruption          = { source = "aws.ec2", detail_type = "EC2 Capacity Reservation Instance Interruption Warning", description = "EC2 capacity reservation interruption warnings" }
  }
  # The substitutions of the generated policy documents.
  policy_variables = {
    partition               = data.aws_partition.current.partition
    region                  = data.aws_region.current.name
    account_id              = data.aws_caller_identity.current.account_id
    cluster_name            = var.cluster_name
    node_role_name          = aws_iam_role.node.name
    interruption_queue_name = aws_sqs_queue.interruption.name
  }
}

resource "aws_iam_role" "node" {
  name = "KarpenterNodeRole-${var.cluster_name}"
  path = "/"
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "ec2.${data.aws_partition.current.dns_suffix}" }
      Action    = "sts:AssumeRole"
    }]
  })
}

resource "aws_iam_role_policy_attachment" "node" {
  for_each   = toset(local.node_managed_policies)
  role       = aws_iam_role.node.name
  policy_arn = "arn:${data.aws_partition.current.partition}:iam::aws:policy/${each.value}"
}

resource "aws_sqs_queue" "interruption" {
  name = var.cluster_name
  # Events older than five minutes are stale: a spot warning gives two.
  message_retention_seconds = 300
  sqs_managed_sse_enabled   = true
}

resource "aws_sqs_queue_policy" "interruption" {
  queue_url = aws_sqs_queue.interruption.url
  policy = jsonencode({
    Version = "2012-10-17"
    Id      = "CapstanInterruptionQueuePolicy"
    Statement = [
      {
        Sid       = "EventBridgeSends"
        Effect    = "Allow"
        Principal = { Service = ["events.amazonaws.com", "sqs.amazonaws.com"] }
        Action    = "sqs:SendMessage"
        Resource  = aws_sqs_queue.interruption.arn
      },
      {
        Sid       = "DenyHTTP"
        Effect    = "Deny"
        Principal = "*"
        Action    = "sqs:*"
        Resource  = aws_sqs_queue.interruption.arn
        Condition = { Bool = { "aws:SecureTransport" = false } }
      },
    ]
  })
}

# The events Capstan's interruption handling reads: the same five rules
# as the CloudFormation template, each to the queue.
resource "aws_cloudwatch_event_rule" "interruption" {
  for_each      = local.interruption_rules
  name_prefix   = "capstan-${replace(each.key, "_", "-")}-"
  description   = "${each.value.description} to Capstan's interruption queue"
  event_pattern = jsonencode({ source = [each.value.source], "detail-type" = [each.value.detail_type] })
}

resource "aws_cloudwatch_event_target" "interruption" {
  for_each  = aws_cloudwatch_event_rule.interruption
  rule      = each.value.name
  target_id = "CapstanInterruptionQueueTarget"
  arn       = aws_sqs_queue.interruption.arn
}

# Capstan's controller policies, generated from the CloudFormation
# template's: attach them to the controller's role.
resource "aws_iam_policy" "controller_ec2" {
  name   = "CapstanControllerEC2Policy-${var.cluster_name}"
  path   = "/"
  policy = templatefile("${path.module}/policies/CapstanControllerEC2Policy.json.tftpl", local.policy_variables)
}

resource "aws_iam_policy" "controller_integration" {
  name   = "CapstanControllerIntegrationPolicy-${var.cluster_name}"
  path   = "/"
  policy = templatefile("${path.module}/policies/CapstanControllerIntegrationPolicy.json.tftpl", local.policy_variables)
}

output "node_role_name" {
  description = "the nodes' role, for EC2NodeClasses' spec.role"
  value       = aws_iam_role.node.name
}

output "node_role_arn" {
  description = "the nodes' role, for the cluster's EC2_LINUX access entry"
  value       = aws_iam_role.node.arn
}

output "interruption_queue_name" {
  description = "Capstan's --interruption-queue"
  value       = aws_sqs_queue.interruption.name
}

output "controller_policy_arns" {
  description = "attach to the controller's role"
  value       = [aws_iam_policy.controller_ec2.arn, aws_iam_policy.controller_integration.arn]
}
