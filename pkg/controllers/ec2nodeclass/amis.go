package ec2nodeclass

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsv1 "github.com/capstan-dev/capstan/api/aws/v1"
)

// kubeArchitecture maps EC2's image architectures to kubernetes.io/arch
// values; images of other architectures (i386, Macs) are never selected.
func kubeArchitecture(a ec2types.ArchitectureValues) (string, bool) {
	switch a {
	case ec2types.ArchitectureValuesX8664:
		return "amd64", true
	case ec2types.ArchitectureValuesArm64:
		return "arm64", true
	}
	return "", false
}

// candidate is one image for one requirement set.
type candidate struct {
	ami     awsv1.AMI
	created time.Time
	setKey  string
}

// resolveAMIs keeps, for every distinct requirement set (the image's
// architecture plus an alias variant's requirements), the one image the
// reference would: a deprecated image only when no other has those
// requirements, and among equals the newest by CreationDate (then the
// greatest name, then the smallest id, so the choice is stable). The
// list is newest first.
func resolveAMIs(terms []awsv1.AMISelectorTerm, found []FoundImages, now time.Time) ([]awsv1.AMI, metav1.Condition) {
	if len(terms) == 0 {
		return nil, falseCondition(awsv1.ConditionTypeAMIsReady, ReasonAMINotFound, "spec.amiSelectorTerms is empty")
	}
	best := map[string]candidate{}
	for _, f := range found {
		variants := f.Query.Variants
		if len(variants) == 0 {
			variants = [][]corev1.NodeSelectorRequirement{nil}
		}
		for _, img := range f.Images {
			if img.State != "" && img.State != ec2types.ImageStateAvailable {
				continue
			}
			arch, ok := kubeArchitecture(img.Architecture)
			if !ok || deref(img.ImageId) == "" {
				continue
			}
			for _, v := range variants {
				c := imageCandidate(img, arch, v, now)
				if prev, ok := best[c.setKey]; !ok || better(c, prev) {
					best[c.setKey] = c
				}
			}
		}
	}
	if len(best) == 0 {
		msg := "no image matches amiSelectorTerms " + termsText(terms)
		if slices.ContainsFunc(terms, func(t awsv1.AMISelectorTerm) bool { return t.SSMParameter != "" }) {
			msg += " (terms with an ssmParameter are not supported yet and select nothing)"
		}
		return nil, falseCondition(awsv1.ConditionTypeAMIsReady, ReasonAMINotFound, msg)
	}
	chosen := make([]candidate, 0, len(best))
	for _, c := range best {
		chosen = append(chosen, c)
	}
	slices.SortFunc(chosen, func(a, b candidate) int {
		return cmp.Or(b.created.Compare(a.created), cmp.Compare(a.ami.ID, b.ami.ID), cmp.Compare(a.setKey, b.setKey))
	})
	out := make([]awsv1.AMI, 0, len(chosen))
	var deprecated []string
	for _, c := range chosen {
		out = append(out, c.ami)
		if c.ami.Deprecated && !slices.Contains(deprecated, c.ami.ID) {
			deprecated = append(deprecated, c.ami.ID)
		}
	}
	message := ""
	if len(deprecated) > 0 {
		message = fmt.Sprintf("using deprecated images %s: no other image matches their requirements", strings.Join(deprecated, ", "))
	}
	return out, trueCondition(awsv1.ConditionTypeAMIsReady, message)
}

// imageCandidate is img as the status entry for the architecture arch
// and the variant requirements v.
func imageCandidate(img ec2types.Image, arch string, v []corev1.NodeSelectorRequirement, now time.Time) candidate {
	reqs := []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}}
	for _, r := range v {
		reqs = append(reqs, *r.DeepCopy())
	}
	// Shortest key first, as the reference orders them: the architecture
	// leads.
	slices.SortStableFunc(reqs, func(a, b corev1.NodeSelectorRequirement) int {
		return cmp.Or(cmp.Compare(len(a.Key), len(b.Key)), cmp.Compare(a.Key, b.Key))
	})
	var key strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&key, "%s %s %s;", r.Key, r.Operator, strings.Join(r.Values, ","))
	}
	deprecation, hasDeprecation := parseTime(deref(img.DeprecationTime))
	created, _ := parseTime(deref(img.CreationDate))
	return candidate{
		ami: awsv1.AMI{
			ID:           deref(img.ImageId),
			Name:         deref(img.Name),
			Deprecated:   hasDeprecation && !deprecation.After(now),
			Requirements: reqs,
		},
		created: created,
		setKey:  key.String(),
	}
}

// better reports whether a is preferred to b for the same requirements.
func better(a, b candidate) bool {
	if a.ami.Deprecated != b.ami.Deprecated {
		return !a.ami.Deprecated
	}
	if c := a.created.Compare(b.created); c != 0 {
		return c > 0
	}
	if c := cmp.Compare(a.ami.Name, b.ami.Name); c != 0 {
		return c > 0
	}
	return a.ami.ID < b.ami.ID
}

// parseTime reads EC2's timestamps (2024-08-07T12:34:56.000Z); an
// image without one, or with one that does not parse, has none.
func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}
