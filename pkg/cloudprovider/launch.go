package cloudprovider

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// LaunchCandidate is one offering a launch may buy.
type LaunchCandidate struct {
	InstanceType *InstanceType
	Offering     *Offering
	// OnDemandPrice is the type's on-demand price, which caps spot unless
	// the NodeClass sets a maximum (decision 4).
	OnDemandPrice float64
}

// LaunchCandidates are what Create tries for a NodeClaim with
// requirements reqs and resource requests, over the NodeClass's instance
// types its (the contract every provider shares, CloudProvider.Create):
// the first capacity type, of reserved, spot and on-demand, that reqs
// allow and an available offering of a type that fits has; spot dearer
// than the cheapest compatible on-demand offering is left out. Cheapest
// first, then by name and zone. Empty when nothing is available.
func LaunchCandidates(its []*InstanceType, reqs scheduling.Requirements, requests corev1.ResourceList) (string, []LaunchCandidate) {
	fits := fitting(its, reqs, requests)
	allowed := reqs.Get(v1.CapacityTypeLabelKey)
	for _, ct := range []string{v1.CapacityTypeReserved, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand} {
		if !allowed.Has(ct) {
			continue
		}
		if cands := launchCandidates(fits, reqs, ct); len(cands) > 0 {
			return ct, cands
		}
	}
	return "", nil
}

// fitting are the types reqs allow whose allocatable holds requests.
func fitting(its []*InstanceType, reqs scheduling.Requirements, requests corev1.ResourceList) []*InstanceType {
	want := scheduling.NewResources(requests)
	var fits []*InstanceType
	for _, it := range its {
		if it.Requirements.Intersects(reqs) == nil && want.Fits(scheduling.NewResources(it.Allocatable())) {
			fits = append(fits, it)
		}
	}
	return fits
}

// NoLaunchCandidates is Create's error when LaunchCandidates finds none
// for the NodeClaim called name: an InsufficientCapacityError naming the
// compatible offerings that are out (full reservations, offerings already
// marked), so the caller marks them and plans again.
func NoLaunchCandidates(name string, its []*InstanceType, reqs scheduling.Requirements, requests corev1.ResourceList) *InsufficientCapacityError {
	ice := NewInsufficientCapacityError(fmt.Errorf("no available offering satisfies nodeclaim %s", name))
	allowed := reqs.Get(v1.CapacityTypeLabelKey)
	for _, it := range fitting(its, reqs, requests) {
		for _, o := range it.Offerings {
			if !o.CompatibleWith(reqs) || !allowed.Has(o.CapacityType) {
				continue
			}
			code := CodeInsufficientInstanceCapacity
			if o.ReservationID != "" {
				code = CodeReservationCapacityExceeded
			}
			ice.Add(o.Key(it.Name), string(code))
		}
	}
	return ice
}

func launchCandidates(its []*InstanceType, reqs scheduling.Requirements, ct string) []LaunchCandidate {
	anyCapacity := withoutCapacityType(reqs)
	odMin := math.Inf(1)
	var out []LaunchCandidate
	for _, it := range its {
		od := math.Inf(1)
		for _, o := range it.Offerings {
			if o.CapacityType != v1.CapacityTypeOnDemand {
				continue
			}
			od = min(od, o.Price)
			if o.IsAvailable() && o.CompatibleWith(anyCapacity) {
				odMin = min(odMin, o.Price)
			}
		}
		for _, o := range it.Offerings {
			if o.CapacityType == ct && o.IsAvailable() && o.CompatibleWith(reqs) {
				out = append(out, LaunchCandidate{InstanceType: it, Offering: o, OnDemandPrice: od})
			}
		}
	}
	if ct == v1.CapacityTypeSpot {
		out = slices.DeleteFunc(out, func(c LaunchCandidate) bool { return c.Offering.Price > odMin })
	}
	slices.SortStableFunc(out, func(a, b LaunchCandidate) int {
		return cmp.Or(cmp.Compare(a.Offering.Price, b.Offering.Price), cmp.Compare(a.InstanceType.Name, b.InstanceType.Name), cmp.Compare(a.Offering.Zone, b.Offering.Zone))
	})
	return out
}

// withoutCapacityType is reqs without the capacity type and reservation:
// what an on-demand offering must meet to cap spot.
func withoutCapacityType(reqs scheduling.Requirements) scheduling.Requirements {
	if _, ok := reqs[v1.CapacityTypeLabelKey]; !ok {
		return reqs
	}
	out := reqs.Clone()
	delete(out, v1.CapacityTypeLabelKey)
	delete(out, v1.LabelCapacityReservationID)
	return out
}

// ReservedPriceDivisor makes a reservation cost on-demand / 10^7: any
// reservation beats any other offering, and larger reservations still
// cost more than smaller ones (decision 15).
const ReservedPriceDivisor = 1e7
