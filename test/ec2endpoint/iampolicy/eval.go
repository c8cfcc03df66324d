package iampolicy

import (
	"maps"
	"slices"
	"strings"
)

// Request is one authorization: an action on resources.
type Request struct {
	// Action is service:Name, e.g. ec2:RunInstances.
	Action    string
	Resources []Resource
	// Context are the request-wide condition keys and their values:
	// ec2:CreateAction, aws:RequestedRegion, iam:PassedToService.
	Context map[string][]string
}

// Resource is one resource the action touches.
type Resource struct {
	// ARN is the resource's ARN, or * for actions that take none.
	ARN string
	// Tags are the resource's own tags (aws:ResourceTag/KEY): those of an
	// existing resource, none for one being created.
	Tags map[string]string
	// RequestTags are the tags the request puts on it (aws:RequestTag/KEY,
	// whose keys are aws:TagKeys); nil when it tags nothing.
	RequestTags map[string]string
}

// Decision is the outcome of a Request.
type Decision struct {
	Allowed bool
	// ExplicitDeny says a Deny statement matched (else no Allow did).
	ExplicitDeny bool
	// Resource is the first resource refused; Statement the Sid of the
	// Deny that refused it, if any.
	Resource  string
	Statement string
}

// Evaluate authorizes req under the identity-based policies: each
// resource separately, the request allowed when every one is.
func Evaluate(policies []Policy, req Request) Decision {
	for _, r := range req.Resources {
		if d := evaluateOne(policies, req, r); !d.Allowed {
			return d
		}
	}
	return Decision{Allowed: true}
}

func evaluateOne(policies []Policy, req Request, r Resource) Decision {
	ctx := contextKeys(req, r)
	allowed := false
	for _, p := range policies {
		for _, s := range p.Statements {
			if !s.applies(req.Action, r.ARN, ctx) {
				continue
			}
			if s.Effect == Deny {
				return Decision{ExplicitDeny: true, Resource: r.ARN, Statement: s.Sid}
			}
			allowed = true
		}
	}
	if !allowed {
		return Decision{Resource: r.ARN}
	}
	return Decision{Allowed: true}
}

// contextKeys are the condition keys of one resource's authorization, by
// lower-case name (key names are case-insensitive, values are not).
func contextKeys(req Request, r Resource) map[string][]string {
	ctx := map[string][]string{}
	for k, v := range req.Context {
		ctx[strings.ToLower(k)] = v
	}
	addTags(ctx, "aws:resourcetag/", r.Tags)
	if r.RequestTags != nil {
		addTags(ctx, "aws:requesttag/", r.RequestTags)
		ctx["aws:tagkeys"] = slices.Sorted(maps.Keys(r.RequestTags))
	}
	return ctx
}

// addTags adds each tag as the condition key prefix+key. The tag key in a
// condition key is case-insensitive: aws:RequestTag/TagKey1 matches a tag
// named TagKey1 or tagkey1, "but not both" (IAM's global condition keys,
// aws:RequestTag/tag-key and aws:ResourceTag/tag-key:
// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html).
// So tags whose keys differ only in case match no condition key: the key
// is absent, as for a tag not there (tag keys themselves are
// case-sensitive in EC2, so a resource may carry both).
func addTags(ctx map[string][]string, prefix string, tags map[string]string) {
	spellings := map[string]int{}
	for k := range tags {
		spellings[strings.ToLower(k)]++
	}
	for k, v := range tags {
		if lower := strings.ToLower(k); spellings[lower] == 1 {
			ctx[prefix+lower] = []string{v}
		}
	}
}

func (s Statement) applies(action, arn string, ctx map[string][]string) bool {
	actionMatch := slices.ContainsFunc(s.Action, func(p string) bool { return glob(strings.ToLower(p), strings.ToLower(action)) })
	if len(s.NotAction) > 0 {
		actionMatch = !slices.ContainsFunc(s.NotAction, func(p string) bool { return glob(strings.ToLower(p), strings.ToLower(action)) })
	}
	resourceMatch := slices.ContainsFunc(s.Resource, func(p string) bool { return arnLike(p, arn) })
	if len(s.NotResource) > 0 {
		resourceMatch = !slices.ContainsFunc(s.NotResource, func(p string) bool { return arnLike(p, arn) })
	}
	if !actionMatch || !resourceMatch {
		return false
	}
	for _, c := range s.Condition {
		if !c.holds(ctx) {
			return false
		}
	}
	return true
}

// operator compares a request's value with a policy's; negated operators
// hold when the request's value matches none of the policy's.
type operator struct {
	match   func(policy, value string) bool
	negated bool
}

var operators = map[string]operator{
	"StringEquals":              {match: func(p, v string) bool { return p == v }},
	"StringNotEquals":           {match: func(p, v string) bool { return p == v }, negated: true},
	"StringEqualsIgnoreCase":    {match: strings.EqualFold},
	"StringNotEqualsIgnoreCase": {match: strings.EqualFold, negated: true},
	"StringLike":                {match: glob},
	"StringNotLike":             {match: glob, negated: true},
	"ArnEquals":                 {match: func(p, v string) bool { return p == v }},
	"ArnNotEquals":              {match: func(p, v string) bool { return p == v }, negated: true},
	"ArnLike":                   {match: arnLike},
	"ArnNotLike":                {match: arnLike, negated: true},
	"Bool":                      {match: strings.EqualFold},
	"Null":                      {},
}

func (c Condition) holds(ctx map[string][]string) bool {
	values, present := ctx[strings.ToLower(c.Key)]
	present = present && len(values) > 0
	if c.Operator == "Null" {
		// "true": the key is absent; "false": it is present.
		return slices.ContainsFunc(c.Values, func(v string) bool { return strings.EqualFold(v, "true") == !present })
	}
	op := operators[c.Operator]
	// One request value satisfies the operator.
	satisfies := func(v string) bool {
		m := slices.ContainsFunc(c.Values, func(p string) bool { return op.match(p, v) })
		return m != op.negated
	}
	switch c.Qualifier {
	case "ForAllValues":
		// Every request value is among the policy's: true on none.
		if !present {
			return true
		}
		return !slices.ContainsFunc(values, func(v string) bool { return !satisfies(v) })
	case "ForAnyValue":
		if !present {
			return c.IfExists
		}
		return slices.ContainsFunc(values, satisfies)
	}
	if !present {
		// A missing key matches nothing: a positive operator is false, a
		// negated one true.
		return c.IfExists || op.negated
	}
	if op.negated {
		return !slices.ContainsFunc(values, func(v string) bool { return !satisfies(v) })
	}
	return slices.ContainsFunc(values, satisfies)
}

// glob matches value against pattern's * (any run) and ? (one
// character).
func glob(pattern, value string) bool {
	p, v := []rune(pattern), []rune(value)
	star, mark := -1, 0
	i, j := 0, 0
	for j < len(v) {
		switch {
		case i < len(p) && (p[i] == '?' || p[i] == v[j]):
			i++
			j++
		case i < len(p) && p[i] == '*':
			star, mark = i, j
			i++
		case star >= 0:
			i = star + 1
			mark++
			j = mark
		default:
			return false
		}
	}
	for i < len(p) && p[i] == '*' {
		i++
	}
	return i == len(p)
}

// arnLike matches an ARN against a pattern segment by segment (partition,
// service, region, account, resource), wildcards staying within their
// segment; * alone matches every resource.
func arnLike(pattern, arn string) bool {
	if pattern == "*" {
		return true
	}
	ps, as := strings.SplitN(pattern, ":", 6), strings.SplitN(arn, ":", 6)
	if len(ps) != 6 || len(as) != 6 {
		return glob(pattern, arn)
	}
	for i := range ps {
		if !glob(ps[i], as[i]) {
			return false
		}
	}
	return true
}
