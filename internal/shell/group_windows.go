//go:build windows

package shell

import (
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// shellCommand is `sh -c command` where a sh is on the PATH (Git for
// Windows has one), else `cmd /d /s /c command`.
func shellCommand(command string) *exec.Cmd {
	if sh, err := exec.LookPath("sh"); err == nil {
		return exec.Command(sh, "-c", command)
	}
	cmd := exec.Command("cmd.exe")
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: `cmd.exe /d /s /c "` + command + `"`}
	return cmd
}

// A Group is a job object that kills its processes when it is closed, so
// that the processes started into it (Start) and all their children end
// with it; the system closes it when this process ends, however it ends.
type Group struct {
	job windows.Handle

	mu     sync.Mutex
	closed bool
}

// NewGroup creates the job object.
func NewGroup() (*Group, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("process group: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return nil, fmt.Errorf("process group: %w", err)
	}
	return &Group{job: job}, nil
}

var ntResumeProcess = windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")

// Start starts cmd suspended, puts it in the job and resumes it, so that
// nothing it starts escapes the job. It sets cmd.SysProcAttr.CreationFlags.
func (g *Group) Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP
	if err := cmd.Start(); err != nil {
		return err
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_SUSPEND_RESUME, false, uint32(cmd.Process.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(g.job, h)
		if err == nil {
			if r, _, callErr := ntResumeProcess.Call(uintptr(h)); r != 0 {
				err = fmt.Errorf("resuming the process: %w", callErr)
			}
		}
		_ = windows.CloseHandle(h)
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("process group: %w", err)
	}
	return nil
}

// ID is 0: a job object has no id to show.
func (g *Group) ID() int { return 0 }

// Kill ends every process of the job. After Close it does nothing.
func (g *Group) Kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		_ = windows.TerminateJobObject(g.job, 1)
	}
}

// Terminate ends every process of the job: Windows has no SIGTERM to ask
// with.
func (g *Group) Terminate() { g.Kill() }

// Close kills the job's processes and closes it. Closing again does
// nothing.
func (g *Group) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		g.closed = true
		_ = windows.TerminateJobObject(g.job, 1)
		_ = windows.CloseHandle(g.job)
	}
}
