// Package iampolicy evaluates identity-based IAM policies the way AWS's
// policy evaluation logic does, for the local EC2 endpoint
// (test/ec2endpoint) to refuse what IAM would refuse:
//
//   - a request is denied when any statement explicitly denies it, else
//     allowed when any statement allows it, else implicitly denied
//     (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html);
//   - a statement applies when its Action (or NotAction), Resource (or
//     NotResource) and every condition match; actions match case-
//     insensitively with * and ? wildcards, resources as ARNs with them
//     (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_action.html,
//     .../reference_policies_elements_resource.html);
//   - conditions: the operators of a block and the keys of an operator
//     are ANDed, the values of one key ORed; a key missing from the
//     request makes a positive operator false and a negated one true;
//     ...IfExists is true when the key is missing; Null tests presence;
//     ForAllValues is true on an empty set, ForAnyValue false
//     (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html,
//     .../reference_policies_condition-single-vs-multi-valued-context-keys.html).
//
// A request names an action and the resources it touches, each with its
// ARN, its tags (aws:ResourceTag/*) and the tags the request puts on it
// (aws:RequestTag/*, aws:TagKeys), plus request-wide keys such as
// ec2:CreateAction or aws:RequestedRegion. AWS authorizes each resource of
// an action separately: the request is allowed only if every resource is.
//
// Policies are read from CloudFormation templates (LoadTemplate): the
// AWS::IAM::ManagedPolicy and AWS::IAM::Policy resources whose
// PolicyDocument is a !Sub string, the form both the reference's
// getting-started template and docs/iam use, with the ${...} variables
// given by the caller.
package iampolicy
