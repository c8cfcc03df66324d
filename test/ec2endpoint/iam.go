package ec2endpoint

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// iamVersion is the IAM Query API's Version parameter: a form carrying
// it is an IAM request, whatever its Action.
const iamVersion = "2010-05-08"

// iamXMLNS is the namespace of every IAM response.
const iamXMLNS = "https://iam.amazonaws.com/doc/2010-05-08/"

// InstanceProfile is an instance profile the endpoint's IAM holds.
type InstanceProfile struct {
	Name, Path, ID, ARN string
	Created             time.Time
	// Roles are the role names in the profile: none or one, as IAM allows.
	Roles []string
	Tags  map[string]string
}

// iamState is the account's IAM: its roles (fixed at New) and the
// instance profiles created since, in memory only.
type iamState struct {
	mu       sync.Mutex
	roles    map[string]iamRole
	profiles map[string]*InstanceProfile
	nextID   int
}

type iamRole struct {
	Name, ID, ARN string
}

// DefaultRoles are the roles an endpoint's account has when Options.Roles
// is nil: the reference's conventional node role for the cluster, and
// Capstan's.
func DefaultRoles(clusterName string) []string {
	return []string{"KarpenterNodeRole-" + clusterName, "capstan-node-role"}
}

func (s *Server) newIAM() {
	s.iam.roles = map[string]iamRole{}
	s.iam.profiles = map[string]*InstanceProfile{}
	for i, name := range s.opts.Roles {
		s.iam.roles[name] = iamRole{Name: name, ID: fmt.Sprintf("AROA%017X", i+1),
			ARN: "arn:aws:iam::" + s.opts.AccountID + ":role/" + name}
	}
}

// InstanceProfiles are the instance profiles in the account, by name,
// for tests to inspect.
func (s *Server) InstanceProfiles() []InstanceProfile {
	s.iam.mu.Lock()
	defer s.iam.mu.Unlock()
	out := make([]InstanceProfile, 0, len(s.iam.profiles))
	for _, name := range slices.Sorted(maps.Keys(s.iam.profiles)) {
		p := *s.iam.profiles[name]
		p.Roles, p.Tags = slices.Clone(p.Roles), maps.Clone(p.Tags)
		out = append(out, p)
	}
	return out
}

// iamNameRE is IAM's pattern for role and instance profile names.
var iamNameRE = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)

// iamPathRE is IAM's pattern for paths: / alone or /segments/.
var iamPathRE = regexp.MustCompile(`^(/|/[\x21-\x7E]+/)$`)

// iamAction serves one IAM action; its result is marshalled inside
// <ActionResult>.
type iamAction func(p params) (any, error)

func (s *Server) iamActions() map[string]iamAction {
	return map[string]iamAction{
		"GetInstanceProfile":            s.getInstanceProfile,
		"CreateInstanceProfile":         s.createInstanceProfile,
		"AddRoleToInstanceProfile":      s.addRoleToInstanceProfile,
		"RemoveRoleFromInstanceProfile": s.removeRoleFromInstanceProfile,
		"DeleteInstanceProfile":         s.deleteInstanceProfile,
		"TagInstanceProfile":            s.tagInstanceProfile,
		"GetRole":                       s.getRole,
	}
}

// serveIAM answers an IAM Query request: <ActionResponse xmlns=IAM>
// with <ActionResult> and <ResponseMetadata><RequestId>, or IAM's
// <ErrorResponse>.
func (s *Server) serveIAM(ctx context.Context, w http.ResponseWriter, requestID string, p params) {
	name := p.get("Action")
	act, ok := s.iamActions()[name]
	if !ok {
		writeIAMError(w, requestID, errorf("InvalidAction", "Could not find operation %s for version %s", name, iamVersion))
		return
	}
	err := s.authorizeIAM(ctx, name, p)
	if d, denied := errors.AsType[*denial](err); denied {
		err = d.iamError()
	}
	var result any
	if err == nil {
		result, err = act(p)
	}
	if err != nil {
		apiErr, ok := errors.AsType[*apiError](err)
		if !ok {
			apiErr = &apiError{Code: "ServiceFailure", Message: err.Error(), Status: http.StatusInternalServerError}
		}
		writeIAMError(w, requestID, apiErr)
		return
	}
	type meta struct {
		RequestID string `xml:"RequestId"`
	}
	type envelope struct {
		XMLName  xml.Name
		Xmlns    string `xml:"xmlns,attr"`
		Result   any
		Metadata meta `xml:"ResponseMetadata"`
	}
	env := envelope{XMLName: xml.Name{Local: name + "Response"}, Xmlns: iamXMLNS, Metadata: meta{RequestID: requestID}}
	if result != nil {
		env.Result = resultElement{name: name + "Result", v: result}
	}
	body, err := xml.Marshal(env)
	if err != nil {
		writeIAMError(w, requestID, &apiError{Code: "ServiceFailure", Message: "encoding the response: " + err.Error(), Status: http.StatusInternalServerError})
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write(append([]byte(xml.Header), body...))
}

// resultElement marshals v as the element name.
type resultElement struct {
	name string
	v    any
}

func (r resultElement) MarshalXML(e *xml.Encoder, _ xml.StartElement) error {
	return e.EncodeElement(r.v, xml.StartElement{Name: xml.Name{Local: r.name}})
}

// writeIAMError writes IAM's error document. IAM answers NoSuchEntity
// with 404 and EntityAlreadyExists, DeleteConflict and LimitExceeded
// with 409; e.Status is used otherwise.
func writeIAMError(w http.ResponseWriter, requestID string, e *apiError) {
	status := e.Status
	switch e.Code {
	case "NoSuchEntity":
		status = http.StatusNotFound
	case "EntityAlreadyExists", "DeleteConflict", "LimitExceeded":
		status = http.StatusConflict
	}
	errType := "Sender"
	if status >= 500 {
		errType = "Receiver"
	}
	type errorXML struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	type errorResponse struct {
		XMLName   xml.Name `xml:"ErrorResponse"`
		Xmlns     string   `xml:"xmlns,attr"`
		Error     errorXML `xml:"Error"`
		RequestID string   `xml:"RequestId"`
	}
	body, _ := xml.Marshal(errorResponse{Xmlns: iamXMLNS, Error: errorXML{Type: errType, Code: e.Code, Message: e.Message}, RequestID: requestID})
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(status)
	_, _ = w.Write(append([]byte(xml.Header), body...))
}

// IAM's documents.

type iamTagXML struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type iamRoleXML struct {
	Path       string `xml:"Path"`
	RoleName   string `xml:"RoleName"`
	RoleID     string `xml:"RoleId"`
	Arn        string `xml:"Arn"`
	CreateDate string `xml:"CreateDate"`
}

type instanceProfileXML struct {
	Path                string       `xml:"Path"`
	InstanceProfileName string       `xml:"InstanceProfileName"`
	InstanceProfileID   string       `xml:"InstanceProfileId"`
	Arn                 string       `xml:"Arn"`
	CreateDate          string       `xml:"CreateDate"`
	Roles               []iamRoleXML `xml:"Roles>member"`
	Tags                []iamTagXML  `xml:"Tags>member,omitempty"`
}

type instanceProfileResult struct {
	InstanceProfile instanceProfileXML `xml:"InstanceProfile"`
}

type roleResult struct {
	Role iamRoleXML `xml:"Role"`
}

func (s *Server) profileXMLLocked(p *InstanceProfile) instanceProfileXML {
	out := instanceProfileXML{Path: p.Path, InstanceProfileName: p.Name, InstanceProfileID: p.ID, Arn: p.ARN,
		CreateDate: timestamp(p.Created), Roles: []iamRoleXML{}}
	for _, name := range p.Roles {
		out.Roles = append(out.Roles, s.roleXML(s.iam.roles[name]))
	}
	for _, k := range slices.Sorted(maps.Keys(p.Tags)) {
		out.Tags = append(out.Tags, iamTagXML{Key: k, Value: p.Tags[k]})
	}
	return out
}

func (s *Server) roleXML(r iamRole) iamRoleXML {
	return iamRoleXML{Path: "/", RoleName: r.Name, RoleID: r.ID, Arn: r.ARN, CreateDate: timestamp(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))}
}

// IAM's errors.

func validationError(format string, args ...any) *apiError {
	return errorf("ValidationError", format, args...)
}

func noSuchProfile(name string) *apiError {
	return errorf("NoSuchEntity", "Instance Profile %s cannot be found.", name)
}

// profileName is the form's InstanceProfileName, validated.
func profileName(p params) (string, error) {
	name := p.get("InstanceProfileName")
	if !iamNameRE.MatchString(name) {
		return "", validationError("1 validation error detected: Value '%s' at 'instanceProfileName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+", name)
	}
	return name, nil
}

func roleName(p params) (string, error) {
	name := p.get("RoleName")
	if !iamNameRE.MatchString(name) {
		return "", validationError("1 validation error detected: Value '%s' at 'roleName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+", name)
	}
	return name, nil
}

// iamTags are the form's Tags.member.N.Key/Value.
func iamTags(p params) (map[string]string, error) {
	tags := map[string]string{}
	for _, t := range p.items("Tags.member") {
		k := t.get("Key")
		if k == "" || len(k) > 128 || len(t.get("Value")) > 256 {
			return nil, validationError("tag key %q or its value is empty or too long", k)
		}
		tags[k] = t.get("Value")
	}
	if len(tags) > 50 {
		return nil, errorf("LimitExceeded", "Cannot exceed quota for TagsPerInstanceProfile: 50")
	}
	return tags, nil
}

// profileLocked is the instance profile the form names; s.iam.mu is
// held.
func (s *Server) profileLocked(p params) (*InstanceProfile, error) {
	name, err := profileName(p)
	if err != nil {
		return nil, err
	}
	prof, ok := s.iam.profiles[name]
	if !ok {
		return nil, noSuchProfile(name)
	}
	return prof, nil
}

func (s *Server) getInstanceProfile(p params) (any, error) {
	s.iam.mu.Lock()
	defer s.iam.mu.Unlock()
	prof, err := s.profileLocked(p)
	if err != nil {
		return nil, err
	}
	return instanceProfileResult{InstanceProfile: s.profileXMLLocked(prof)}, nil
}

func (s *Server) createInstanceProfile(p params) (any, error) {
	name, err := profileName(p)
	if err != nil {
		return nil, err
	}
	path := "/"
	if p.has("Path") {
		path = p.get("Path")
	}
	if len(path) > 512 || !iamPathRE.MatchString(path) {
		return nil, validationError("The specified value for path is invalid. It must begin and end with / and contain only alphanumeric characters and/or / characters.")
	}
	tags, err := iamTags(p)
	if err != nil {
		return nil, err
	}
	s.iam.mu.Lock()
	defer s.iam.mu.Unlock()
	if _, ok := s.iam.profiles[name]; ok {
		return nil, errorf("EntityAlreadyExists", "Instance Profile %s already exists.", name)
	}
	s.iam.nextID++
	prof := &InstanceProfile{Name: name, Path: path, ID: fmt.Sprintf("AIPA%017X", s.iam.nextID),
		ARN: "arn:aws:iam::" + s.opts.AccountID + ":instance-profile" + path + name, Created: s.opts.Clock.Now(), Tags: tags}
	s.iam.profiles[name] = prof
	return instanceProfileResult{InstanceProfile: s.profileXMLLocked(prof)}, nil
}

// profileAndRoleLocked are the instance profile and role a request names,
// or IAM's error when either does not exist; the caller holds s.iam.mu.
func (s *Server) profileAndRoleLocked(p params) (*InstanceProfile, string, error) {
	prof, err := s.profileLocked(p)
	if err != nil {
		return nil, "", err
	}
	role, err := roleName(p)
	if err != nil {
		return nil, "", err
	}
	if _, ok := s.iam.roles[role]; !ok {
		return nil, "", errorf("NoSuchEntity", "The role with name %s cannot be found.", role)
	}
	return prof, role, nil
}

func (s *Server) addRoleToInstanceProfile(p params) (any, error) {
	s.iam.mu.Lock()
	defer s.iam.mu.Unlock()
	prof, role, err := s.profileAndRoleLocked(p)
	if err != nil {
		return nil, err
	}
	if len(prof.Roles) > 0 {
		// Also when it is the same role, as IAM answers.
		return nil, errorf("LimitExceeded", "Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1")
	}
	prof.Roles = []string{role}
	return nil, nil
}

func (s *Server) removeRoleFromInstanceProfile(p params) (any, error) {
	s.iam.mu.Lock()
	defer s.iam.mu.Unlock()
	prof, role, err := s.profileAndRoleLocked(p)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(prof.Roles, role) {
		return nil, errorf("NoSuchEntity", "Role %s in Instance Profile %s cannot be found.", role, prof.Name)
	}
	prof.Roles = slices.DeleteFunc(prof.Roles, func(r string) bool { return r == role })
	return nil, nil
}

func (s *Server) deleteInstanceProfile(p params) (any, error) {
	s.iam.mu.Lock()
	defer s.iam.mu.Unlock()
	prof, err := s.profileLocked(p)
	if err != nil {
		return nil, err
	}
	if len(prof.Roles) > 0 {
		return nil, errorf("DeleteConflict", "Cannot delete entity, must remove roles from instance profile first.")
	}
	delete(s.iam.profiles, prof.Name)
	return nil, nil
}

func (s *Server) tagInstanceProfile(p params) (any, error) {
	tags, err := iamTags(p)
	if err != nil {
		return nil, err
	}
	s.iam.mu.Lock()
	defer s.iam.mu.Unlock()
	prof, err := s.profileLocked(p)
	if err != nil {
		return nil, err
	}
	merged := maps.Clone(prof.Tags)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, tags)
	if len(merged) > 50 {
		return nil, errorf("LimitExceeded", "Cannot exceed quota for TagsPerInstanceProfile: 50")
	}
	prof.Tags = merged
	return nil, nil
}

func (s *Server) getRole(p params) (any, error) {
	name, err := roleName(p)
	if err != nil {
		return nil, err
	}
	r, ok := s.iam.roles[name]
	if !ok {
		return nil, errorf("NoSuchEntity", "The role with name %s cannot be found.", name)
	}
	return roleResult{Role: s.roleXML(r)}, nil
}

// isIAM reports whether a request is IAM's: its Version, else the SigV4
// credential scope's service.
func isIAM(r *http.Request, p params) bool {
	if p.get("Version") == iamVersion {
		return true
	}
	return strings.Contains(r.Header.Get("Authorization"), "/iam/aws4_request")
}
