package ec2endpoint

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/capstan-dev/capstan/test/ec2endpoint/iampolicy"
)

// AdminAccessKeyID signs the requests of the account's administrator:
// they are never refused, whatever Options.PolicyTemplates says, so a
// test can inspect and drive the cloud beside the principal it restricts.
const AdminAccessKeyID = "AKIDADMIN"

// defaultPrincipal is the caller's ARN in denial messages unless
// Options.PrincipalARN names one: an IRSA session of a controller role.
func defaultPrincipal(account string) string {
	return "arn:aws:sts::" + account + ":assumed-role/capstan-controller/capstan"
}

// caller is who signed a request and for which region.
type caller struct {
	accessKeyID, region string
}

type callerKey struct{}

// callerOf reads the SigV4 credential scope of r's Authorization header:
// Credential=AKID/date/region/service/aws4_request.
func callerOf(r *http.Request) caller {
	_, cred, ok := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	if !ok {
		return caller{}
	}
	cred, _, _ = strings.Cut(cred, ",")
	parts := strings.Split(cred, "/")
	c := caller{accessKeyID: parts[0]}
	if len(parts) > 2 {
		c.region = parts[2]
	}
	return c
}

// policyVariables fill the ${...} of the policy templates: the
// CloudFormation pseudo parameters for the endpoint's account and region,
// the parameters of docs/iam/capstan-controller-policy.yaml and the
// resources the reference's template makes beside its policies (its node
// role, named as the reference's getting-started guide names it, and its
// interruption queue).
func (s *Server) policyVariables() map[string]string {
	region, account := s.profile.Spec.Region, s.opts.AccountID
	role := "KarpenterNodeRole-" + s.opts.ClusterName
	return map[string]string{
		"AWS::Partition": "aws", "AWS::Region": region, "AWS::AccountId": account, "AWS::URLSuffix": "amazonaws.com",
		"ClusterName": s.opts.ClusterName, "NodeRoleName": role, "InterruptionQueueName": s.opts.InterruptionQueue,
		"KarpenterNodeRole.Arn":          "arn:aws:iam::" + account + ":role/" + role,
		"KarpenterInterruptionQueue.Arn": s.queueARN(s.opts.InterruptionQueue),
	}
}

// loadPolicies reads Options.PolicyTemplates.
func (s *Server) loadPolicies() error {
	vars := s.policyVariables()
	for i, t := range s.opts.PolicyTemplates {
		ps, err := iampolicy.LoadTemplate(t, vars)
		if err != nil {
			return fmt.Errorf("loading policy template %d, %w", i, err)
		}
		s.policies = append(s.policies, ps...)
	}
	return nil
}

// denial is a refusal by the policies: the action and the resource
// refused, and whether a Deny statement refused it.
type denial struct {
	principal, action, resource string
	explicit                    bool
}

func (d *denial) Error() string { return d.message() }

// message is IAM's sentence for the refusal, as AWS words it in every
// service's AccessDenied answers.
func (d *denial) message() string {
	why := "because no identity-based policy allows the " + d.action + " action"
	if d.explicit {
		why = "with an explicit deny in an identity-based policy"
	}
	return fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s %s", d.principal, d.action, d.resource, why)
}

// ec2Error is EC2's answer to a refusal: UnauthorizedOperation, 403,
// with the encoded authorization failure message (here base64 of the
// decision, as `aws sts decode-authorization-message` would show it).
func (d *denial) ec2Error() *apiError {
	decoded, _ := json.Marshal(map[string]any{"allowed": false, "explicitDeny": d.explicit,
		"context": map[string]string{"principal": d.principal, "action": d.action, "resource": d.resource}})
	return &apiError{Code: "UnauthorizedOperation", Status: http.StatusForbidden,
		Message: "You are not authorized to perform this operation. " + d.message() + ". Encoded authorization failure message: " + base64.RawURLEncoding.EncodeToString(decoded)}
}

// iamError is IAM's: AccessDenied, 403.
func (d *denial) iamError() *apiError {
	return &apiError{Code: "AccessDenied", Message: d.message(), Status: http.StatusForbidden}
}

// jsonError is the JSON protocols': AccessDeniedException, 403; SQS's
// query-compatible code is AccessDenied.
func (d *denial) jsonError(queryCode string) *jsonError {
	return &jsonError{Type: "AccessDeniedException", Message: d.message(), QueryCode: queryCode, Status: http.StatusForbidden}
}

// authorize is the one place every request is authorized: action on
// resources (each with its ARN, its tags and the tags the request puts on
// it) with the request-wide condition keys, under Options.PolicyTemplates,
// for the caller in ctx. It returns a *denial when IAM would refuse, nil
// when it allows or the endpoint enforces no policy or the caller is the
// administrator. Every protocol (EC2, IAM, SQS, Price List, and any
// service added to the endpoint) calls it with IAM's action name.
func (s *Server) authorize(ctx context.Context, action string, keys map[string][]string, resources ...iampolicy.Resource) error {
	if len(s.policies) == 0 {
		return nil
	}
	c, _ := ctx.Value(callerKey{}).(caller)
	if c.accessKeyID == AdminAccessKeyID {
		return nil
	}
	if c.region != "" {
		all := map[string][]string{"aws:RequestedRegion": {c.region}}
		for k, v := range keys {
			all[k] = v
		}
		keys = all
	}
	d := iampolicy.Evaluate(s.policies, iampolicy.Request{Action: action, Resources: resources, Context: keys})
	if d.Allowed {
		return nil
	}
	return &denial{principal: s.opts.PrincipalARN, action: action, resource: d.Resource, explicit: d.ExplicitDeny}
}

// authorizeCreateTags is tag-on-create: ec2:CreateTags on each created
// resource the request tags, with ec2:CreateAction the creating action
// (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/supported-iam-actions-tagging.html).
func (s *Server) authorizeCreateTags(ctx context.Context, createAction string, created []iampolicy.Resource) error {
	var tagged []iampolicy.Resource
	for _, r := range created {
		if len(r.RequestTags) > 0 {
			tagged = append(tagged, r)
		}
	}
	if len(tagged) == 0 {
		return nil
	}
	return s.authorize(ctx, "ec2:CreateTags", map[string][]string{"ec2:CreateAction": {createAction}}, tagged...)
}

// ARNs of the endpoint's resources. Images are the region's, owned by no
// account in their ARN, as EC2's image ARNs are.
func (s *Server) ec2ARN(resourceType, id string) string {
	account := s.opts.AccountID
	if resourceType == "image" || resourceType == "snapshot" {
		account = ""
	}
	return fmt.Sprintf("arn:aws:ec2:%s:%s:%s/%s", s.profile.Spec.Region, account, resourceType, id)
}

func (s *Server) queueARN(name string) string {
	return fmt.Sprintf("arn:aws:sqs:%s:%s:%s", s.profile.Spec.Region, s.opts.AccountID, name)
}

// everything is the resource of actions that take none.
var everything = iampolicy.Resource{ARN: "*"}
