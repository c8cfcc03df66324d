package iampolicy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Policy is an IAM policy document.
type Policy struct {
	// Name is where it came from (the template's resource name), for
	// messages.
	Name       string
	Statements []Statement
}

// Statement is one statement of a policy.
type Statement struct {
	Sid    string
	Effect Effect
	// Action or NotAction; Resource or NotResource: exactly one of each
	// pair is set.
	Action, NotAction     []string
	Resource, NotResource []string
	Condition             []Condition
}

// Effect is Allow or Deny.
type Effect string

// The two effects.
const (
	Allow Effect = "Allow"
	Deny  Effect = "Deny"
)

// Condition is one operator applied to one key, e.g.
// "ForAllValues:StringEquals": {"aws:TagKeys": [...]}.
type Condition struct {
	// Operator is the operator without qualifier or IfExists suffix.
	Operator string
	// Qualifier is ForAllValues, ForAnyValue or empty.
	Qualifier string
	// IfExists is the ...IfExists suffix.
	IfExists bool
	Key      string
	Values   []string
}

// Parse reads a policy document (JSON).
func Parse(name string, doc []byte) (Policy, error) {
	var raw struct {
		Version   string
		Statement json.RawMessage
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		return Policy{}, fmt.Errorf("parsing policy %s, %w", name, err)
	}
	var stmts []rawStatement
	if err := json.Unmarshal(raw.Statement, &stmts); err != nil {
		var one rawStatement
		if err1 := json.Unmarshal(raw.Statement, &one); err1 != nil {
			return Policy{}, fmt.Errorf("parsing policy %s's statements, %w", name, err)
		}
		stmts = []rawStatement{one}
	}
	p := Policy{Name: name}
	for i, rs := range stmts {
		s, err := rs.statement()
		if err != nil {
			return Policy{}, fmt.Errorf("policy %s statement %d (%s), %w", name, i, rs.Sid, err)
		}
		p.Statements = append(p.Statements, s)
	}
	return p, nil
}

type rawStatement struct {
	Sid                   string
	Effect                Effect
	Action, NotAction     stringList
	Resource, NotResource stringList
	Condition             map[string]map[string]stringList
}

func (rs rawStatement) statement() (Statement, error) {
	s := Statement{Sid: rs.Sid, Effect: rs.Effect, Action: rs.Action, NotAction: rs.NotAction, Resource: rs.Resource, NotResource: rs.NotResource}
	switch {
	case s.Effect != Allow && s.Effect != Deny:
		return Statement{}, fmt.Errorf("effect %q is neither Allow nor Deny", s.Effect)
	case (len(s.Action) == 0) == (len(s.NotAction) == 0):
		return Statement{}, errors.New("a statement needs exactly one of Action and NotAction")
	case (len(s.Resource) == 0) == (len(s.NotResource) == 0):
		return Statement{}, errors.New("a statement needs exactly one of Resource and NotResource")
	}
	for op, keys := range rs.Condition {
		c := Condition{Operator: op}
		if q, rest, ok := strings.Cut(op, ":"); ok {
			c.Qualifier, c.Operator = q, rest
			if q != "ForAllValues" && q != "ForAnyValue" {
				return Statement{}, fmt.Errorf("unknown condition qualifier %q", q)
			}
		}
		if base, ok := strings.CutSuffix(c.Operator, "IfExists"); ok && c.Operator != "Null" {
			c.Operator, c.IfExists = base, true
		}
		if _, known := operators[c.Operator]; !known {
			return Statement{}, fmt.Errorf("condition operator %q is not modelled", op)
		}
		for key, values := range keys {
			k := c
			k.Key, k.Values = key, values
			s.Condition = append(s.Condition, k)
		}
	}
	return s, nil
}

// stringList is a JSON string or list of strings (or other scalars, as
// Bool's true and false), as policy elements take either.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var many []any
	if err := json.Unmarshal(b, &many); err != nil {
		var one any
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		many = []any{one}
	}
	for _, v := range many {
		switch v := v.(type) {
		case string:
			*l = append(*l, v)
		case bool, float64:
			*l = append(*l, fmt.Sprint(v))
		default:
			return fmt.Errorf("policy value %v is not a string", v)
		}
	}
	return nil
}
