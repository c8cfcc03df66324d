package manifests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/config/crd"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/flavors"
	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/printable"
	"github.com/capstan-dev/capstan/pkg/readlimit"
)

// Loader reads manifests into a Set. NewLoader compiles the CRDs'
// validators, CEL rules included, so make one Loader per run and read
// every stream with it.
type Loader struct {
	custom   map[schema.GroupVersionKind]customKind
	builtins map[schema.GroupVersionKind]builtinKind
	// versions maps each kind read to the apiVersions it is read at, so
	// a known kind at another version is an error rather than skipped.
	versions map[schema.GroupKind][]string
}

// NewLoader builds the validators of Capstan's embedded CRDs.
func NewLoader() (*Loader, error) {
	crds, err := crd.CRDs()
	if err != nil {
		return nil, fmt.Errorf("loading crds, %w", err)
	}
	custom, err := customKinds(crds)
	if err != nil {
		return nil, err
	}
	l := &Loader{custom: custom, builtins: builtinKinds(), versions: map[schema.GroupKind][]string{}}
	gvks := []schema.GroupVersionKind{profileGVK(), flavors.OpenModelGVK, gang.WorkloadPodGroupV1beta1, gang.WorkloadPodGroupV1alpha3, gang.PluginPodGroup}
	for gvk := range l.custom {
		gvks = append(gvks, gvk)
	}
	for gvk := range l.builtins {
		gvks = append(gvks, gvk)
	}
	for _, gvk := range gvks {
		l.versions[gvk.GroupKind()] = append(l.versions[gvk.GroupKind()], gvk.GroupVersion().String())
	}
	return l, nil
}

func profileGVK() schema.GroupVersionKind {
	return simv1alpha1.SchemeGroupVersion.WithKind(sim.ProfileKind)
}

// Load reads the manifests at paths with a new Loader; see Loader.Load.
func Load(paths []string, stdin io.Reader) (*Set, error) {
	l, err := NewLoader()
	if err != nil {
		return nil, err
	}
	return l.Load(paths, stdin)
}

// Read reads one stream with a new Loader; see Loader.Read. Reading many
// streams, make one Loader and call its Read.
func Read(source string, data []byte, into *Set) error {
	l, err := NewLoader()
	if err != nil {
		return err
	}
	return l.Read(source, data, into)
}

// Load reads every path in turn: a file whatever its name, a directory's
// *.yaml, *.yml and *.json files at any depth in path order, or stdin for
// "-". It reports every bad document, not just the first, and returns no
// Set if there is one.
func (l *Loader) Load(paths []string, stdin io.Reader) (*Set, error) {
	set := &Set{}
	var errs []error
	read := func(source string, data []byte, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("reading %s, %w", source, err))
			return
		}
		errs = append(errs, joinErrors(l.read(source, data, set)))
	}
	for _, path := range paths {
		if path == "-" {
			data, err := readlimit.All(stdin, MaxStreamBytes)
			read("stdin", data, err)
			continue
		}
		files, err := manifestFiles(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range files {
			// A regular file: a named pipe among a directory's files would
			// block the read for good.
			data, err := readlimit.File(f, MaxStreamBytes)
			read(printable.Quote(f), data, err)
		}
	}
	if err := joinErrors(errs); err != nil {
		return nil, err
	}
	set.sortTimeline()
	return set, nil
}

// manifestFiles is path itself, or the manifests under directory path.
func manifestFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s, %w", printable.Quote(path), err)
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ext := filepath.Ext(p); !d.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s, %w", printable.Quote(path), err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("reading %s, no *.yaml, *.yml or *.json files in the directory", printable.Quote(path))
	}
	// WalkDir sorts each directory, which orders "a/x" before "a-b"; a
	// plain sort is the order users expect.
	slices.Sort(files)
	return files, nil
}

// Read adds the objects of one YAML or JSON stream to into; source names
// it in errors. Documents count from 1, skipping empty and comment-only
// ones, and a List's items are read in turn. Every bad document is
// reported, each as a *DocumentError (CloudProfiles as a
// *sim.ProfileError), joined.
func (l *Loader) Read(source string, data []byte, into *Set) error {
	errs := l.read(source, data, into)
	into.sortTimeline()
	return joinErrors(errs)
}

// read is Read without ordering the timeline, which Load does once for
// all its streams.
func (l *Loader) read(source string, data []byte, into *Set) []error {
	var errs []error
	for i, doc := range sim.SplitDocuments(data) {
		src := fmt.Sprintf("%s, document %d", source, i+1)
		obj, err := decodeDocument(doc)
		if err != nil {
			errs = append(errs, &DocumentError{Source: src, Errs: []error{err}})
			continue
		}
		errs = append(errs, l.readObject(src, obj, into)...)
	}
	return errs
}

// decodeDocument decodes as the API server does a request body: duplicate
// keys are an error, and whole numbers are int64.
func decodeDocument(doc []byte) (map[string]any, error) {
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("decoding an object, %w", err)
	}
	return obj, nil
}

func (l *Loader) readObject(src string, obj map[string]any, set *Set) []error {
	u := &unstructured.Unstructured{Object: obj}
	gvk := u.GroupVersionKind()
	fail := func(errs ...error) []error {
		return []error{&DocumentError{Source: src, Kind: gvk.Kind, Name: u.GetName(), Errs: errs}}
	}
	if u.GetAPIVersion() == "" || gvk.Kind == "" {
		var errs []error
		for _, f := range []string{"apiVersion", "kind"} {
			if s, _, _ := unstructured.NestedString(obj, f); s == "" {
				errs = append(errs, field.Required(field.NewPath(f), ""))
			}
		}
		return fail(errs...)
	}
	if gvk.Kind == "List" && gvk.GroupVersion().String() == "v1" {
		return l.readList(src, obj, set)
	}
	want, ok := l.versions[gvk.GroupKind()]
	if !ok {
		set.Skipped = append(set.Skipped, Skipped{Source: src, APIVersion: u.GetAPIVersion(), Kind: gvk.Kind, Name: u.GetName()})
		return nil
	}
	if !slices.Contains(want, gvk.GroupVersion().String()) {
		return fail(field.NotSupported(field.NewPath("apiVersion"), u.GetAPIVersion(), want))
	}
	key := l.identify(u)
	// A copy of an object is an error, unless the timing annotations make
	// it a later version (Set.conflict).
	t, timingErrs := timingOf(gvk.GroupKind(), u.GetAnnotations())
	if len(timingErrs) == 0 {
		if err := set.conflict(key, t); err != nil {
			return fail(err)
		}
	}
	// Read on its own, so it joins the objects applied at the start or
	// the timeline; the kind's errors are reported with the timing's.
	read := &Set{}
	errs := l.readKnown(src, u, read)
	if len(timingErrs) > 0 {
		return append(fail(fieldErrors(timingErrs)...), errs...)
	}
	if len(errs) > 0 {
		return errs
	}
	set.add(src, key, t, read)
	set.record(key, src, t)
	set.Warnings = append(set.Warnings, warnings(src, read)...)
	return nil
}

// identify sets u's namespace as applying it would (scope) and returns
// its identity: cluster-scoped kinds, the CloudProfile and the OpenModel
// have no namespace.
func (l *Loader) identify(u *unstructured.Unstructured) objectKey {
	gvk := u.GroupVersionKind()
	key := objectKey{group: gvk.Group, kind: gvk.Kind, name: u.GetName()}
	c, isCustom := l.custom[gvk]
	b, isBuiltin := l.builtins[gvk]
	switch {
	case isCustom:
		scope(u, c.version.namespaced)
	case isBuiltin:
		scope(u, b.namespaced)
	case isPodGroup(gvk):
		scope(u, true)
	default:
		return key
	}
	key.namespace = u.GetNamespace()
	return key
}

// readKnown reads u, scoped, of a kind simulate models at the apiVersion
// it reads, into set.
func (l *Loader) readKnown(src string, u *unstructured.Unstructured, set *Set) []error {
	gvk := u.GroupVersionKind()
	fail := func(errs ...error) []error {
		return []error{&DocumentError{Source: src, Kind: gvk.Kind, Name: u.GetName(), Errs: errs}}
	}
	if c, ok := l.custom[gvk]; ok {
		if errs := c.read(context.Background(), u.Object, set); len(errs) > 0 {
			return fail(errs...)
		}
		return nil
	}
	if b, ok := l.builtins[gvk]; ok {
		if errs := b.read(u.Object, set); len(errs) > 0 {
			return fail(errs...)
		}
		return nil
	}
	switch gvk {
	case profileGVK():
		data, err := json.Marshal(u.Object)
		if err != nil {
			return fail(err)
		}
		p, err := sim.DecodeProfile(describe(src, gvk.Kind, u.GetName()), data)
		if err != nil {
			return []error{err}
		}
		set.CloudProfiles = append(set.CloudProfiles, Profile{Source: src, Profile: p})
	case flavors.OpenModelGVK:
		m, err := flavors.FromUnstructured(u)
		if err != nil {
			return fail(err)
		}
		set.OpenModels = append(set.OpenModels, m)
	case gang.WorkloadPodGroupV1beta1, gang.WorkloadPodGroupV1alpha3, gang.PluginPodGroup:
		if _, errs := gang.Declare([]unstructured.Unstructured{*u}); len(errs) > 0 {
			return fail(errs...)
		}
		set.PodGroups = append(set.PodGroups, *u.DeepCopy())
	}
	return nil
}

// readList reads a List's items, as kubectl does, each a document of its
// own numbered from 1 within the List.
func (l *Loader) readList(src string, obj map[string]any, set *Set) []error {
	items, _, err := unstructured.NestedSlice(obj, "items")
	if err != nil {
		return []error{&DocumentError{Source: src, Kind: "List", Errs: []error{field.Invalid(field.NewPath("items"), obj["items"], "must be a list of objects")}}}
	}
	var errs []error
	for i, item := range items {
		itemSrc := fmt.Sprintf("%s, item %d", src, i+1)
		m, ok := item.(map[string]any)
		if !ok {
			errs = append(errs, &DocumentError{Source: itemSrc, Errs: []error{field.Invalid(field.NewPath("items").Index(i), item, "must be an object")}})
			continue
		}
		errs = append(errs, l.readObject(itemSrc, m, set)...)
	}
	return errs
}

// scope gives a namespaced object without a namespace "default", as
// kubectl does, and clears the namespace of a cluster-scoped one, as the
// API server does.
func scope(u *unstructured.Unstructured, namespaced bool) {
	switch {
	case !namespaced:
		u.SetNamespace("")
	case u.GetNamespace() == "":
		u.SetNamespace("default")
	}
}

// isPodGroup: a gang's group object (namespaced).
func isPodGroup(gvk schema.GroupVersionKind) bool {
	return gvk == gang.WorkloadPodGroupV1beta1 || gvk == gang.WorkloadPodGroupV1alpha3 || gvk == gang.PluginPodGroup
}
