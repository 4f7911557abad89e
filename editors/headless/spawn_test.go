package headless

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// serverHelperEnv makes the test binary a server that writes
// serverHelperNotes notifications and exits at once, reading nothing.
const serverHelperEnv = "AGENTLS_HEADLESS_TEST_SERVER"

const serverHelperNotes = 400

func TestMain(m *testing.M) {
	if os.Getenv(serverHelperEnv) != "" {
		w := bufio.NewWriter(os.Stdout)
		pad := strings.Repeat("x", 1000)
		for i := 1; i <= serverHelperNotes; i++ {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","method":"window/logMessage","params":{"type":3,"message":"%d %s"}}`, i, pad)
			fmt.Fprintf(w, "Content-Length: %d\r\n\r\n%s", len(body), body)
		}
		_ = w.Flush()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSpawnedServerOutputIsReadToItsEnd(t *testing.T) {
	// 400 KB of notifications: far more than a pipe holds, so the server
	// exits while the last of them still wait in the pipe.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ed, err := Start(ctx, Options{
		Root:         t.TempDir(),
		Command:      []string{os.Args[0], "-test.run=^$"},
		Env:          append(os.Environ(), serverHelperEnv+"=1"),
		NoInitialize: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ed.Close()
	code, err := ed.Wait(ctx)
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v (stderr: %s)", code, err, ed.Stderr())
	}
	notes := ed.Notifications()
	if len(notes) != serverHelperNotes {
		t.Fatalf("received %d of the %d notifications the server sent before it exited", len(notes), serverHelperNotes)
	}
	if last := string(notes[len(notes)-1].Params); !strings.Contains(last, fmt.Sprintf(`"%d x`, serverHelperNotes)) {
		t.Errorf("the last notification is %.60s…", last)
	}
}
