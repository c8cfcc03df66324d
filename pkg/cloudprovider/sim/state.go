package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/capstan-dev/capstan/pkg/readlimit"
)

// InstanceState is where an instance is in its life.
type InstanceState string

// Instance states. Stopped is an azure-style spot VM deallocated on
// eviction: it no longer runs, but its disks are billed until deleted.
const (
	InstanceRunning    InstanceState = "running"
	InstanceStopped    InstanceState = "stopped"
	InstanceTerminated InstanceState = "terminated"
)

// Instance is one launched machine.
type Instance struct {
	ID            string            `json:"id"`
	InstanceType  string            `json:"instanceType"`
	Zone          string            `json:"zone"`
	CapacityType  string            `json:"capacityType"`
	ReservationID string            `json:"reservationID,omitempty"`
	Price         float64           `json:"price"`
	NodeClaim     string            `json:"nodeClaim"`
	NodeClass     string            `json:"nodeClass"`
	Labels        map[string]string `json:"labels"`
	LaunchTime    time.Time         `json:"launchTime"`
	State         InstanceState     `json:"state"`
	// Notices are the interruption notices outstanding for the instance.
	Notices []Notice `json:"notices,omitempty"`
	// NodeClassHash is NodeClassHash of the SimNodeClass the instance
	// launched with, computed under NodeClassHashVersion; IsDrifted
	// compares it with the SimNodeClass's now. Both are empty for
	// instances launched before the cloud recorded them (state files from
	// older versions), which are never judged drifted by the hash.
	NodeClassHash        string `json:"nodeClassHash,omitempty"`
	NodeClassHashVersion string `json:"nodeClassHashVersion,omitempty"`
	// Tags are the instance's cloud tags and Attributes what a front end
	// serving the cloud through another cloud's API records about it
	// (test/ec2endpoint: its image, subnet, security groups); both are
	// set by Launch and TagInstance, and the sim itself reads neither.
	Tags       map[string]string `json:"tags,omitempty"`
	Attributes map[string]string `json:"attributes,omitempty"`
	// MaxPrice is the spot price cap Launch was given for the offering;
	// zero means the NodeClass's cap holds.
	MaxPrice float64 `json:"maxPrice,omitempty"`
	// KubeletStopped: a KubeletStop or InstanceStop event stopped its
	// kubelet, so its node reports nothing any more.
	KubeletStopped bool `json:"kubeletStopped,omitempty"`
}

// Notice is an interruption notice the cloud has issued.
type Notice struct {
	Kind     string    `json:"kind"`
	Deadline time.Time `json:"deadline"`
	Message  string    `json:"message"`
	// Ends says what happens at the deadline: terminate, stop, or nothing
	// (a recommendation or maintenance notice).
	Ends InstanceState `json:"ends,omitempty"`
}

// ProviderID is the instance's id as Nodes and NodeClaims carry it.
func (i *Instance) ProviderID() string { return "sim://" + i.Zone + "/" + i.ID }

// State is the simulated cloud's inventory. It is written to the state
// file before Create returns, so an instance launched by a controller that
// then crashed is still known, and garbage collection can find it.
type State struct {
	Start     time.Time            `json:"start"`
	NextID    int                  `json:"nextID"`
	Instances map[string]*Instance `json:"instances"`
	// Reservations by id, with their use.
	Reservations map[string]*Reservation `json:"reservations"`
	// Pools are the remaining counts of finite capacity pools, by
	// "instanceType/zone/capacityType".
	Pools map[string]int `json:"pools"`
	// SpotPrices override spot prices, by "instanceType/zone".
	SpotPrices map[string]float64 `json:"spotPrices"`
	// Events is how many of the profile's events have been applied.
	Events int `json:"events"`
	// ReservationsRefreshed is when the account last observed its
	// reservations' use by other accounts (Reservation.ExternalSeen).
	ReservationsRefreshed time.Time `json:"reservationsRefreshed,omitzero"`
	// FaultsFired is how many launches each of the profile's launch
	// faults (by index) has failed, for their counts.
	FaultsFired map[int]int `json:"faultsFired,omitempty"`
}

func poolKey(instanceType, zone, capacityType string) string {
	return instanceType + "/" + zone + "/" + capacityType
}

// ErrCorruptState is wrapped by the error of a state file that cannot be
// trusted: empty, null, truncated, garbled or inconsistent.
var ErrCorruptState = errors.New("corrupt sim state")

// decodeState decodes and validates a state file's content.
func decodeState(path string, data []byte) (*State, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("loading sim state %s, %w: the file is empty", path, ErrCorruptState)
	}
	var s *State
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("loading sim state %s, %w: %w", path, ErrCorruptState, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("loading sim state %s, %w: data after the inventory", path, ErrCorruptState)
	}
	if s == nil {
		return nil, fmt.Errorf("loading sim state %s, %w: the file holds null", path, ErrCorruptState)
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("loading sim state %s, %w: %w", path, ErrCorruptState, err)
	}
	return s, nil
}

// validate checks what the cloud relies on: the maps it writes to exist,
// no counter is negative, every instance has an id it is filed under and
// that the next launch cannot reuse, and each reservation's use is the
// number of live instances in it.
func (s *State) validate() error {
	switch {
	case s.Start.IsZero():
		return errors.New("no start time")
	case s.Instances == nil:
		return errors.New("no instances")
	case s.Reservations == nil:
		return errors.New("no reservations")
	case s.Pools == nil:
		return errors.New("no pools")
	case s.SpotPrices == nil:
		return errors.New("no spot prices")
	case s.NextID < 0:
		return fmt.Errorf("negative nextID %d", s.NextID)
	case s.Events < 0:
		return fmt.Errorf("negative events %d", s.Events)
	}
	for key, n := range s.Pools {
		if n < 0 {
			return fmt.Errorf("pool %s has negative count %d", key, n)
		}
	}
	for key, p := range s.SpotPrices {
		if p < 0 {
			return fmt.Errorf("spot price %s is negative (%g)", key, p)
		}
	}
	for id, r := range s.Reservations {
		switch {
		case r == nil:
			return fmt.Errorf("reservation %s is null", id)
		case r.ID != id:
			return fmt.Errorf("reservation filed as %q has id %q", id, r.ID)
		case r.Total < 0 || r.Used < 0 || r.External < 0 || r.ExternalSeen < 0:
			return fmt.Errorf("reservation %s has a negative count (total %d, used %d, external %d, externalSeen %d)", id, r.Total, r.Used, r.External, r.ExternalSeen)
		case r.Used+r.External > r.Total || r.ExternalSeen > r.Total:
			return fmt.Errorf("reservation %s holds more than its total %d (used %d, external %d, externalSeen %d)", id, r.Total, r.Used, r.External, r.ExternalSeen)
		}
	}
	live := map[string]int{}
	for id, inst := range s.Instances {
		switch {
		case inst == nil:
			return fmt.Errorf("instance %s is null", id)
		case inst.ID == "":
			return fmt.Errorf("instance filed as %q has no id", id)
		case inst.ID != id:
			return fmt.Errorf("instance filed as %q has id %q", id, inst.ID)
		case inst.InstanceType == "" || inst.Zone == "" || inst.CapacityType == "":
			return fmt.Errorf("instance %s lacks its instance type, zone or capacity type", id)
		case inst.State != InstanceRunning && inst.State != InstanceStopped && inst.State != InstanceTerminated:
			return fmt.Errorf("instance %s has unknown state %q", id, inst.State)
		case inst.Price < 0:
			return fmt.Errorf("instance %s has negative price %g", id, inst.Price)
		case inst.MaxPrice < 0:
			return fmt.Errorf("instance %s has negative max price %g", id, inst.MaxPrice)
		}
		if n, err := strconv.ParseUint(strings.TrimPrefix(id, "i-"), 16, 63); err == nil && strings.HasPrefix(id, "i-") && n > uint64(s.NextID) {
			return fmt.Errorf("instance %s is beyond nextID %d: the next launch would reuse an id", id, s.NextID)
		}
		if inst.ReservationID == "" {
			continue
		}
		if s.Reservations[inst.ReservationID] == nil {
			return fmt.Errorf("instance %s is in unknown reservation %s", id, inst.ReservationID)
		}
		if inst.State != InstanceTerminated {
			live[inst.ReservationID]++
		}
	}
	for id, r := range s.Reservations {
		if r.Used != live[id] {
			return fmt.Errorf("reservation %s counts %d used, but %d live instances are in it", id, r.Used, live[id])
		}
	}
	return nil
}

// MaxStateBytes caps the state file. It keeps every instance ever
// launched, terminated ones too, at about 1 KiB each: the cap is some
// 200,000 launches, far more than a test or demo cluster makes.
const MaxStateBytes = 256 << 20

// LoadState reads a state file, for tests and tools that inspect the
// simulated cloud's inventory from outside the controller. The file is
// replaced atomically, so reading it without the lock is safe.
func LoadState(path string) (*State, error) {
	data, err := readlimit.File(path, MaxStateBytes)
	if err != nil {
		return nil, fmt.Errorf("reading sim state %s, %w", path, err)
	}
	return decodeState(path, data)
}
