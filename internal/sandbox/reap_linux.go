//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// endTimeout bounds how long Close waits for the boundary's processes to
// go: SIGKILL cannot be ignored, so only a process stuck in the kernel (a
// dead NFS server) takes longer.
const endTimeout = 10 * time.Second

// endProcesses kills every process running as uid (in any PID namespace:
// the commands of this boundary, whatever they started) and every
// namespace init this process started for uid, and waits until none is
// left. Killing a command ends its init, whose death ends its namespace;
// killing an init that has not started its command yet ends it before it
// does. So a descriptor opened inside the boundary cannot be written after
// Close, and a command running in another goroutine returns from Wait.
func endProcesses(uid int) error {
	deadline := time.Now().Add(endTimeout)
	pause := time.Millisecond
	for {
		left := boundaryProcesses(uid)
		if len(left) == 0 {
			return nil
		}
		for _, pid := range left {
			killBoundaryProcess(pid, uid)
		}
		if time.Now().After(deadline) {
			var names []string
			for _, pid := range left {
				names = append(names, pid.String())
			}
			return fmt.Errorf("isolation: %d processes of the sandbox's uid %d were still there %v after Close killed them (%s); the uid stays taken until roadmap exits",
				len(left), uid, endTimeout, strings.Join(names, "; "))
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// boundaryPID is a process endProcesses ends.
type boundaryPID struct {
	pid  int
	init bool // a namespace init (root), not a process of the uid
}

func (p boundaryPID) String() string {
	cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.pid), "cmdline"))
	s := strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	if p.init {
		return fmt.Sprintf("pid %d (its namespace init)", p.pid)
	}
	return fmt.Sprintf("pid %d %q", p.pid, s)
}

// boundaryProcesses lists the host's processes of uid, zombies included
// (their namespace's init reaps them as it dies), and the live inits this
// process started for it.
func boundaryProcesses(uid int) []boundaryPID {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []boundaryPID
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ofUID, init := belongs(pid, uid); ofUID || init {
			out = append(out, boundaryPID{pid: pid, init: init})
		}
	}
	return out
}

// belongs says whether pid runs as uid (any of its real, effective, saved
// or file-system uids: /proc/PID's owner is root for a process that made
// itself non-dumpable, so the status file, not the owner, is read), or is
// a live namespace init of this process's for uid.
func belongs(pid, uid int) (ofUID, init bool) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return false, false // gone
	}
	var ppid int
	var zombie bool
	want := strconv.Itoa(uid)
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "Uid:":
			for _, u := range f[1:] {
				if u == want {
					return true, false
				}
			}
		case "PPid:":
			ppid, _ = strconv.Atoi(f[1])
		case "State:":
			zombie = f[1] == "Z" || f[1] == "X"
		}
	}
	if ppid != os.Getpid() || zombie {
		return false, false
	}
	cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil || !bytes.HasPrefix(cmdline, []byte(initName+"\x00")) {
		return false, false
	}
	// The init's spec is in its initial environment (it unsets the
	// variable, which leaves this copy as it was).
	environ, err := os.ReadFile(filepath.Join(dir, "environ"))
	if err != nil {
		return false, false
	}
	key := []byte(initEnv + `={"UID":` + want + ",")
	return false, bytes.HasPrefix(environ, key) || bytes.Contains(environ, append([]byte{0}, key...))
}

// killBoundaryProcess sends SIGKILL to pid through a pidfd, checking after
// it is open that the pid still names one of the boundary's processes: a
// pid freed and taken by another process in between is never signalled.
func killBoundaryProcess(p boundaryPID, uid int) {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if errors.Is(err, unix.ENOSYS) {
		// Before Linux 5.3 (Landlock needs 5.13, so hardly ever).
		if ofUID, init := belongs(p.pid, uid); ofUID || init {
			_ = unix.Kill(p.pid, unix.SIGKILL)
		}
		return
	}
	if err != nil {
		return // gone
	}
	defer unix.Close(fd)
	if ofUID, init := belongs(p.pid, uid); ofUID || init {
		_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	}
}
