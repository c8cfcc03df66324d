package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/capstan-dev/capstan/pkg/readlimit"
)

// store is the state file. Every operation on the cloud holds an advisory
// lock on a sibling lock file from reading the inventory to writing it
// back, and re-reads the file first when it differs from what this cloud
// last read or wrote: a standby replica that becomes leader continues its
// predecessor's inventory instead of overwriting it.
type store struct {
	path string
	// lock is path+".lock", open for the cloud's life; flock(2) locks
	// belong to the open file, so two clouds in one process exclude each
	// other as two processes do.
	lock *os.File
	// saved is the file's content as this cloud last read or wrote it:
	// the inventory on disk, which a failed write restores in memory.
	saved []byte
}

// openStore opens the state file's lock file.
func openStore(path string) (*store, error) {
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening sim state lock %s, %w", path+".lock", err)
	}
	return &store{path: path, lock: lock}, nil
}

// acquire takes the lock, waiting for another holder to release it.
func (st *store) acquire() error {
	if err := flock(st.lock, true); err != nil {
		return fmt.Errorf("locking sim state %s, %w", st.path, err)
	}
	return nil
}

// release drops the lock.
func (st *store) release() {
	_ = flock(st.lock, false)
}

// close releases the lock file.
func (st *store) close() error {
	return st.lock.Close()
}

// refresh reads the file under the lock. It returns the inventory when
// the file differs from what this cloud last read or wrote, nil when it
// does not or does not exist (a later write recreates it), and an error
// naming the file when it cannot be read or is corrupt.
func (st *store) refresh() (*State, error) {
	data, err := readlimit.File(st.path, MaxStateBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading sim state %s, %w", st.path, err)
	}
	if st.saved != nil && bytes.Equal(data, st.saved) {
		return nil, nil
	}
	s, err := decodeState(st.path, data)
	if err != nil {
		return nil, err
	}
	st.saved = data
	return s, nil
}

// lastSaved is the inventory as the file holds it.
func (st *store) lastSaved() (*State, error) {
	return decodeState(st.path, st.saved)
}

// save writes the inventory durably: to a temporary file in the same
// directory, synced, renamed over the file, and the directory synced, so
// a crash at any point leaves either the old inventory or the new one.
func (st *store) save(s *State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding sim state %s, %w", st.path, err)
	}
	if err := writeDurably(st.path, data); err != nil {
		// saved stays the old content. Should the rename have happened
		// before syncing the directory failed, the file now differs from
		// it, so the next operation re-reads the file: memory follows disk.
		return err
	}
	st.saved = data
	return nil
}

func writeDurably(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing sim state %s, %w", path, err)
	}
	fail := func(err error) error {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing sim state %s, %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing sim state %s, %w", path, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing sim state directory %s, %w", dir, err)
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing sim state directory %s, %w", dir, err)
	}
	return nil
}
