package simulator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	simv1alpha1 "github.com/capstan-dev/capstan/api/sim/v1alpha1"
	"github.com/capstan-dev/capstan/pkg/cloudprovider"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/catalog"
	"github.com/capstan-dev/capstan/pkg/cloudprovider/sim"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/drain"
	"github.com/capstan-dev/capstan/pkg/interruption"
	"github.com/capstan-dev/capstan/pkg/lifecycle"
	"github.com/capstan-dev/capstan/pkg/manifests"
	"github.com/capstan-dev/capstan/pkg/provisioning"
	"github.com/capstan-dev/capstan/pkg/scaleup"
)

// Options configure a run. Zero values take the controller's defaults.
type Options struct {
	Duration time.Duration
	Seed     uint64
	// Window, UnavailableTTL, RegistrationTTL, LaunchTimeout,
	// AtomicGroupLaunchTimeout, MaxInstanceTypes, MinValuesPolicy, PreferencePolicy and
	// SchedulerNames mean what the controller's flags of the same names do.
	Window          scaleup.Window
	UnavailableTTL  time.Duration
	RegistrationTTL time.Duration
	LaunchTimeout   time.Duration
	// AtomicGroupLaunchTimeout bounds a gang's launch (lifecycle.ReleaseGroups).
	AtomicGroupLaunchTimeout time.Duration
	MaxInstanceTypes         int
	MinValuesPolicy          provisioning.MinValuesPolicy
	PreferencePolicy         provisioning.PreferencePolicy
	SchedulerNames           []string
	Disruption               DisruptionOptions
}

// DefaultOptions are the controller's defaults and two hours.
func DefaultOptions() Options {
	return Options{
		Duration: 2 * time.Hour, Seed: 1,
		Window:         scaleup.Window{Idle: scaleup.DefaultBatchIdle, Max: scaleup.DefaultBatchMax},
		UnavailableTTL: cloudprovider.DefaultUnavailableOfferingsTTL, RegistrationTTL: lifecycle.DefaultRegistrationTTL,
		LaunchTimeout: lifecycle.DefaultLaunchTimeout, AtomicGroupLaunchTimeout: lifecycle.DefaultAtomicGroupLaunchTimeout,
		MaxInstanceTypes: provisioning.DefaultMaxInstanceTypes, SchedulerNames: []string{corev1.DefaultSchedulerName},
		MinValuesPolicy: provisioning.MinValuesPolicyStrict, PreferencePolicy: provisioning.PreferencePolicyRespect,
		Disruption: DisruptionOptions{
			Gates: disruption.DefaultGates(), PollInterval: disruption.DefaultPollInterval,
			ValidationDelay: disruption.DefaultValidationDelay, ReplacementTimeout: disruption.DefaultReplacementTimeout,
			PreemptibleMargin: interruption.DefaultPreemptibleMargin,
		},
	}
}

// Simulator runs Capstan's own steps over an in-memory world in virtual
// time: the solver, the lifecycle, the simulated cloud with its
// in-memory kubelet, garbage collection; only the parts a cluster does
// for itself (workload controllers, kube-scheduler's binding, kwok) are
// stood in for here.
type Simulator struct {
	opts Options
	// start is the virtual clock's origin; results report offsets from it.
	start       time.Time
	clock       *clocktesting.FakeClock
	world       *world
	cloud       *sim.Cloud
	kubelet     *sim.MemoryKubelet
	unavailable *cloudprovider.UnavailableOfferings
	// launchPrices are the snapshot's prices the cloud launches by, as
	// the controller's cluster state keeps them.
	launchPrices *cloudprovider.LaunchPrices
	profile      *simv1alpha1.CloudProfile
	rng          *rand.Rand
	rec          *recorder
	batch        scaleup.Batch
	scaled       int
	// boundAt is the world version binding last ran at, boundNodes how
	// many registered nodes it saw.
	boundAt, boundNodes int
	// bound are binding's view of each node's pods and shapes numbers
	// their shapes (binderInput).
	bound  map[string]*boundPods
	shapes *provisioning.PodShapes
	// nominations is the provisioner's guard against launching again for
	// a pod whose planned node registered without fitting it.
	nominations scaleup.Nominations
	disrupter   *disrupter
	// terminations are deleted NodeClaims' drain progress.
	terminations map[string]drain.Progress
	// interruptions is the interruption controller's handler;
	// interruptWake when a notice it holds back needs action.
	interruptions *interruption.Handler
	interruptWake time.Time
	// attempts are the failed launches of NodeClaims not launched yet,
	// as the lifecycle controller keeps them.
	attempts *lifecycle.Attempts
	// requeues are when steps asked to run again (effects.RequeueAt).
	requeues []time.Time
	// gangReleases count, by gang, the NodeClaims its failed launches
	// released (the report's gangs).
	gangReleases map[string]int
	// blockWake is when the next capacity block drain is due.
	blockWake time.Time
	// warnings are the manifests' (manifests.Set.Warnings), reported.
	warnings []Warning
	// events are when the profile's events are due and capacityChanges
	// when its CapacityChange events are, each in time order, so the next
	// is found without a pass over all of them at every wake;
	// scaleEvents are its Scale events.
	events, capacityChanges instants
	scaleEvents             []simv1alpha1.CloudEvent
}

// instants are moments in time order.
type instants []time.Time

// instantsOf are the moments the profile's events of the given types
// (all of them without types) are due, from start.
func instantsOf(start time.Time, events []simv1alpha1.CloudEvent, types ...simv1alpha1.CloudEventType) instants {
	var out instants
	for _, e := range events {
		if len(types) == 0 || slices.Contains(types, e.Type) {
			out = append(out, start.Add(e.At.Duration))
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// after is the first moment after now, the zero time if none.
func (in instants) after(now time.Time) time.Time {
	if i := sort.Search(len(in), func(i int) bool { return in[i].After(now) }); i < len(in) {
		return in[i]
	}
	return time.Time{}
}

// timeouts are the lifecycle's, from the options.
func (s *Simulator) timeouts() lifecycle.Timeouts {
	return lifecycle.Timeouts{Launch: s.opts.LaunchTimeout, Registration: s.opts.RegistrationTTL}
}

// New builds a simulation of the manifests on the profile's cloud.
func New(set *manifests.Set, profile *simv1alpha1.CloudProfile, types []catalog.InstanceType, opts Options) (*Simulator, error) {
	if opts.Duration <= 0 {
		return nil, errors.New("the simulation needs a positive duration")
	}
	if err := checkScaleTargets("cloud profile", set, profile); err != nil {
		return nil, err
	}
	origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(origin)
	s := &Simulator{
		opts: opts, start: origin, clock: clk, world: newWorld(set), kubelet: sim.NewMemoryKubelet(), profile: profile,
		unavailable: cloudprovider.NewUnavailableOfferings(clk, opts.UnavailableTTL), launchPrices: cloudprovider.NewLaunchPrices(),
		rng:      rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		attempts: lifecycle.NewAttempts(), terminations: map[string]drain.Progress{},
		warnings: warningsOf(set.Warnings),
	}
	s.rec = newRecorder(origin)
	s.disrupter = newDisrupter(opts.Disruption, s.claimName, sim.RepairPoliciesOf(profile))
	s.interruptions = &interruption.Handler{Options: interruption.Options{PreemptibleMargin: opts.Disruption.PreemptibleMargin}}
	cloud, err := sim.New(sim.Options{
		Profile: profile, Catalog: types, Clock: clk, NodeClasses: s.world,
		Kubelet: s.kubelet, Unavailable: s.unavailable, LaunchPrices: s.launchPrices,
	})
	if err != nil {
		return nil, fmt.Errorf("starting the simulated cloud, %w", err)
	}
	s.cloud = cloud
	s.events, s.scaleEvents = instantsOf(origin, profile.Spec.Events), cloud.ScaleEvents()
	s.capacityChanges = instantsOf(origin, profile.Spec.Events, simv1alpha1.EventCapacityChange)
	for i := range set.Pods {
		p := set.Pods[i].DeepCopy()
		s.world.addPod(p)
	}
	return s, nil
}

// checkScaleTargets: a Scale event must name a Deployment in the
// manifests, or the run would silently not scale.
// src locates the profile in the error.
func checkScaleTargets(src string, set *manifests.Set, profile *simv1alpha1.CloudProfile) error {
	deployments := map[string]bool{}
	for _, d := range set.Deployments {
		deployments[d.Namespace+"/"+d.Name] = true
	}
	for _, t := range set.Timed {
		deployments[t.Namespace+"/"+t.Name] = deployments[t.Namespace+"/"+t.Name] || t.Kind == "Deployment"
	}
	for i, e := range profile.Spec.Events {
		if e.Type == simv1alpha1.EventScale && !deployments[e.Workload] {
			return fmt.Errorf("%s: spec.events[%d].workload: no Deployment %s among the manifests", src, i, e.Workload)
		}
	}
	return nil
}

// Run simulates until the duration has passed, waking only when
// something is due: a batch window closing, a node registering, a
// profile event, a notice deadline.
func (s *Simulator) Run(ctx context.Context) (*Result, error) {
	end := s.start.Add(s.opts.Duration)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := s.settle(ctx); err != nil {
			return nil, err
		}
		next, ok := s.nextWake()
		if !ok || next.After(end) {
			break
		}
		s.clock.SetTime(next)
	}
	s.clock.SetTime(end)
	if err := s.settle(ctx); err != nil {
		return nil, err
	}
	return s.result(), nil
}

// maxRounds bounds how often one instant is re-run: a launch failure
// re-plans at once, and each re-plan marks offerings, so this converges;
// the bound only guards against a bug looping forever.
const maxRounds = 1000

// settle runs every step at the current instant until none changes
// anything.
func (s *Simulator) settle(ctx context.Context) error {
	for range maxRounds {
		changed, err := s.round(ctx)
		if err != nil {
			return err
		}
		if !changed {
			s.rec.sample(s.clock.Now(), s.pendingCount())
			return nil
		}
	}
	return fmt.Errorf("simulation did not settle at %s", offset(s.start, s.clock.Now()))
}

// round is one pass of every step, in the order a cluster reacts.
func (s *Simulator) round(ctx context.Context) (bool, error) {
	changed := s.timed()
	changed = s.scale() || changed
	steps := []func(context.Context) (bool, error){
		s.collect, s.interrupt, s.drainBlocks, s.expire, s.workloads, s.register, s.daemonSets, s.bind, s.provisioningRequests, s.provision, s.static, s.launch, s.release, s.stampPodEvents, s.disrupt, s.terminate,
	}
	for _, step := range steps {
		c, err := step(ctx)
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	return changed, nil
}

// nextWake is the earliest moment something is due after now.
func (s *Simulator) nextWake() (time.Time, bool) {
	now := s.clock.Now()
	var next time.Time
	consider := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if due, ok := s.batch.Next(s.opts.Window, now); ok {
		consider(due)
	}
	if t, ok := s.kubelet.Next(); ok {
		consider(t)
	}
	consider(s.events.after(now))
	// The timeline is in order and timed applied what was due.
	if len(s.world.timeline) > 0 {
		consider(s.start.Add(s.world.timeline[0].At))
	}
	// Every notice's deadline, when a notice held back needs action (a
	// preemptible VM's margin and notice) and when NodeClaims expire.
	snap := s.cloud.Snapshot()
	for _, inst := range snap.Instances {
		for _, n := range inst.Notices {
			consider(n.Deadline)
		}
	}
	// A capacity block's notice comes from its end, not from an event.
	for _, r := range snap.Reservations {
		if r.CapacityBlock && !r.End.IsZero() {
			consider(r.End.Add(-sim.ScheduledChangeNotice))
		}
	}
	consider(s.interruptWake)
	consider(s.blockWake)
	for _, t := range s.expiries() {
		consider(t)
	}
	for _, t := range s.lifecycleDeadlines() {
		consider(t)
	}
	s.requeues = slices.DeleteFunc(s.requeues, func(t time.Time) bool { return !t.After(now) })
	for _, t := range s.requeues {
		consider(t)
	}
	for _, t := range s.disrupter.wake(s.world.version) {
		consider(t)
	}
	return next, !next.IsZero()
}

// Profile picks a run's cloud: the profile file at path, else the one
// CloudProfile among the manifests, else the embedded default cloud.
func Profile(path string, set *manifests.Set) (*simv1alpha1.CloudProfile, error) {
	switch {
	case path != "":
		return sim.LoadProfile(path)
	case len(set.CloudProfiles) == 1:
		return set.CloudProfiles[0].Profile, nil
	case len(set.CloudProfiles) > 1:
		return nil, fmt.Errorf("the manifests hold CloudProfiles in %s and %s; pass one, or choose with --cloud-profile", set.CloudProfiles[0].Source, set.CloudProfiles[1].Source)
	}
	return sim.DefaultProfile()
}

// profileSource names where Profile found the profile, for errors.
func profileSource(path string, set *manifests.Set) string {
	switch {
	case path != "":
		return path
	case len(set.CloudProfiles) == 1:
		return set.CloudProfiles[0].Source
	}
	return "the embedded cloud profile"
}

// Simulate runs the manifests on their cloud (Profile) over the catalog:
// what `capstan simulate` does.
func Simulate(ctx context.Context, set *manifests.Set, profilePath string, opts Options) (*Result, error) {
	profile, err := Profile(profilePath, set)
	if err != nil {
		return nil, err
	}
	// The profile's events are checked against the manifests here too,
	// where the error can name the profile's file.
	if err := checkScaleTargets(profileSource(profilePath, set), set, profile); err != nil {
		return nil, err
	}
	types, err := catalog.Load()
	if err != nil {
		return nil, err
	}
	s, err := New(set, profile, types, opts)
	if err != nil {
		return nil, err
	}
	return s.Run(ctx)
}
