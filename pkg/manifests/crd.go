package manifests

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	autoscalingv1 "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	autoscalingv1beta1 "github.com/capstan-dev/capstan/api/autoscaling/v1beta1"
	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/api/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
)

// customKind is a Capstan CRD kind simulate reads.
type customKind struct {
	version *crdVersion
	// add converts an admitted object and appends it to its list.
	add func(obj map[string]any, set *Set) []error
}

func (c customKind) read(ctx context.Context, obj map[string]any, set *Set) []error {
	if errs := c.version.admit(ctx, obj); len(errs) > 0 {
		return errs
	}
	return c.add(obj, set)
}

// customKinds pairs each CRD kind simulate reads with its validators.
// NodeClaims are not read: simulate makes its own.
func customKinds(crds []*apiextensionsv1.CustomResourceDefinition) (map[schema.GroupVersionKind]customKind, error) {
	adds := map[schema.GroupVersionKind]func(map[string]any, *Set) []error{
		v1.SchemeGroupVersion.WithKind("NodePool"):              typed(func(s *Set) *[]v1.NodePool { return &s.NodePools }),
		simv1alpha1.SchemeGroupVersion.WithKind("SimNodeClass"): typed(func(s *Set) *[]simv1alpha1.SimNodeClass { return &s.SimNodeClasses }),
		v1alpha1.SchemeGroupVersion.WithKind("NodeOverlay"):     typed(func(s *Set) *[]v1alpha1.NodeOverlay { return &s.NodeOverlays }),
		autoscalingv1.SchemeGroupVersion.WithKind("ProvisioningRequest"): typed(func(s *Set) *[]autoscalingv1.ProvisioningRequest {
			return &s.ProvisioningRequests
		}),
		autoscalingv1beta1.SchemeGroupVersion.WithKind("CapacityBuffer"): typed(func(s *Set) *[]autoscalingv1beta1.CapacityBuffer {
			return &s.CapacityBuffers
		}),
	}
	versions, err := newCRDVersions(crds, func(gvk schema.GroupVersionKind) bool { _, ok := adds[gvk]; return ok })
	if err != nil {
		return nil, err
	}
	kinds := map[schema.GroupVersionKind]customKind{}
	for gvk, add := range adds {
		v, ok := versions[gvk]
		if !ok {
			return nil, fmt.Errorf("loading crds, none serves %s", gvk)
		}
		kinds[gvk] = customKind{version: v, add: add}
	}
	return kinds, nil
}

// typed converts an admitted object to T, appending it to its list. A
// value the schema's pattern lets through but the type cannot hold (a
// duration that overflows) is an error at its path.
func typed[T any](list func(*Set) *[]T) func(map[string]any, *Set) []error {
	return func(obj map[string]any, set *Set) []error {
		var t T
		if err := decodeStrict(obj, &t); err != nil {
			if errs := sim.MalformedValues(obj, reflect.TypeFor[T](), nil); len(errs) > 0 {
				return fieldErrors(sortedByField(errs))
			}
			return []error{fmt.Errorf("converting to %T, %w", t, err)}
		}
		*list(set) = append(*list(set), t)
		return nil
	}
}

// crdVersion is one served version of a CRD with the validators the API
// server builds for it, compiled once since CEL compilation is slow.
type crdVersion struct {
	namespaced bool
	// hasStatus: with a status subresource, create ignores status.
	hasStatus  bool
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

// newCRDVersions builds, the way the API server's CRD handler does, a
// crdVersion for every served version of crds that keep selects.
func newCRDVersions(crds []*apiextensionsv1.CustomResourceDefinition, keep func(schema.GroupVersionKind) bool) (map[schema.GroupVersionKind]*crdVersion, error) {
	versions := map[schema.GroupVersionKind]*crdVersion{}
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
			if !keep(gvk) {
				continue
			}
			internal := &apiextensions.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				return nil, fmt.Errorf("converting the schema of %s, %w", gvk, err)
			}
			s, err := structuralschema.NewStructural(internal)
			if err != nil {
				return nil, fmt.Errorf("building the structural schema of %s, %w", gvk, err)
			}
			// Defaults are pruned as the server prunes them, so defaulting
			// never adds a field the schema does not know.
			if err := structuraldefaulting.PruneDefaults(s); err != nil {
				return nil, fmt.Errorf("pruning the defaults of %s, %w", gvk, err)
			}
			validator, _, err := apiservervalidation.NewSchemaValidator(internal)
			if err != nil {
				return nil, fmt.Errorf("building the schema validator of %s, %w", gvk, err)
			}
			versions[gvk] = &crdVersion{
				namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
				hasStatus:  v.Subresources != nil && v.Subresources.Status != nil,
				structural: s,
				schema:     validator,
				cel:        cel.NewValidator(s, true, celconfig.PerCallLimit),
			}
		}
	}
	return versions, nil
}

// admit does to obj, in place, what the API server does to a custom
// resource it is asked to create with fieldValidation=Strict: reject
// unknown fields, default, then validate metadata, the OpenAPI schema,
// list types and the CEL rules (create: no oldSelf). It returns a strict
// decoding error for unknown fields, else the field errors.
func (c *crdVersion) admit(ctx context.Context, obj map[string]any) []error {
	meta, hasMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return []error{field.Invalid(field.NewPath("metadata"), obj["metadata"], err.Error())}
	}
	unknown = append(unknown, structuralpruning.PruneWithOptions(obj, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, c.structural)
	fieldErr, paths := schemaobjectmeta.CoerceWithOptions(nil, obj, c.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if fieldErr != nil {
		return []error{fieldErr}
	}
	unknown = append(unknown, paths...)
	if len(unknown) > 0 {
		errs := make([]error, len(unknown))
		for i, path := range unknown {
			errs[i] = fmt.Errorf("unknown field %q", path)
		}
		return []error{runtime.NewStrictDecodingError(errs)}
	}
	if hasMeta {
		// The server keeps only the metadata fields ObjectMeta knows.
		if err := schemaobjectmeta.SetObjectMeta(obj, meta); err != nil {
			return []error{fmt.Errorf("setting metadata, %w", err)}
		}
	} else {
		meta = &metav1.ObjectMeta{}
	}
	structuraldefaulting.Default(obj, c.structural)
	if c.hasStatus {
		delete(obj, "status")
	}

	// The validators walk maps, so sorting makes every run print alike.
	errs := apivalidation.ValidateObjectMeta(meta, c.namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, c.schema)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, obj, c.structural, false)...)
	errs = sortedByField(append(errs, structurallisttype.ValidateListSetsAndMaps(nil, c.structural, obj)...))
	if blocking := blockingError(errs); blocking != nil {
		errs = append(errs, blocking)
	} else {
		celErrs, _ := c.cel.Validate(ctx, nil, c.structural, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, sortedByField(celErrs)...)
	}
	return fieldErrors(errs)
}

func sortedByField(errs field.ErrorList) field.ErrorList {
	slices.SortStableFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Field, b.Field) })
	return errs
}

// blockingError mirrors the server's hasBlockingErr: CEL rules are not
// run on an object whose types or required fields are already wrong.
func blockingError(errs field.ErrorList) *field.Error {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return nil
}
