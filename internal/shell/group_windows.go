//go:build windows

package shell

import (
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// shellCommand runs line with `cmd.exe /d /s /c "line"`, as VS Code and
// Node do: /s keeps the line as it is between the outer quotes, /d skips
// the AutoRun commands of the registry. Windows passes a command line, not
// arguments, so it is given whole.
func shellCommand(line string) *exec.Cmd {
	cmd := exec.Command("cmd.exe")
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: `cmd.exe /d /s /c "` + line + `"`}
	return cmd
}

// group puts p in a job object, Windows's process group: what p starts
// from then on joins the job, and killing the job kills them all, those
// left in the background included. A child p starts before it joins (in
// the instant after its start) is not in the job. Without a job (it cannot
// be made or joined) only p itself is killed. kill may be called more than
// once.
func group(p *os.Process) (kill func()) {
	job, err := newKillJob(p.Pid)
	if err != nil {
		return func() { _ = p.Kill() }
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = windows.TerminateJobObject(job, 1)
			_ = windows.CloseHandle(job)
		})
	}
}

// newKillJob makes a job whose processes die when it is closed, and puts
// the process pid in it.
func newKillJob(pid int) (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return 0, err
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return 0, err
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		_ = windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}
