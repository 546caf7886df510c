//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Each boundary runs its commands as a uid of its own, taken from a range no
// distribution hands out to people or services and no account on the machine
// has: two Jobs on one self-hosted runner cannot touch each other's work
// trees, homes or processes. A uid is held by an exclusive lock on its file
// in leaseDir for as long as the boundary is open; the lock goes with the
// process that holds it, so a Job that dies frees its uid.
const (
	firstUID = 80000
	uidCount = 1000
)

// leaseDir holds one lock file per uid in use. It is root's alone.
var leaseDir = "/run/roadmap-sandbox"

// uidLease is a uid held for one boundary.
type uidLease struct {
	uid  int
	file *os.File
}

// takeUID locks the first free uid of the range.
func takeUID() (*uidLease, error) {
	if err := os.MkdirAll(leaseDir, 0o700); err != nil {
		return nil, fmt.Errorf("the sandbox's uid leases: %w", err)
	}
	for uid := firstUID; uid < firstUID+uidCount; uid++ {
		if _, err := user.LookupId(strconv.Itoa(uid)); err == nil {
			continue // an account has it: never share its files
		}
		f, err := os.OpenFile(filepath.Join(leaseDir, strconv.Itoa(uid)+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("the sandbox's uid leases: %w", err)
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &uidLease{uid: uid, file: f}, nil
		}
		f.Close()
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("the sandbox's uid leases: lock %d: %w", uid, err)
		}
	}
	return nil, fmt.Errorf("all %d sandbox uids (%d to %d) are in use on this machine", uidCount, firstUID, firstUID+uidCount-1)
}

// release frees the uid for another boundary.
func (l *uidLease) release() error {
	if l == nil || l.file == nil {
		return nil
	}
	err := l.file.Close() // closing the only descriptor drops the lock
	l.file = nil
	return err
}
