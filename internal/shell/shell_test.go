//go:build unix

package shell

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary the helper of TestCommandsDieWithTheirRunner.
const helperEnv = "AGENTLS_SHELL_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		helper()
		return
	}
	os.Exit(m.Run())
}

// helper runs two sleeps through the runner, prints the group's id and
// waits to be killed.
func helper() {
	_, _, err := run(context.Background(), os.TempDir(), "sleep 300 & sleep 300", nil, io.Discard, func(g *Group) {
		fmt.Println(g.ID())
	})
	fmt.Fprintln(os.Stderr, "helper:", err)
	os.Exit(1)
}

// awaitGroup polls process group pgid until done says its members are as
// wanted, and fails the test when that does not happen in time.
func awaitGroup(t *testing.T, pgid int, what string, done func(members []string) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		members := groupMembers(pgid)
		if done(members) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d: %s: it holds %q", pgid, what, members)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// awaitEmpty waits for every process of group pgid to be gone.
func awaitEmpty(t *testing.T, pgid int) {
	t.Helper()
	awaitGroup(t, pgid, "still has processes", func(m []string) bool { return len(m) == 0 })
}

// runInGroup is Run that also tells the command's process group.
func runInGroup(t *testing.T, ctx context.Context, command string) (code int, killed bool, out string, pgid int) {
	t.Helper()
	o := NewOutput(OutputHead, OutputTail)
	code, killed, err := run(ctx, t.TempDir(), command, nil, o, func(g *Group) { pgid = g.ID() })
	if err != nil {
		t.Fatal(err)
	}
	return code, killed, o.String(), pgid
}

func TestRun(t *testing.T) {
	ctx := context.Background()
	t.Run("returns combined output and the exit code", func(t *testing.T) {
		res := Run(ctx, t.TempDir(), "echo out; echo err >&2; exit 3", 10*time.Second, nil)
		if res.ExitCode != 3 || !strings.Contains(res.Output, "out") || !strings.Contains(res.Output, "err") || res.TimedOut {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("says it timed out when the timeout killed the command", func(t *testing.T) {
		res := Run(ctx, t.TempDir(), "echo started; sleep 30", 100*time.Millisecond, nil)
		if !res.TimedOut || res.ExitCode != -1 || res.Output != "started\n" {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("kills the whole process group when the context ends", func(t *testing.T) {
		tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, killed, _, pgid := runInGroup(t, tctx, "sleep 30 & sleep 30")
		if !killed {
			t.Fatal("the command was not killed")
		}
		awaitEmpty(t, pgid)
	})
	t.Run("keeps the head and the tail of a long output and says how much it cut", func(t *testing.T) {
		res := Run(ctx, t.TempDir(), "echo FIRST; head -c 2000000 /dev/zero | tr '\\0' x; echo; echo LAST", 10*time.Second, nil)
		if len(res.Output) > MaxOutput+100 || !strings.HasPrefix(res.Output, "FIRST\n") || !strings.HasSuffix(res.Output, "\nLAST\n") {
			t.Fatalf("output of %d bytes: %.20q…%q", len(res.Output), res.Output, res.Output[max(len(res.Output)-20, 0):])
		}
		m := regexp.MustCompile(`\[… (\d+) bytes of output cut here …\]`).FindStringSubmatch(res.Output)
		if m == nil {
			t.Fatal("the output does not say how much was cut")
		}
		cut, _ := strconv.Atoi(m[1])
		total := len("FIRST\n") + 2000000 + len("\nLAST\n")
		if kept := len(res.Output) - len(Marker(int64(cut))); kept+cut != total {
			t.Errorf("kept %d bytes and says %d were cut, of %d", kept, cut, total)
		}
	})
	t.Run("reads the output to its end when the command ends at once", func(t *testing.T) {
		res := Run(ctx, t.TempDir(), "head -c 300000 /dev/zero | tr '\\0' y; printf END", 10*time.Second, nil)
		if len(res.Output) != 300003 || !strings.HasSuffix(res.Output, "yEND") {
			t.Fatalf("output of %d bytes ending %q", len(res.Output), res.Output[max(len(res.Output)-10, 0):])
		}
	})
}

func TestRunKillsWhatTheCommandLeftBehind(t *testing.T) {
	code, killed, out, pgid := runInGroup(t, context.Background(), "sleep 30 >/dev/null 2>&1 & echo started")
	if code != 0 || killed || out != "started\n" {
		t.Fatalf("exit %d, killed %v, output %q", code, killed, out)
	}
	awaitEmpty(t, pgid)
}

func TestCommandsDieWithTheirRunner(t *testing.T) {
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"=1")
	stdout, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = helper.Process.Kill()
		_ = helper.Wait()
		t.Fatalf("the helper did not say its group: %v", err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	awaitGroup(t, pgid, "the two sleeps did not start", func(m []string) bool {
		return len(slices.DeleteFunc(m, func(n string) bool { return n != "sleep" })) == 2
	})
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	awaitEmpty(t, pgid)
}

func TestRunLeavesOutTheVariablesToUnset(t *testing.T) {
	t.Setenv("SHELL_TEST_API_KEY", "kept-from-commands")
	t.Setenv("SHELL_TEST_OTHER", "inherited")
	res := Run(context.Background(), t.TempDir(), "echo \"key=$SHELL_TEST_API_KEY other=$SHELL_TEST_OTHER\"", 10*time.Second, []string{"SHELL_TEST_API_KEY"})
	if res.ExitCode != 0 || strings.TrimSpace(res.Output) != "key= other=inherited" {
		t.Fatalf("got %+v", res)
	}
}

func TestTerminateAsksTheGroupToEndAndKeepsTheWatchdog(t *testing.T) {
	g, err := NewGroup()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	// A process that ends on SIGTERM by itself, and one that ignores it.
	polite := exec.Command("sleep", "300")
	stubborn := exec.Command("sh", "-c", "trap '' TERM; while :; do sleep 1; done")
	for _, c := range []*exec.Cmd{polite, stubborn} {
		if err := g.Start(c); err != nil {
			t.Fatal(err)
		}
	}
	awaitGroup(t, g.ID(), "the processes did not start", func(m []string) bool { return slices.Contains(m, "sleep") && len(m) >= 3 })
	g.Terminate()
	if err := polite.Wait(); err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Fatalf("the sleep ended with %v, want terminated by SIGTERM", err)
	}
	// The watchdog ignored SIGTERM: when the group is closed it is what
	// kills the process that ignored it too.
	if err := g.watchdog.Process.Signal(syscall.Signal(0)); err != nil || processState(g.watchdog.Process.Pid) == "Z" {
		t.Fatalf("after Terminate the watchdog is gone (%v): it must ignore SIGTERM", err)
	}
	g.Close()
	_ = stubborn.Wait()
	awaitEmpty(t, g.ID())
}

// processState is the state letter /proc gives process pid ("" when gone).
func processState(pid int) string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	if end := strings.LastIndexByte(string(data), ')'); end >= 0 {
		if f := strings.Fields(string(data[end+1:])); len(f) > 0 {
			return f[0]
		}
	}
	return ""
}
