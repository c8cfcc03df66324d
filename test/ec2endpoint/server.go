package ec2endpoint

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/test/ec2endpoint/iampolicy"
)

// Defaults for the Options a caller leaves unset.
const (
	DefaultClusterName = "capstan"
	// DefaultAccountID is the account the endpoint's resources belong to,
	// the owner of the default profile's reservations.
	DefaultAccountID = "111122223333"
	// DefaultKubernetesVersion is the minor the synthesized EKS AMIs are
	// built for: the one Capstan's client-go speaks.
	DefaultKubernetesVersion = "1.37"
)

// xmlns is the namespace of every EC2 response.
const xmlns = "http://ec2.amazonaws.com/doc/2016-11-15/"

// nodeClassName is the SimNodeClass every launch names: an EC2 request
// carries all a launch needs (max prices, reservations), so the class
// holds nothing.
const nodeClassName = "ec2"

// Options configure an endpoint.
type Options struct {
	// Profile is the simulated cloud, aws style; nil is the embedded
	// default profile, as `capstan controller` runs without
	// --cloud-profile.
	Profile *simv1alpha1.CloudProfile
	// Catalog is the instance types; nil is the embedded catalog.
	Catalog []catalog.InstanceType
	// Clock drives the cloud (launch latency, the profile's events); nil
	// is the wall clock.
	Clock clock.Clock
	// StatePath is the simulated cloud's inventory file; empty keeps it in
	// memory. Instances, their tags and reservations' use survive a
	// restart through it; launch templates live in memory only.
	StatePath string
	// Kubelet registers launched instances' Nodes; nil keeps them in
	// memory. simapi.Kubelet makes them real Nodes kwok runs.
	Kubelet sim.Kubelet
	// ClusterName is the value of the karpenter.sh/discovery tag on the
	// synthesized subnets, security groups and custom AMI.
	ClusterName string
	// AccountID owns the synthesized resources; a 12-digit id.
	AccountID string
	// KubernetesVersions are the minors the synthesized EKS AMIs exist
	// for; nil is DefaultKubernetesVersion.
	KubernetesVersions []string
	// InterruptionQueue names the SQS queue that carries the cloud's
	// interruption notices; empty is ClusterName, Karpenter's convention.
	InterruptionQueue string
	// Roles are the IAM roles the account has, by name; nil is
	// DefaultRoles(ClusterName). Adding an unknown role to an instance
	// profile is NoSuchEntity, as IAM answers.
	Roles []string
	// InstanceMetadataTags is the account's default for instance tags in
	// instance metadata (EC2's ModifyInstanceMetadataDefaults): true
	// exposes them in every instance whose launch template does not
	// disable them, and EC2 then refuses tag keys with "/".
	InstanceMetadataTags bool
	// OmitFleetInstancePlacement answers CreateFleet as EC2 did before
	// its model added SubnetId, AvailabilityZone and AvailabilityZoneId
	// to fleetInstanceSet items (ec2 SDK v1.315.0): without them.
	OmitFleetInstancePlacement bool
	// PolicyTemplates are CloudFormation templates holding the caller's
	// identity-based policies (docs/iam): when any is given, every request
	// not signed with AdminAccessKeyID is authorized under them as IAM
	// would (authorize), and refused with the service's AccessDenied
	// answer. Their ${...} are filled with the endpoint's account, region,
	// cluster, node role and queue (policyVariables).
	PolicyTemplates [][]byte
	// PrincipalARN is the caller named in refusals; empty is an IRSA
	// session of a capstan-controller role in AccountID.
	PrincipalARN string
	// ClusterEndpoint and ClusterCABundle (base64 PEM) are the EKS
	// cluster's, as DescribeCluster answers them; without either the
	// cluster is still CREATING. ServiceCIDR is its service CIDR; empty
	// is 172.20.0.0/16, EKS's pick for the endpoint's VPC.
	ClusterEndpoint, ClusterCABundle, ServiceCIDR string
	// PlacementGroups are the account's placement groups, which
	// DescribePlacementGroups answers.
	PlacementGroups []PlacementGroup
	// Parameters are the SSM parameters GetParameter answers, by name
	// (a path such as /aws/service/... or /my/ami).
	Parameters map[string]string
	// CreateFleetLatency is how long CreateFleet takes to answer, on
	// Clock: real EC2 takes seconds to place an instant fleet, which a
	// caller that launches one fleet at a time pays per node. Requests
	// wait it out side by side, as EC2 serves them; zero answers at once.
	CreateFleetLatency time.Duration
}

// Server serves the EC2 Query API over the simulated cloud. It is an
// http.Handler and safe for concurrent use.
type Server struct {
	opts    Options
	cloud   *sim.Cloud
	profile *simv1alpha1.CloudProfile
	// types are the catalog's types sold in the profile's region, in
	// catalog order, and byName indexes them.
	types  []catalog.InstanceType
	byName map[string]catalog.InstanceType
	// typeInfo are the served types as DescribeInstanceTypes describes
	// them, and published their published facts, by name.
	typeInfo  map[string]instanceTypeXML
	published map[string]published
	actions   map[string]action
	// imagesMu guards images: the synthesized AMIs and the copies
	// (imageList).
	imagesMu sync.RWMutex
	images   []image
	// network are the VPC's subnets; addressMu serializes the launches'
	// taking of their addresses.
	network   []subnet
	addressMu sync.Mutex

	mu sync.Mutex
	// templates are the launch templates by id; nextID numbers them and
	// fleets.
	templates map[string]*launchTemplate
	nextID    int

	// fleetMu serializes CreateFleet; fleets are the answers by client
	// token.
	fleetMu sync.Mutex
	fleets  map[string]fleetRecord

	queue queue
	// status is the instance status checks tests impaired.
	status statusState

	iam iamState

	// policies are Options.PolicyTemplates' policies.
	policies []iampolicy.Policy
	// kubelet registers the Nodes of instances whose user data joins
	// the cluster (join.go).
	kubelet *joiningKubelet
}

// New builds the simulated cloud from opts and an endpoint serving it.
// Close releases the cloud's state file.
func New(opts Options) (*Server, error) {
	if opts.Profile == nil {
		p, err := sim.DefaultProfile()
		if err != nil {
			return nil, fmt.Errorf("loading the default cloud profile, %w", err)
		}
		opts.Profile = p
	}
	profile := opts.Profile.DeepCopy()
	sim.Default(profile)
	if profile.Spec.Style != simv1alpha1.CloudStyleAWS {
		return nil, fmt.Errorf("serving EC2 over a %s-style cloud profile: only aws style has EC2's semantics", profile.Spec.Style)
	}
	if opts.Catalog == nil {
		types, err := servedCatalog()
		if err != nil {
			return nil, fmt.Errorf("loading the instance type catalog, %w", err)
		}
		opts.Catalog = types
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.ClusterName == "" {
		opts.ClusterName = DefaultClusterName
	}
	if opts.AccountID == "" {
		opts.AccountID = DefaultAccountID
	}
	if len(opts.KubernetesVersions) == 0 {
		opts.KubernetesVersions = []string{DefaultKubernetesVersion}
	}
	if opts.Roles == nil {
		opts.Roles = DefaultRoles(opts.ClusterName)
	}
	if opts.InterruptionQueue == "" {
		opts.InterruptionQueue = opts.ClusterName
	}
	if opts.ServiceCIDR == "" {
		opts.ServiceCIDR = defaultServiceCIDR
	}
	if !queueNameOK(opts.InterruptionQueue) {
		return nil, fmt.Errorf("interruption queue name %q: SQS takes up to 80 letters, digits, - and _", opts.InterruptionQueue)
	}
	if opts.PrincipalARN == "" {
		opts.PrincipalARN = defaultPrincipal(opts.AccountID)
	}
	subnets, err := network(profile.Spec)
	if err != nil {
		return nil, fmt.Errorf("laying out the profile's subnets, %w", err)
	}
	s := &Server{opts: opts, profile: profile, network: subnets, byName: map[string]catalog.InstanceType{}, templates: map[string]*launchTemplate{}, fleets: map[string]fleetRecord{}, queue: queue{noticed: map[string]bool{}}}
	networks, table := networkLimits(), publishedTypes()
	s.typeInfo, s.published = map[string]instanceTypeXML{}, map[string]published{}
	for _, t := range opts.Catalog {
		if _, ok := t.OnDemandPrice(profile.Spec.Region); !ok {
			continue
		}
		n, ok := networks[t.Name]
		if !ok {
			return nil, fmt.Errorf("instance type %s: AWS publishes no network limits for it", t.Name)
		}
		s.types = append(s.types, t)
		s.byName[t.Name] = t
		s.published[t.Name] = publishedOf(t, table)
		s.typeInfo[t.Name] = instanceTypeInfo(t, n, s.published[t.Name])
	}
	if err := s.loadPolicies(); err != nil {
		return nil, err
	}
	s.images = s.synthesizeImages()
	s.actions = s.actionTable()
	s.kubelet = newJoiningKubelet(opts.Kubelet)
	s.newIAM()
	cloud, err := sim.New(sim.Options{
		Profile: profile, Catalog: opts.Catalog, Clock: opts.Clock, StatePath: opts.StatePath,
		NodeClasses: nodeClasses{}, Kubelet: s.kubelet,
		Naming: sim.Naming{ProviderID: providerID, NodeName: s.privateDNSName},
	})
	if err != nil {
		return nil, fmt.Errorf("starting the simulated cloud, %w", err)
	}
	s.cloud = cloud
	return s, nil
}

// Cloud is the simulated cloud behind the endpoint, for tests to inspect
// (Snapshot) and tools to drive.
func (s *Server) Cloud() *sim.Cloud { return s.cloud }

// Close releases the cloud's state file; the server must not be used
// after.
func (s *Server) Close() error { return s.cloud.Close() }

// providerID is the spec.providerID the AWS cloud provider reports.
func providerID(inst *sim.Instance) string { return "aws:///" + inst.Zone + "/" + inst.ID }

// nodeClasses gives every launch the same empty SimNodeClass.
type nodeClasses struct{}

func (nodeClasses) SimNodeClass(_ context.Context, name string) (*simv1alpha1.SimNodeClass, error) {
	nc := &simv1alpha1.SimNodeClass{}
	nc.Name = name
	return nc, nil
}

// apiError is an EC2 error: its code, message and HTTP status.
type apiError struct {
	Code, Message string
	Status        int
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

// errorf is a client error (HTTP 400) with EC2's code.
func errorf(code, format string, args ...any) *apiError {
	return &apiError{Code: code, Message: fmt.Sprintf(format, args...), Status: http.StatusBadRequest}
}

// response is an action's result, marshalled inside <ActionResponse>.
// Every response type embeds responseMeta.
type response interface {
	setMeta(requestID string)
}

// responseMeta is what every EC2 response carries.
type responseMeta struct {
	Xmlns     string `xml:"xmlns,attr"`
	RequestID string `xml:"requestId"`
}

func (m *responseMeta) setMeta(requestID string) { m.Xmlns, m.RequestID = xmlns, requestID }

// action serves one EC2 action.
type action func(ctx context.Context, p params) (response, error)

func (s *Server) actionTable() map[string]action {
	return map[string]action{
		"DescribeInstanceTypes":          s.describeInstanceTypes,
		"DescribeInstanceTypeOfferings":  s.describeInstanceTypeOfferings,
		"DescribeAvailabilityZones":      s.describeAvailabilityZones,
		"DescribeSpotPriceHistory":       s.describeSpotPriceHistory,
		"DescribeSubnets":                s.describeSubnets,
		"DescribeSecurityGroups":         s.describeSecurityGroups,
		"DescribeImages":                 s.describeImages,
		"DescribeCapacityReservations":   s.describeCapacityReservations,
		"CreateLaunchTemplate":           s.createLaunchTemplate,
		"DescribeLaunchTemplates":        s.describeLaunchTemplates,
		"DescribeLaunchTemplateVersions": s.describeLaunchTemplateVersions,
		"DeleteLaunchTemplate":           s.deleteLaunchTemplate,
		"CreateFleet":                    s.createFleet,
		"DescribeInstances":              s.describeInstances,
		"TerminateInstances":             s.terminateInstances,
		"CreateTags":                     s.createTags,
		"DescribePlacementGroups":        s.describePlacementGroups,
		"CopyImage":                      s.copyImage,
		"DescribeInstanceStatus":         s.describeInstanceStatus,
	}
}

// ServeHTTP implements http.Handler: the EC2 Query protocol, a form
// (POST body or query string) naming an Action; and, for requests with
// an X-Amz-Target, the SQS and Price List JSON protocols (serveJSON);
// the IAM Query protocol, a form with IAM's Version (serveIAM); and
// EKS's REST-JSON paths (serveEKS).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := newRequestID()
	w.Header().Set("x-amzn-RequestId", requestID)
	ctx := context.WithValue(r.Context(), callerKey{}, callerOf(r))
	r = r.WithContext(ctx)
	if action, cluster, ok := eksRoute(r); ok {
		s.serveEKS(ctx, w, action, cluster)
		return
	}
	if r.Header.Get("X-Amz-Target") != "" {
		s.serveJSON(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		writeError(w, requestID, errorf("MalformedQueryString", "the request is not a form: %v", err))
		return
	}
	p := params(r.Form)
	if isIAM(r, p) {
		s.serveIAM(ctx, w, requestID, p)
		return
	}
	name := p.get("Action")
	if name == "" {
		writeError(w, requestID, errorf("MissingAction", "The request must contain the parameter Action"))
		return
	}
	act, ok := s.actions[name]
	if !ok {
		writeError(w, requestID, errorf("InvalidAction", "The action %s is not valid for this web service.", name))
		return
	}
	// Authorized first: a dry run reports whether the caller may.
	err := s.authorizeEC2(ctx, name, p)
	if err == nil && p.get("DryRun") == "true" {
		// The caller may: the dry run succeeds, which EC2 reports as
		// this error.
		writeError(w, requestID, &apiError{Code: "DryRunOperation", Message: "Request would have succeeded, but DryRun flag is set.", Status: http.StatusPreconditionFailed})
		return
	}
	var resp response
	if err == nil {
		resp, err = act(ctx, p)
	}
	if err != nil {
		if d, ok := errors.AsType[*denial](err); ok {
			err = d.ec2Error()
		}
		var apiErr *apiError
		if !errors.As(err, &apiErr) {
			apiErr = &apiError{Code: "InternalError", Message: "An internal error has occurred: " + err.Error(), Status: http.StatusInternalServerError}
		}
		writeError(w, requestID, apiErr)
		return
	}
	resp.setMeta(requestID)
	var body bytes.Buffer
	body.WriteString(xml.Header)
	if err := xml.NewEncoder(&body).EncodeElement(resp, xml.StartElement{Name: xml.Name{Local: name + "Response"}}); err != nil {
		writeError(w, requestID, &apiError{Code: "InternalError", Message: "encoding the response: " + err.Error(), Status: http.StatusInternalServerError})
		return
	}
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	_, _ = w.Write(body.Bytes())
}

// errorResponse is EC2's error document.
type errorResponse struct {
	XMLName   xml.Name    `xml:"Response"`
	Errors    []errorBody `xml:"Errors>Error"`
	RequestID string      `xml:"RequestID"`
}

type errorBody struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

func writeError(w http.ResponseWriter, requestID string, e *apiError) {
	body, _ := xml.Marshal(errorResponse{Errors: []errorBody{{Code: e.Code, Message: e.Message}}, RequestID: requestID})
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(e.Status)
	_, _ = w.Write(append([]byte(xml.Header), body...))
}

// newRequestID is a random UUID, the form of EC2's request ids.
func newRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// newIDLocked numbers a new resource: prefix and 17 hex digits, EC2's
// long id form. The caller holds s.mu.
func (s *Server) newIDLocked(prefix string) string {
	s.nextID++
	return fmt.Sprintf("%s-%017x", prefix, s.nextID)
}

// zoneIndex is a zone's place in the profile, -1 if it has none.
func (s *Server) zoneIndex(zone string) int { return slices.Index(s.profile.Spec.Zones, zone) }

// architecture is EC2's name for a catalog architecture.
func architecture(arch string) string {
	if arch == catalog.ArchARM64 {
		return "arm64"
	}
	return "x86_64"
}

// dnsSuffix is the region's private DNS domain.
func (s *Server) dnsSuffix() string {
	if s.profile.Spec.Region == "us-east-1" {
		return "ec2.internal"
	}
	return s.profile.Spec.Region + ".compute.internal"
}

// timestamp is EC2's time format.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// idNumber is the number in an id like i-00000000001a.
func idNumber(id string) uint64 {
	var n uint64
	_, _ = fmt.Sscanf(id[strings.IndexByte(id, '-')+1:], "%x", &n)
	return n
}
