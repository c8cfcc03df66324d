package ec2endpoint

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"

	v1 "github.com/capstan-dev/capstan/api/v1"
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

// ARNs of the endpoint's resources, in its own account. Images are the
// region's, owned by no account in their ARN, as EC2's image ARNs are.
func (s *Server) ec2ARN(resourceType, id string) string {
	account := s.opts.AccountID
	if resourceType == "image" || resourceType == "snapshot" {
		account = ""
	}
	return s.ownedARN(resourceType, account, id)
}

// ownedARN is the ARN of a resource owned by account, which may be
// another than the endpoint's: a capacity reservation shared through RAM
// keeps its owner's account in its ARN, and IAM authorizes a launch into
// it on that ARN
// (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-reservation-sharing.html).
func (s *Server) ownedARN(resourceType, account, id string) string {
	return fmt.Sprintf("arn:aws:ec2:%s:%s:%s/%s", s.profile.Spec.Region, account, resourceType, id)
}

func (s *Server) queueARN(name string) string {
	return fmt.Sprintf("arn:aws:sqs:%s:%s:%s", s.profile.Spec.Region, s.opts.AccountID, name)
}

// everything is the resource of actions that take none.
var everything = iampolicy.Resource{ARN: "*"}

// What each action is authorized on, per the Service Authorization
// Reference's resource types for it
// (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonec2.html,
// .../list_awsidentityandaccessmanagementiam.html, .../list_amazonsqs.html,
// .../list_awspricelist.html). Resources a request names that do not
// exist are left to the action, which answers them as not found.

// authorizeEC2 authorizes an EC2 action but CreateFleet, which is
// authorized once its request is resolved (authorizeFleet,
// authorizeLaunch).
func (s *Server) authorizeEC2(ctx context.Context, name string, p params) error {
	switch name {
	case "CreateFleet":
		return nil
	case "CreateLaunchTemplate":
		lt := iampolicy.Resource{ARN: s.ec2ARN("launch-template", "*"), RequestTags: p.tagSpecifications()["launch-template"]}
		if err := s.authorize(ctx, "ec2:CreateLaunchTemplate", nil, lt); err != nil {
			return err
		}
		return s.authorizeCreateTags(ctx, "CreateLaunchTemplate", []iampolicy.Resource{lt})
	case "DeleteLaunchTemplate":
		s.mu.Lock()
		lt, err := s.templateLocked(p.get("LaunchTemplateId"), p.get("LaunchTemplateName"))
		var r iampolicy.Resource
		if err == nil {
			r = s.templateResourceLocked(lt)
		}
		s.mu.Unlock()
		if err != nil {
			return nil
		}
		return s.authorize(ctx, "ec2:DeleteLaunchTemplate", nil, r)
	case "TerminateInstances":
		return s.authorize(ctx, "ec2:TerminateInstances", nil, s.taggedResources(p.list("InstanceId"), nil)...)
	case "CreateTags":
		return s.authorize(ctx, "ec2:CreateTags", nil, s.taggedResources(p.list("ResourceId"), p.tags("Tag"))...)
	}
	return s.authorize(ctx, "ec2:"+name, nil, everything)
}

// taggedResources are the instances and launch templates of ids that
// exist, with their tags, and requestTags as what the request puts on
// them.
func (s *Server) taggedResources(ids []string, requestTags map[string]string) []iampolicy.Resource {
	snap := s.cloud.Snapshot()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []iampolicy.Resource
	for _, id := range ids {
		switch {
		case snap.Instances[id] != nil:
			out = append(out, iampolicy.Resource{ARN: s.ec2ARN("instance", id), Tags: snap.Instances[id].Tags, RequestTags: requestTags})
		case s.templates[id] != nil:
			r := s.templateResourceLocked(s.templates[id])
			r.RequestTags = requestTags
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) templateResourceLocked(lt *launchTemplate) iampolicy.Resource {
	return iampolicy.Resource{ARN: s.ec2ARN("launch-template", lt.id), Tags: maps.Clone(lt.tags)}
}

// authorizeFleet is CreateFleet's authorization as a whole: ec2:CreateFleet
// on the fleet (with its tags) and on every launch template, subnet,
// security group, image, snapshot and reservation the request names, and tagging
// the fleet on create. A refusal here fails the request
// (UnauthorizedOperation naming ec2:CreateFleet, as EC2 answers a
// CreateFleet denied on a launch template).
func (s *Server) authorizeFleet(ctx context.Context, req fleetRequest) error {
	fleet := iampolicy.Resource{ARN: s.ec2ARN("fleet", "*"), RequestTags: req.tags["fleet"]}
	resources := []iampolicy.Resource{fleet}
	seen := map[string]bool{}
	for _, c := range req.candidates {
		for _, r := range s.usedResources(c) {
			if !seen[r.ARN] {
				seen[r.ARN] = true
				resources = append(resources, r)
			}
		}
	}
	if err := s.authorize(ctx, "ec2:CreateFleet", nil, resources...); err != nil {
		return err
	}
	return s.authorizeCreateTags(ctx, "CreateFleet", []iampolicy.Resource{fleet})
}

// authorizeLaunch is one candidate's launch, which an instant fleet makes
// with the caller's permissions: ec2:RunInstances on what it creates (the
// instance, its volumes, its network interface and, for spot, the spot
// request, each with the tags the fleet and the template give it) and on
// what it uses; ec2:CreateTags on what it tags; iam:PassRole on the role
// of the template's instance profile
// (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ExamplePolicies_EC2.html#iam-example-runinstances,
// .../ec2-fleet-prerequisites.html). A refusal fails the candidate: EC2
// reports it among the fleet's errors.
func (s *Server) authorizeLaunch(ctx context.Context, req fleetRequest, c candidate) error {
	specs := c.template.data.tags
	created := []iampolicy.Resource{
		{ARN: s.ec2ARN("instance", "*"), RequestTags: merged(specs["instance"], req.tags["instance"])},
		{ARN: s.ec2ARN("volume", "*"), RequestTags: merged(specs["volume"], req.tags["volume"])},
		{ARN: s.ec2ARN("network-interface", "*"), RequestTags: specs["network-interface"]},
	}
	if c.capacityType == v1.CapacityTypeSpot {
		created = append(created, iampolicy.Resource{ARN: s.ec2ARN("spot-instances-request", "*"), RequestTags: specs["spot-instances-request"]})
	}
	if err := s.authorize(ctx, "ec2:RunInstances", nil, append(slices.Clone(created), s.usedResources(c)...)...); err != nil {
		return err
	}
	if err := s.authorizeCreateTags(ctx, "CreateFleet", created); err != nil {
		return err
	}
	if role := s.profileRole(c.template.data.instanceProfile); role != "" {
		return s.authorize(ctx, "iam:PassRole", map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}, iampolicy.Resource{ARN: role})
	}
	return nil
}

// usedResources are the existing resources a candidate launches with.
func (s *Server) usedResources(c candidate) []iampolicy.Resource {
	out := []iampolicy.Resource{
		{ARN: s.ec2ARN("launch-template", c.template.id), Tags: maps.Clone(c.template.tags)},
		{ARN: s.ec2ARN("subnet", c.subnetID), Tags: s.subnetTags(c.subnetID)},
		{ARN: s.ec2ARN("image", c.imageID), Tags: s.imageTags(c.imageID)},
	}
	for _, g := range s.securityGroups() {
		if slices.Contains(c.securityGroupIDs, g.GroupID) {
			out = append(out, iampolicy.Resource{ARN: s.ec2ARN("security-group", g.GroupID), Tags: tagMap(g.Tags)})
		}
	}
	if c.reservationID != "" {
		owner := cmp.Or(c.reservationOwner, s.opts.AccountID)
		out = append(out, iampolicy.Resource{ARN: s.ownedARN("capacity-reservation", owner, c.reservationID)})
	}
	for _, bd := range c.template.data.blockDevices {
		if bd.snapshotID != "" {
			out = append(out, iampolicy.Resource{ARN: s.ec2ARN("snapshot", bd.snapshotID)})
		}
	}
	return out
}

func (s *Server) subnetTags(id string) map[string]string {
	for _, sn := range s.subnets() {
		if sn.SubnetID == id {
			return tagMap(sn.Tags)
		}
	}
	return nil
}

func (s *Server) imageTags(id string) map[string]string {
	for _, img := range s.imageList() {
		if img.id == id {
			return img.tags
		}
	}
	return nil
}

// profileRole is the ARN of the role in the named instance profile, empty
// when IAM has no such profile or it holds no role.
func (s *Server) profileRole(profile string) string {
	s.iam.mu.Lock()
	defer s.iam.mu.Unlock()
	p := s.iam.profiles[profile]
	if p == nil || len(p.Roles) == 0 {
		return ""
	}
	return s.iam.roles[p.Roles[0]].ARN
}

// authorizeIAM authorizes an IAM action on the instance profile or role
// it names.
func (s *Server) authorizeIAM(ctx context.Context, name string, p params) error {
	profileARN := func(path, name string) string {
		return "arn:aws:iam::" + s.opts.AccountID + ":instance-profile" + path + name
	}
	switch name {
	case "CreateInstanceProfile":
		dir := "/"
		if p.has("Path") {
			dir = p.get("Path")
		}
		tags, _ := iamTags(p)
		if len(tags) == 0 {
			tags = nil
		}
		r := iampolicy.Resource{ARN: profileARN(dir, p.get("InstanceProfileName")), RequestTags: tags}
		if err := s.authorize(ctx, "iam:CreateInstanceProfile", nil, r); err != nil || tags == nil {
			return err
		}
		// Creating with tags also needs iam:TagInstanceProfile
		// (https://docs.aws.amazon.com/IAM/latest/UserGuide/id_tags_instance-profiles.html),
		// evaluated on the profile as it would be created, carrying them.
		r.Tags = tags
		return s.authorize(ctx, "iam:TagInstanceProfile", nil, r)
	case "GetRole":
		return s.authorize(ctx, "iam:GetRole", nil, iampolicy.Resource{ARN: "arn:aws:iam::" + s.opts.AccountID + ":role/" + p.get("RoleName")})
	}
	s.iam.mu.Lock()
	r := iampolicy.Resource{ARN: profileARN("/", p.get("InstanceProfileName"))}
	if prof := s.iam.profiles[p.get("InstanceProfileName")]; prof != nil {
		r = iampolicy.Resource{ARN: prof.ARN, Tags: maps.Clone(prof.Tags)}
	}
	s.iam.mu.Unlock()
	if name == "TagInstanceProfile" {
		r.RequestTags, _ = iamTags(p)
	}
	return s.authorize(ctx, "iam:"+name, nil, r)
}

// authorizeJSON authorizes an SQS operation on the queue it names, a
// Price List one on every resource (it takes none).
func (s *Server) authorizeJSON(ctx context.Context, service, op string, body []byte) error {
	switch service {
	case "AmazonSQS":
		var q struct {
			QueueName string
			QueueURL  string `json:"QueueUrl"`
		}
		_ = json.Unmarshal(body, &q)
		name := q.QueueName
		if name == "" {
			name = path.Base(strings.TrimSuffix(q.QueueURL, "/"))
		}
		return s.authorize(ctx, "sqs:"+op, nil, iampolicy.Resource{ARN: s.queueARN(name)})
	case "AWSPriceListService":
		return s.authorize(ctx, "pricing:"+op, nil, everything)
	case "AmazonSSM":
		var q struct{ Name string }
		_ = json.Unmarshal(body, &q)
		return s.authorize(ctx, "ssm:"+op, nil, iampolicy.Resource{ARN: s.parameterARN(q.Name)})
	}
	return nil
}
