package manifests

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-dev/capstan/pkg/printable"
)

// The timing annotations (design decision 19) schedule an object in a
// simulation: applied, or deleted, at a duration from the start of the
// run. They mean nothing to the controller, which never reads manifests.
const (
	ApplyAtAnnotation  = "simulate.capstan.dev/apply-at"
	DeleteAtAnnotation = "simulate.capstan.dev/delete-at"
)

// TimedObject is one change a simulation makes to its cluster at an
// offset from the start: an object applied (created, or replacing the
// object of the same kind, namespace and name) or deleted.
type TimedObject struct {
	// At is the offset from the start of the run.
	At time.Duration
	// Delete: the object is deleted at At, else applied.
	Delete bool
	// Kind, Namespace (empty for cluster-scoped kinds) and Name identify
	// the object, as the duplicate check does.
	Kind, Namespace, Name string
	// Source locates the document, e.g. "web.yaml, document 2".
	Source string
	// Object is the object as read, validated and defaulted like the
	// Set's others, as a pointer to the type of its kind's list:
	// *v1.NodePool, *appsv1.Deployment, *flavors.OpenModel … For a
	// Delete it is the version the annotation was on.
	Object any
}

// Ref names the object as simulate's events do: the kind in lower case,
// then namespace/name or, cluster-scoped, the name ("nodepool/default",
// "deployment/default/web").
func (t TimedObject) Ref() string {
	if t.Namespace == "" {
		return strings.ToLower(t.Kind) + "/" + t.Name
	}
	return strings.ToLower(t.Kind) + "/" + t.Namespace + "/" + t.Name
}

// compare orders the timeline: by offset, deletions first at the same
// offset, so a version deleted when the next is applied makes way for it.
func (t TimedObject) compare(u TimedObject) int {
	if c := cmp.Compare(t.At, u.At); c != 0 {
		return c
	}
	switch {
	case t.Delete && !u.Delete:
		return -1
	case u.Delete && !t.Delete:
		return 1
	}
	return 0
}

// timing is when a document's object is applied and deleted: applyAt is
// 0 without the annotation, which is when untimed objects are applied.
type timing struct {
	applyAt, deleteAt   time.Duration
	timed, deleted      bool
	applyRaw, deleteRaw string
}

// timingOf reads the timing annotations. Kinds that cannot change
// mid-run refuse them: the CloudProfile is the run's cloud (its own
// events are timed), and deleting a Namespace would delete everything in
// it, which simulate does not model.
func timingOf(gk schema.GroupKind, annotations map[string]string) (timing, field.ErrorList) {
	var t timing
	var errs field.ErrorList
	path := field.NewPath("metadata", "annotations")
	parse := func(key string) (string, time.Duration, bool) {
		raw, ok := annotations[key]
		if !ok {
			return "", 0, false
		}
		d, err := time.ParseDuration(raw)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(path.Key(key), raw, "must be a duration from the start of the run, such as 30m or 1h30m"))
			return raw, 0, false
		case d < 0:
			errs = append(errs, field.Invalid(path.Key(key), raw, "must not be negative"))
			return raw, 0, false
		}
		return raw, d, true
	}
	t.applyRaw, t.applyAt, t.timed = parse(ApplyAtAnnotation)
	t.deleteRaw, t.deleteAt, t.deleted = parse(DeleteAtAnnotation)
	switch {
	case len(errs) > 0:
	case t.deleted && t.deleteAt <= t.applyAt && t.timed:
		errs = append(errs, field.Invalid(path.Key(DeleteAtAnnotation), t.deleteRaw, fmt.Sprintf("must be after %s (%s)", ApplyAtAnnotation, t.applyAt)))
	case t.deleted && t.deleteAt == 0:
		errs = append(errs, field.Invalid(path.Key(DeleteAtAnnotation), t.deleteRaw, "must be after the start of the run, when an object without "+ApplyAtAnnotation+" is applied"))
	}
	_, hasApply := annotations[ApplyAtAnnotation]
	_, hasDelete := annotations[DeleteAtAnnotation]
	switch {
	case gk == profileGVK().GroupKind() && (hasApply || hasDelete):
		key := ApplyAtAnnotation
		if !hasApply {
			key = DeleteAtAnnotation
		}
		errs = append(errs, field.Forbidden(path.Key(key), "a CloudProfile is the cloud of the whole run; time its changes with spec.events"))
	case gk == (schema.GroupKind{Kind: "Namespace"}) && hasDelete:
		errs = append(errs, field.Forbidden(path.Key(DeleteAtAnnotation), "deleting a Namespace, with everything in it, is not simulated"))
	}
	if len(errs) > 0 {
		return timing{}, errs
	}
	return t, nil
}

// version is one document's copy of an object: where it was read and
// when it is applied and deleted.
type version struct {
	src string
	timing
}

// versions are the copies of one object read so far: in the order read,
// and as indices into that ordered by applyAt, so that a new copy is
// checked against its neighbours in time (found by binary search), not
// against every copy: many versions of one object load in n log n.
// Copies recorded never overlap (conflict), so only the one before a new
// copy can still be there when it is applied, and only those applied
// before it is deleted can be deleted by it.
type versions struct {
	read    []version
	byApply []int
}

// conflict is the error for a copy of an object already read, else nil.
// Copies are versions of the object over the run: each applied at its
// own instant (no apply-at is the start), and none still there, by its
// delete-at, when the next is applied. An unnamed object is no one's
// copy: its kind's validation rejects it, or it is a CloudProfile, a
// file that needs no name. Of several conflicting copies, the error
// names the one read first.
func (s *Set) conflict(key objectKey, t timing) *field.Error {
	if key.name == "" {
		return nil
	}
	vs := s.sources[key]
	if vs == nil {
		return nil
	}
	// at is the first copy applied at or after t.
	at, _ := slices.BinarySearchFunc(vs.byApply, t.applyAt, func(i int, d time.Duration) int { return cmp.Compare(vs.read[i].applyAt, d) })
	first := -1
	consider := func(i int) {
		if first == -1 || i < first {
			first = i
		}
	}
	if at > 0 {
		if prev := vs.read[vs.byApply[at-1]]; prev.deleted && prev.deleteAt > t.applyAt {
			consider(vs.byApply[at-1])
		}
	}
	for j := at; j < len(vs.byApply); j++ {
		prev := vs.read[vs.byApply[j]]
		// Those from t's instant on overlap it while at its instant or
		// applied before it is deleted; sorted, the first that does not
		// ends them.
		if overlaps := prev.applyAt == t.applyAt || t.deleted && t.deleteAt > prev.applyAt; !overlaps {
			break
		}
		consider(vs.byApply[j])
	}
	if first == -1 {
		return nil
	}
	prev := vs.read[first]
	object := key.kind + " " + printable.Quote(key.name)
	if key.namespace != "" {
		object = key.kind + " " + printable.Quote(key.namespace+"/"+key.name)
	}
	annotations := field.NewPath("metadata", "annotations")
	switch {
	case prev.applyAt == t.applyAt && !prev.timed && !t.timed:
		return &field.Error{Type: field.ErrorTypeDuplicate, Field: "metadata.name", BadValue: key.name, Detail: object + " is already in " + prev.src}
	case prev.applyAt == t.applyAt:
		return &field.Error{Type: field.ErrorTypeDuplicate, Field: "metadata.name", BadValue: key.name, Detail: fmt.Sprintf("%s is already applied at %s in %s", object, prev.applyAt, prev.src)}
	case prev.applyAt < t.applyAt:
		return field.Invalid(annotations.Key(ApplyAtAnnotation), t.applyRaw, fmt.Sprintf("%s from %s is there until its %s, %s", object, prev.src, DeleteAtAnnotation, prev.deleteAt))
	default:
		return field.Invalid(annotations.Key(DeleteAtAnnotation), t.deleteRaw, fmt.Sprintf("%s is applied again at %s from %s, before this deletes it", object, prev.applyAt, prev.src))
	}
}

// record notes that a version of the object key was read at src; conflict
// has found it overlaps no other, so its applyAt is its own.
func (s *Set) record(key objectKey, src string, t timing) {
	if s.sources == nil {
		s.sources = map[objectKey]*versions{}
	}
	vs := s.sources[key]
	if vs == nil {
		vs = &versions{}
		s.sources[key] = vs
	}
	at, _ := slices.BinarySearchFunc(vs.byApply, t.applyAt, func(i int, d time.Duration) int { return cmp.Compare(vs.read[i].applyAt, d) })
	vs.byApply = slices.Insert(vs.byApply, at, len(vs.read))
	vs.read = append(vs.read, version{src: src, timing: t})
}

// add puts the one object that read holds into s: with the objects
// applied at the start, or on the timeline, and its deletion too.
func (s *Set) add(src string, key objectKey, t timing, read *Set) {
	timed := TimedObject{Kind: key.kind, Namespace: key.namespace, Name: key.name, Source: src}
	if objs := read.objects(); len(objs) == 1 {
		timed.Object = objs[0]
	}
	if t.timed {
		apply := timed
		apply.At = t.applyAt
		s.schedule(apply)
	} else {
		s.merge(read)
	}
	if t.deleted {
		del := timed
		del.At, del.Delete = t.deleteAt, true
		s.schedule(del)
	}
}

// schedule adds t to the timeline; sortTimeline puts it in its place
// once the streams are read.
func (s *Set) schedule(t TimedObject) {
	s.Timed = append(s.Timed, t)
}

// sortTimeline orders the timeline (compare), changes at one instant in
// the order read: one sort per load, as inserting each change in its
// place would take time quadratic in their number.
func (s *Set) sortTimeline() {
	slices.SortStableFunc(s.Timed, TimedObject.compare)
}

// objects are pointers to every object s holds, list by list.
func (s *Set) objects() []any {
	var out []any
	out = pointers(out, s.NodePools)
	out = pointers(out, s.NodeOverlays)
	out = pointers(out, s.CapacityBuffers)
	out = pointers(out, s.PodTemplates)
	out = pointers(out, s.SimNodeClasses)
	out = pointers(out, s.CloudProfiles)
	out = pointers(out, s.Namespaces)
	out = pointers(out, s.Pods)
	out = pointers(out, s.Deployments)
	out = pointers(out, s.ReplicaSets)
	out = pointers(out, s.StatefulSets)
	out = pointers(out, s.DaemonSets)
	out = pointers(out, s.Jobs)
	out = pointers(out, s.PodDisruptionBudgets)
	out = pointers(out, s.PersistentVolumeClaims)
	out = pointers(out, s.PersistentVolumes)
	out = pointers(out, s.StorageClasses)
	for _, m := range s.OpenModels {
		out = append(out, m)
	}
	out = pointers(out, s.PodGroups)
	out = pointers(out, s.ProvisioningRequests)
	return out
}

func pointers[T any](out []any, list []T) []any {
	for i := range list {
		out = append(out, &list[i])
	}
	return out
}

// merge appends from's objects to s's lists (not Skipped or Timed,
// which reading one known object never fills).
func (s *Set) merge(from *Set) {
	s.NodePools = append(s.NodePools, from.NodePools...)
	s.NodeOverlays = append(s.NodeOverlays, from.NodeOverlays...)
	s.CapacityBuffers = append(s.CapacityBuffers, from.CapacityBuffers...)
	s.PodTemplates = append(s.PodTemplates, from.PodTemplates...)
	s.SimNodeClasses = append(s.SimNodeClasses, from.SimNodeClasses...)
	s.CloudProfiles = append(s.CloudProfiles, from.CloudProfiles...)
	s.Namespaces = append(s.Namespaces, from.Namespaces...)
	s.Pods = append(s.Pods, from.Pods...)
	s.Deployments = append(s.Deployments, from.Deployments...)
	s.ReplicaSets = append(s.ReplicaSets, from.ReplicaSets...)
	s.StatefulSets = append(s.StatefulSets, from.StatefulSets...)
	s.DaemonSets = append(s.DaemonSets, from.DaemonSets...)
	s.Jobs = append(s.Jobs, from.Jobs...)
	s.PodDisruptionBudgets = append(s.PodDisruptionBudgets, from.PodDisruptionBudgets...)
	s.PersistentVolumeClaims = append(s.PersistentVolumeClaims, from.PersistentVolumeClaims...)
	s.PersistentVolumes = append(s.PersistentVolumes, from.PersistentVolumes...)
	s.StorageClasses = append(s.StorageClasses, from.StorageClasses...)
	s.OpenModels = append(s.OpenModels, from.OpenModels...)
	s.PodGroups = append(s.PodGroups, from.PodGroups...)
	s.ProvisioningRequests = append(s.ProvisioningRequests, from.ProvisioningRequests...)
}
