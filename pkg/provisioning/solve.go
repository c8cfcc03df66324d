package provisioning

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-dev/capstan/pkg/gang"
	"github.com/capstan-dev/capstan/pkg/scheduling"
)

// solver holds one solve's state.
type solver struct {
	opts  Options
	pools []*poolData
	nodes []*nodeData
	// shared marks the nodes that are Prepared's, not yet this solve's
	// own (see own).
	shared []bool
	claims []*claim
	// rooms are the claims' slack, by claim index: the slack pass reads
	// many claims for every pod, and a dense slice keeps that read in
	// cache where chasing each claim's pointer did not. roomsIdx sets
	// them apart by size (see roomIndex).
	rooms    []room
	roomsIdx roomIndex
	// grown memoizes growth by claim index (see growthOf).
	grown []grown
	// optionSets are the claims' options, interned (see interned).
	optionSets map[uint64][][]*itData
	// fixedAt are the claims each domain holds, by key (see indexFixed).
	fixedAt   map[string][]domainClaims
	slots     map[string]int
	wellKnown sets.Set[string]
	// unusable are the NodePools that cannot launch, sorted, and why.
	unusable    []string
	unusableWhy map[string]string
	topo        *topology
	result      Result
	// preferNoSchedule is set when some NodePool has a PreferNoSchedule
	// taint; avoid is set during the first placement pass, which treats
	// those taints as blocking on new capacity.
	preferNoSchedule, avoid bool
	// candidates, growable, scratch, pinned and exclusions are reused
	// across placements to avoid allocating: options are only copied into
	// a claim of their own once it takes the pod.
	candidates, growable []candidate
	scratch, pinned      []*itData
	exclusions           []claimSet
	// cursors are placeOnNode's, by shape (see nodeCursor).
	cursors []nodeCursor
}

// Solve places the input's pods: on existing nodes first, then in-flight
// NodeClaims, then NodeClaims planned in this solve, then new ones, for
// each of the pod's requirement variants in turn (see podData.variants).
// Pods are taken largest first (first-fit decreasing), holding virtual
// pods before real ones and yielding ones after. It never modifies
// the input.
func Solve(in Input) Result {
	if groups := atomicGroups(in); len(groups) > 0 {
		return solveAtomic(in, groups)
	}
	return solve(in)
}

// solve is Solve without regard to atomic groups.
func solve(in Input) Result {
	s := newSolver(in)
	all := slices.Concat(in.Holding, in.Pods, in.Yielding)
	pods := make([]*podData, 0, len(all))
	specs := podSpecs(all, in.TermRequests, in.Options.Workers)
	for i, p := range all {
		volumeReqs, err := volumeRequirements(p, in.Volumes)
		if err != nil {
			s.unplace(p, ReasonVolumeNotFound, err.Error())
			continue
		}
		pd, err := newPodData(p, specs[i], s.topo, in.Namespaces, volumeReqs, in.Options)
		if err != nil {
			s.unplace(p, ReasonInvalidPod, err.Error())
			continue
		}
		if !gang.IsGang(pd.group, in.AtomicGroups) {
			pd.group = ""
		}
		pd.tier = tierOf(i, in)
		pods = append(pods, pd)
	}
	s.countExisting(in.Namespaces)
	s.matchCounters(pods)
	slices.SortStableFunc(pods, byResourcesDescending)
	numberShapes(pods)
	for _, p := range pods {
		s.place(p)
	}
	for _, c := range s.claims {
		s.result.NewNodeClaims = append(s.result.NewNodeClaims, c.toNodeClaim(s.opts.MaxInstanceTypes, s.slots))
	}
	return s.result
}

// tierOf is the tier of the i-th of Holding, Pods and Yielding
// concatenated: 0, 1 and 2.
func tierOf(i int, in Input) int8 {
	switch {
	case i < len(in.Holding):
		return 0
	case i < len(in.Holding)+len(in.Pods):
		return 1
	}
	return 2
}

// daemonData are the daemonset pods a new node runs. Daemonsets only add
// overhead; their own topology terms do not constrain pending pods, so
// they get a topology of their own.
func daemonData(in Input) []*podData {
	daemons := make([]*podData, 0, len(in.DaemonSetPods))
	for _, d := range in.DaemonSetPods {
		if pd, err := newPodData(d, specOf(d), newTopology(), in.Namespaces, nil, Options{}); err == nil {
			daemons = append(daemons, pd)
		}
	}
	return daemons
}

func newSolver(in Input) *solver {
	s := &solver{opts: in.Options, slots: map[string]int{}, fixedAt: map[string][]domainClaims{}, optionSets: map[uint64][][]*itData{}, wellKnown: scheduling.WellKnownLabels(), topo: newTopology()}
	s.topo.hosts = len(in.Nodes)
	if s.opts.MaxInstanceTypes <= 0 {
		s.opts.MaxInstanceTypes = DefaultMaxInstanceTypes
	}
	daemons := daemonData(in)
	memo := newTypesMemo(daemons)
	byName := map[string]*poolData{}
	for _, np := range in.NodePools {
		if !solvedFor(np) {
			continue
		}
		p := in.Prepared.pool(np, func() *poolData { return newPoolData(np, in.InstanceTypes[np.Name], memo) })
		s.pools = append(s.pools, p)
		byName[np.Name] = p
		for _, it := range in.InstanceTypes[np.Name] {
			for _, o := range it.Offerings {
				if o.ReservationID != "" {
					s.slots[o.ReservationID] = max(s.slots[o.ReservationID], o.Available)
				}
			}
		}
	}
	orderPools(s.pools)
	s.unusable, s.unusableWhy = slices.Sorted(maps.Keys(in.UnusableNodePools)), in.UnusableNodePools
	for _, p := range s.pools {
		s.preferNoSchedule = s.preferNoSchedule || scheduling.HasPreferNoSchedule(p.taints)
	}
	nodes := make([]*nodeData, len(in.Nodes))
	shared := make([]bool, len(in.Nodes))
	for i, n := range in.Nodes {
		nodes[i], shared[i] = in.Prepared.node(n, func() *nodeData { return newNodeData(n, daemons) })
		if p, ok := byName[n.NodePool]; ok {
			p.consume(nodes[i].capacity, 1)
		}
	}
	// Existing nodes first, then in-flight NodeClaims.
	for _, inFlight := range []bool{false, true} {
		for i, n := range nodes {
			if n.node.InFlight == inFlight {
				s.nodes = append(s.nodes, n)
				s.shared = append(s.shared, shared[i])
			}
		}
	}
	return s
}

// attempt is the most specific failure seen while placing one pod.
type attempt struct {
	reason  Reason
	details []string
}

func (a *attempt) record(reason Reason, detail string) {
	switch {
	case reason.specificity() > a.reason.specificity():
		a.reason, a.details = reason, []string{detail}
	case reason == a.reason && !slices.Contains(a.details, detail):
		a.details = append(a.details, detail)
	}
}

func (s *solver) unplace(pod *corev1.Pod, reason Reason, message string) {
	s.result.Unplaced = append(s.result.Unplaced, Unplaced{Pod: pod, Reason: reason, Message: message})
}

func (s *solver) place(p *podData) {
	failure := &attempt{reason: ReasonNoNodePool}
	for _, name := range s.unusable {
		failure.record(ReasonNodeClassNotReady, fmt.Sprintf("nodepool %s: %s", name, s.unusableWhy[name]))
	}
	if len(s.pools) == 0 && len(s.unusable) == 0 {
		failure.details = []string{"no NodePool exists"}
	}
	// PreferNoSchedule taints are avoided with every variant before any is
	// tolerated: tolerating them is the last relaxation.
	passes := []bool{false}
	if s.preferNoSchedule {
		passes = []bool{true, false}
	}
	defer func() { s.avoid = false }()
	cur := s.cursor(p)
	for _, avoid := range passes {
		s.avoid = avoid
		for i := range p.variants {
			v := &p.variants[i]
			p.requests, p.shape, p.term = v.requests, v.shape, v.term
			mins := s.topo.minCounts(p, v, s)
			if !s.topo.possible(v, mins, s) {
				s.impossible(p, v, failure)
				continue
			}
			if s.opts.NewCapacityOnly {
				if s.placeOnClaim(p, v, mins, false) || s.newClaim(p, v, mins, failure) {
					return
				}
				continue
			}
			// A failed newClaim changes no claim: what placeOnClaim found
			// could grow still can.
			if s.placeOnNode(p, v, mins, cur, i) || s.placeOnClaim(p, v, mins, true) || s.newClaim(p, v, mins, failure) ||
				s.grow(p, v, mins, false) {
				return
			}
		}
	}
	s.unplace(p.pod, failure.reason, strings.Join(failure.details, "; "))
}

// tolerates is scheduling.Tolerates, or ToleratesStrictly in the pass
// that avoids PreferNoSchedule taints.
func (s *solver) tolerates(pod *corev1.Pod, taints []corev1.Taint) error {
	if s.avoid {
		return scheduling.ToleratesStrictly(pod.Spec.Tolerations, taints)
	}
	return scheduling.Tolerates(pod.Spec.Tolerations, taints)
}

// placeOnNode places the pod on the first node that takes it, from
// where cur (if any) says the pods before it like it stopped for
// variant vi.
func (s *solver) placeOnNode(p *podData, v *variant, mins []int32, cur *nodeCursor, vi int) bool {
	from := 0
	if cur != nil {
		from = cur.from[vi]
	}
	for i := from; i < len(s.nodes); i++ {
		n := s.nodes[i]
		// Existing and in-flight nodes tolerate PreferNoSchedule at once:
		// kube-scheduler binds there when nothing else is up, so launching
		// an untainted node instead would only leave it empty.
		if (n.node.AtomicGroup == "" || n.node.AtomicGroup == p.group) && n.fits(p, v.reqs) && scheduling.Tolerates(p.pod.Spec.Tolerations, n.node.Taints) == nil && s.topo.admitNode(p, v, mins, n) {
			if cur != nil {
				cur.from[vi] = i
			}
			n = s.own(i)
			n.add(p)
			s.topo.record(p, n.domain)
			s.result.Nominations = append(s.result.Nominations, Nomination{Pod: p.pod, NodeName: n.node.Name})
			return true
		}
	}
	if cur != nil {
		cur.from[vi] = len(s.nodes)
	}
	return false
}

// placeOnClaim first fills slack: a claim whose cheapest option already
// has room for the pod takes it at no extra cost. Only then does a claim
// grow into a larger instance type; while thrifty, only when growing
// costs no more than a node of the pod's own would, so pods that need a
// scarce resource (one GPU each) get small nodes each rather than one
// node many times dearer. The claims that could grow stay in s.growable,
// for grow to offer them again without that condition when no new claim
// can take the pod (limits, say).
func (s *solver) placeOnClaim(p *podData, v *variant, mins []int32, thrifty bool) bool {
	// First the claims with room the pod's topology admits, best fit on
	// slack: the claim the pod leaves least room in, so larger gaps stay
	// open for larger pods. Then those that would have to grow: the claim
	// whose price rises least, ties to the one left with least room
	// (growing whichever claim came first let early claims absorb every
	// pod the others had no room for, until they reached the largest type
	// full in one resource and idle in the other).
	excl, exact := s.excluded(p, v, mins)
	admits := func(c *claim) bool { return exact || s.topo.admitFixed(p, v, mins, c) }
	tight := s.roomsIdx.tight(excl, p.requests)
	takes := func(i int) bool {
		r := s.rooms[i]
		if p.requests.CPU > r.cpu || p.requests.Memory > r.memory || p.requests.Pods > r.pods || p.requests.Storage > r.storage ||
			len(p.requests.Extended) > 0 && !p.requests.Fits(s.claims[i].slack) {
			return false
		}
		return admits(s.claims[i])
	}
	// Many claims may have room for a small pod: the best is found in one
	// pass, and the others gathered only if it refuses.
	best, bestFit := -1, fit{}
	eachOpen(len(s.claims), tight, func(i int) {
		if !takes(i) {
			return
		}
		if f := (fit{room: leftover(s.rooms[i], p.requests)}); best < 0 || f.compare(bestFit) < 0 {
			best, bestFit = i, f
		}
	})
	if best >= 0 {
		if s.addToClaim(s.claims[best], p, v, mins, false) {
			return true
		}
		s.candidates = s.candidates[:0]
		eachOpen(len(s.claims), tight, func(i int) {
			if i != best && takes(i) {
				s.candidates = append(s.candidates, candidate{s.claims[i], fit{room: leftover(s.rooms[i], p.requests)}})
			}
		})
		if tryBest(s.candidates, func(c *claim) bool { return s.addToClaim(c, p, v, mins, false) }) {
			return true
		}
	}
	// Most pods find slack, and most claims have none for a pod: the
	// claims that would have to grow are looked for (topology first) and
	// priced only now.
	s.growable = s.growable[:0]
	eachOpen(len(s.claims), excl, func(i int) {
		if g, ok := s.growthOf(i, p); ok && admits(s.claims[i]) {
			s.growable = append(s.growable, candidate{s.claims[i], g})
		}
	})
	return s.grow(p, v, mins, thrifty)
}

// grow offers the pod to the claims placeOnClaim found could grow for it.
func (s *solver) grow(p *podData, v *variant, mins []int32, thrifty bool) bool {
	return tryBest(s.growable, func(c *claim) bool { return s.addToClaim(c, p, v, mins, thrifty) })
}

// addToClaim adds the pod to a planned claim if the claim can still be
// launched with it: taints tolerated, requirements compatible, host ports
// free, topology allowed and some instance type fitting everything.
func (s *solver) addToClaim(c *claim, p *podData, v *variant, mins []int32, thrifty bool) bool {
	if p.group != c.group && p.group != "" && c.group != "" {
		return false
	}
	requests := c.requests.Add(p.requests)
	if !requests.Fits(c.maxAlloc) {
		return false
	}
	if c.reqs.Compatible(v.reqs, s.wellKnown) != nil || scheduling.PortsConflict(c.hostPorts, p.hostPorts) {
		return false
	}
	if s.tolerates(p.pod, c.pool.taints) != nil {
		return false
	}
	pins, ok := s.topo.admitClaim(p, v, mins, c, c.reqs, s)
	if !ok {
		return false
	}
	merged, f := c.reqs, filterResult{}
	if len(v.reqs) == 0 && c.settled {
		// The pod narrows no requirement and the claim's offerings no
		// longer hang on reservation slots: its options stay allowed, only
		// room can rule some out.
		f.options = fitting(s.scratch, c.options, requests)
	} else {
		merged = c.reqs.Intersection(v.reqs)
		f = filterInto(s.scratch, c.options, merged, requests, c.reservation, s.slots)
	}
	f.options = withoutPortConflicts(f.options, p.hostPorts)
	s.scratch = f.options
	if len(f.options) == 0 {
		return false
	}
	merged, options, ok := s.applyPins(pins, merged, f.options, c.reservation)
	if !ok {
		return false
	}
	if merged, ok = s.meetMinValues(merged, options); !ok {
		return false
	}
	if thrifty && options[0].price-c.price > growthLimit(c, p, v) {
		return false
	}
	// Options only shrink, in order: as many as before are the same ones,
	// and the claim keeps its slice and what was worked out from it.
	kept, maxAlloc, committed := c.options, c.maxAlloc, c.committed
	if len(options) != len(c.options) {
		kept = s.interned(options)
		maxAlloc, committed = capacityStats(kept, merged, s.opts.MaxInstanceTypes)
	}
	// Growing moves the types the claim may launch as to larger ones:
	// they must fit what the NodePool's limits leave.
	if !c.pool.affords(committed, c.committed) {
		return false
	}
	c.pool.release(c.committed, 0)
	c.options, c.maxAlloc, c.committed = kept, maxAlloc, committed
	c.setReqs(merged)
	s.indexFixed(c)
	c.requests = requests
	c.slack, c.price = slackOf(c)
	old := s.rooms[c.index]
	s.rooms[c.index] = roomOf(c, old.version+1)
	s.roomsIdx.set(c.index, &old, s.rooms[c.index])
	c.pool.consume(c.committed, 0)
	c.pods = append(c.pods, p)
	if c.group == "" {
		c.group = p.group
	}
	c.hostPorts = append(c.hostPorts, p.hostPorts...)
	s.topo.record(p, c.domain)
	c.count(p)
	return true
}

// newClaim plans a new NodeClaim for the pod from the first NodePool (by
// weight, then name) that can launch one.
func (s *solver) newClaim(p *podData, v *variant, mins []int32, failure *attempt) bool {
	for _, pool := range s.pools {
		c, reason, detail := s.claimFor(pool, p, v, mins)
		if c != nil {
			c.index = len(s.claims)
			s.claims, s.rooms = append(s.claims, c), append(s.rooms, roomOf(c, 0))
			s.grown = append(s.grown, grown{shape: -1})
			s.roomsIdx.set(c.index, nil, s.rooms[c.index])
			s.indexFixed(c)
			s.topo.record(p, c.domain)
			c.count(p)
			return true
		}
		failure.record(reason, fmt.Sprintf("nodepool %s: %s", pool.name, detail))
	}
	return false
}

// topologyUnsatisfiable is why a NodePool cannot launch for a pod whose
// topology rules out every domain.
const topologyUnsatisfiable = "pod affinity, anti-affinity or topology spread leaves no domain this NodePool can launch into"

// impossible records why no NodePool can launch for a variant possible
// ruled out, as claimFor would have.
func (s *solver) impossible(p *podData, v *variant, failure *attempt) {
	for _, pool := range s.pools {
		reason, detail := s.launchable(pool, p, v)
		if reason == "" {
			reason, detail = ReasonTopologyUnsatisfiable, topologyUnsatisfiable
		}
		failure.record(reason, fmt.Sprintf("nodepool %s: %s", pool.name, detail))
	}
}

// launchable is what rules pool out for the variant before topology:
// taints, then requirements.
func (s *solver) launchable(pool *poolData, p *podData, v *variant) (Reason, string) {
	if err := s.tolerates(p.pod, pool.taints); err != nil {
		return ReasonTaintNotTolerated, err.Error()
	}
	if err := pool.reqs.Compatible(v.reqs, s.wellKnown); err != nil {
		return ReasonIncompatibleRequirements, err.Error()
	}
	return "", ""
}

func (s *solver) claimFor(pool *poolData, p *podData, v *variant, mins []int32) (*claim, Reason, string) {
	if reason, detail := s.launchable(pool, p, v); reason != "" {
		return nil, reason, detail
	}
	merged := pool.reqs.Intersection(v.reqs)
	c := &claim{pool: pool, hostname: fmt.Sprintf("nodeclaim-%d", len(s.claims)), group: p.group}
	pins, ok := s.topo.admitClaim(p, v, mins, c, merged, s)
	if !ok {
		return nil, ReasonTopologyUnsatisfiable, topologyUnsatisfiable
	}
	requests := p.requests
	var f filterResult
	if len(v.reqs) == 0 {
		f.options = fitting(s.scratch, pool.allowed, requests)
	}
	if len(f.options) == 0 {
		f = filterInto(s.scratch, pool.its, merged, requests, "", nil)
	}
	s.scratch = f.options
	if len(f.options) == 0 {
		if f.reason == ReasonIncompatibleRequirements {
			if why := pool.crowdedOut(merged); why != "" {
				return nil, ReasonNoInstanceTypeFits, why
			}
		}
		return nil, f.reason, describe(f, requests)
	}
	if f.options = withoutPortConflicts(f.options, p.hostPorts); len(f.options) == 0 {
		return nil, ReasonNoInstanceTypeFits, "a daemonset holds a host port the pod needs on every instance type that fits"
	}
	merged, f.options, ok = s.applyPins(pins, merged, f.options, "")
	if !ok {
		return nil, ReasonTopologyUnsatisfiable, "no instance type can launch into a topology domain the pod may use"
	}
	if merged, ok = s.meetMinValues(merged, f.options); !ok {
		return nil, ReasonMinValuesUnsatisfiable, fmt.Sprintf("%d instance types fit, too few to satisfy minValues", len(f.options))
	}
	// f.options is scratch, narrowed in place; the claim's own options
	// are copied by bookCapacity.
	options := slices.DeleteFunc(f.options, func(it *itData) bool { return !pool.withinLimits(it.capacity) })
	if len(options) == 0 {
		return nil, ReasonNodePoolLimitExceeded, "launching any instance type that fits would exceed the NodePool's limits"
	}
	if merged, ok = s.meetMinValues(merged, options); !ok {
		return nil, ReasonNodePoolLimitExceeded, "the instance types within the NodePool's limits cannot satisfy minValues"
	}
	c.reqs, c.requests, c.pods, c.hostPorts = merged, requests, []*podData{p}, slices.Clone(p.hostPorts)
	if !s.bookCapacity(c, options) {
		return nil, ReasonReservationExhausted, "every capacity reservation the pod may use is full and the NodePool allows no other capacity type"
	}
	c.setReqs(c.reqs)
	c.maxAlloc, c.committed = capacityStats(c.options, c.reqs, s.opts.MaxInstanceTypes)
	c.slack, c.price = slackOf(c)
	pool.consume(c.committed, 1)
	return c, "", ""
}
