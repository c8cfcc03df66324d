package sim

import (
	"embed"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/readlimit"
)

const (
	// ProfileAPIVersion and ProfileKind mark the CloudProfile document;
	// a file's other documents (NodePools, workloads) are for `simulate`.
	ProfileAPIVersion = simv1alpha1.Group + "/v1alpha1"
	ProfileKind       = "CloudProfile"
	// DefaultRegion and DefaultLaunchLatency fill a profile that omits them.
	DefaultRegion        = "us-west-2"
	DefaultLaunchLatency = 2 * time.Second
	defaultProfileFile   = "default-profile.yaml"
)

//go:embed default-profile.yaml
var defaultProfileFS embed.FS

// ProfileError is everything wrong with one CloudProfile. Error prints one
// problem per line, each prefixed with Source so the user finds it.
type ProfileError struct {
	// Source locates the document, e.g. "profile.yaml, document 2";
	// empty for a profile built in memory.
	Source string
	Errs   field.ErrorList
}

// Error implements error.
func (e *ProfileError) Error() string {
	lines := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		lines[i] = err.Error()
		if e.Source != "" {
			lines[i] = e.Source + ": " + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// DefaultProfile is the embedded default cloud: aws style, us-west-2,
// three zones, unlimited capacity, two reservations nothing selects by
// default, no events. Every call returns a new value.
func DefaultProfile() (*simv1alpha1.CloudProfile, error) {
	data, err := defaultProfileFS.ReadFile(defaultProfileFile)
	if err != nil {
		return nil, fmt.Errorf("reading cloud profile %s, %w", defaultProfileFile, err)
	}
	return LoadProfileBytes(defaultProfileFile, data)
}

// LoadProfile reads the one CloudProfile in a YAML file of one or more
// documents, then defaults and validates it against the catalog. The file
// is read as simulate's manifests are: a regular file of at most
// readlimit.MaxDocumentBytes.
func LoadProfile(path string) (*simv1alpha1.CloudProfile, error) {
	data, err := readlimit.File(path, readlimit.MaxDocumentBytes)
	if err != nil {
		return nil, fmt.Errorf("reading cloud profile %s, %w", path, err)
	}
	return LoadProfileBytes(path, data)
}

// LoadProfileBytes is LoadProfile for data read elsewhere; name is the
// file name errors report. Documents are numbered from 1, not counting
// empty or comment-only ones. Decoding is strict: an unknown field is an
// error naming its path.
func LoadProfileBytes(name string, data []byte) (*simv1alpha1.CloudProfile, error) {
	docs := SplitDocuments(data)
	var found []int
	var others []string
	for i, doc := range docs {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("decoding %s, %w", docSource(name, i), err)
		}
		switch {
		case tm.Kind != ProfileKind:
			others = append(others, tm.Kind)
		case tm.APIVersion != ProfileAPIVersion:
			return nil, fmt.Errorf("%s: apiVersion %q is not supported, want %q", docSource(name, i), tm.APIVersion, ProfileAPIVersion)
		default:
			found = append(found, i)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%s: no %s %s among its %d documents, of kinds %q", name, ProfileAPIVersion, ProfileKind, len(docs), others)
	case 1:
	default:
		return nil, fmt.Errorf("%s: documents %d and %d are both %ss; a file holds exactly one", name, found[0]+1, found[1]+1, ProfileKind)
	}
	return DecodeProfile(docSource(name, found[0]), docs[found[0]])
}

// DecodeProfile decodes one CloudProfile document strictly, then defaults
// and validates it against the catalog, as LoadProfileBytes does; src
// locates the document in errors, e.g. "profile.yaml, document 2". It is
// for readers of mixed streams, such as simulate's manifests.
func DecodeProfile(src string, doc []byte) (*simv1alpha1.CloudProfile, error) {
	types, err := catalog.Load()
	if err != nil {
		return nil, fmt.Errorf("loading cloud profile %s, %w", src, err)
	}
	p, missing, err := decodeProfile(src, doc)
	if err != nil {
		return nil, err
	}
	Default(p)
	if missing = append(missing, validateProfile(p, types)...); len(missing) > 0 {
		return nil, &ProfileError{Source: src, Errs: missing}
	}
	return p, nil
}

func docSource(name string, i int) string { return fmt.Sprintf("%s, document %d", name, i+1) }

// SplitDocuments splits a YAML stream at its "---" lines and drops the
// documents that hold only blank lines and comments, as kubectl does, so
// document i of the result is the one users count as i+1.
func SplitDocuments(data []byte) [][]byte {
	var docs [][]byte
	for _, doc := range regexp.MustCompile(`(?m)^---[ \t]*(#.*)?\r?$`).Split(string(data), -1) {
		for line := range strings.Lines(doc) {
			if t := strings.TrimSpace(line); t != "" && t[0] != '#' {
				docs = append(docs, []byte(doc))
				break
			}
		}
	}
	return docs
}

// decodeProfile decodes strictly in two passes: the unstructured converter
// names unknown fields by path and matches keys case-sensitively, as
// encoding/json does not; yaml.UnmarshalStrict then rejects duplicate keys
// and explains type errors. missing lists the required counts the
// document leaves out, which the decoded ints cannot tell from 0.
func decodeProfile(src string, doc []byte) (p *simv1alpha1.CloudProfile, missing field.ErrorList, err error) {
	var generic map[string]any
	if err := utilyaml.Unmarshal(doc, &generic); err != nil {
		return nil, nil, fmt.Errorf("decoding %s, %w", src, err)
	}
	p = &simv1alpha1.CloudProfile{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(generic, p, true); runtime.IsStrictDecodingError(err) {
		return nil, nil, fmt.Errorf("decoding %s, %w", src, err)
	}
	p = &simv1alpha1.CloudProfile{}
	if err := yaml.UnmarshalStrict(doc, p); err != nil {
		if errs := MalformedValues(generic, reflect.TypeFor[simv1alpha1.CloudProfile](), nil); len(errs) > 0 {
			return nil, nil, &ProfileError{Source: src, Errs: errs}
		}
		return nil, nil, fmt.Errorf("decoding %s, %w", src, err)
	}
	spec, _ := generic["spec"].(map[string]any)
	missing = append(missingCounts(spec, "capacity", "a pool's count is how many instances it can launch; write 0 for none"),
		missingCounts(spec, "reservations", "a reservation's count is how many instances it holds")...)
	return p, missing, nil
}

// missingCounts lists the items of spec's list that have no count.
func missingCounts(spec map[string]any, list, detail string) field.ErrorList {
	items, _ := spec[list].([]any)
	var errs field.ErrorList
	for i, item := range items {
		if m, ok := item.(map[string]any); ok {
			if v, set := m["count"]; !set || v == nil {
				errs = append(errs, field.Required(field.NewPath("spec", list).Index(i).Child("count"), detail))
			}
		}
	}
	return errs
}

// Default fills what a profile leaves unset: style aws, region us-west-2,
// launchLatency 2s, and three zones named the style's way (us-west-2a;
// us-west-2-a for gcp; us-west-2-1 for azure). A zero launchLatency reads
// as unset, since the field cannot tell them apart; write 1ms for nodes
// that register at once.
func Default(p *simv1alpha1.CloudProfile) {
	s := &p.Spec
	if s.Style == "" {
		s.Style = simv1alpha1.CloudStyleAWS
	}
	if s.Region == "" {
		s.Region = DefaultRegion
	}
	if s.LaunchLatency.Duration == 0 {
		s.LaunchLatency = metav1.Duration{Duration: DefaultLaunchLatency}
	}
	if len(s.Zones) == 0 {
		sep, suffixes := "", "abc"
		switch s.Style {
		case simv1alpha1.CloudStyleGCP:
			sep = "-"
		case simv1alpha1.CloudStyleAzure:
			sep, suffixes = "-", "123"
		}
		for _, suffix := range suffixes {
			s.Zones = append(s.Zones, s.Region+sep+string(suffix))
		}
	}
}
