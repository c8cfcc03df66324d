package ec2endpoint

import (
	"fmt"
	"net/http"
	"strings"
)

// getParameter answers SSM's GetParameter (API_GetParameter) from
// Options.Parameters: the name may be the parameter's name or its ARN; an
// unknown one is ParameterNotFound, with HTTP 400, as SSM answers.
func (s *Server) getParameter(_ *http.Request, body []byte) (any, error) {
	var in struct {
		Name           string
		WithDecryption *bool
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	if in.Name == "" {
		return nil, &jsonError{Type: "ValidationException", Message: "1 validation error detected: Value null at 'name' failed to satisfy constraint: Member must not be null", Status: http.StatusBadRequest}
	}
	name := in.Name
	if _, after, ok := strings.Cut(name, ":parameter"); ok && strings.HasPrefix(name, "arn:") {
		name = after
	}
	v, ok := s.opts.Parameters[name]
	if !ok {
		return nil, &jsonError{Type: "ParameterNotFound", Message: "", Status: http.StatusBadRequest}
	}
	return map[string]any{"Parameter": map[string]any{
		"Name": name, "Type": "String", "Value": v, "Version": 1, "ARN": s.parameterARN(name), "DataType": "text",
	}}, nil
}

// parameterARN is a parameter's ARN: AWS's public parameters (under
// /aws/service/) name no account, as the reference's controller policy
// grants them (arn:aws:ssm:REGION::parameter/aws/service/*).
func (s *Server) parameterARN(name string) string {
	if strings.HasPrefix(name, "arn:") {
		return name
	}
	if !strings.HasPrefix(name, "/") {
		name = "/" + name
	}
	account := s.opts.AccountID
	if strings.HasPrefix(name, "/aws/service/") {
		account = ""
	}
	return fmt.Sprintf("arn:aws:ssm:%s:%s:parameter%s", s.profile.Spec.Region, account, name)
}
