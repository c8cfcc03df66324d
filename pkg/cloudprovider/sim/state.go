package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
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
}

func poolKey(instanceType, zone, capacityType string) string {
	return instanceType + "/" + zone + "/" + capacityType
}

// load reads the state file; a missing file is no error (a fresh cloud).
func load(path string) (*State, bool, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading sim state %s, %w", path, err)
	}
	s := &State{}
	if err := json.Unmarshal(data, s); err != nil {
		return nil, false, fmt.Errorf("decoding sim state %s, %w", path, err)
	}
	return s, true, nil
}

// save writes the state atomically: a crash mid-write leaves the old file.
func (s *State) save(path string) error {
	if path == "" {
		return nil
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding sim state, %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".sim-state-*")
	if err != nil {
		return fmt.Errorf("writing sim state %s, %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing sim state %s, %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing sim state %s, %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing sim state %s, %w", path, err)
	}
	return nil
}

// LoadState reads a state file, for tests and tools that inspect the
// simulated cloud's inventory from outside the controller.
func LoadState(path string) (*State, error) {
	s, ok, err := load(path)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("sim state %s does not exist", path)
	}
	return s, nil
}
