// Command agentls is an AI coding agent that editors run the way they run a
// language server: `agentls` (or `agentls serve`) speaks JSON-RPC with LSP
// framing on stdin/stdout. See docs/PROTOCOL.md. `agentls acp` speaks the
// Agent Client Protocol instead (docs/ACP.md), and so does serve when the
// first byte it reads is "{".
//
// In serve, stdout carries the protocol and nothing else: logs go to stderr,
// or to --log-file. The exit code is that of docs/PROTOCOL.md §2 (0 after
// shutdown and exit, 1 when the input ends or exit comes without shutdown,
// when the input ends inside a frame, or on SIGTERM and SIGINT, 3 when the
// editor read nothing for --write-timeout), and 2 for a bad command line;
// before it exits, every task is stopped and its session written. `agentls
// run` is package runner, with its own exit codes; so are `agentls undo`,
// `agentls models`, `agentls check-model`, `agentls intents` and `agentls
// engines`, which start the server as `agentls run` does and ask it one
// question.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/handlers"
	"github.com/agentls/agentls/handlers/acpface"
	"github.com/agentls/agentls/mcp/bridge"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise
// it comes from the module's build info.
var version = ""

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `agentls: an AI coding agent that editors run like a language server

Usage:
  agentls [serve] [flags]     speak JSON-RPC (LSP framing) on stdin/stdout; an editor
                              that starts with "{" is served as an ACP client
  agentls acp [flags]         be an ACP agent on stdin/stdout (the Agent Client
                              Protocol of Zed, JetBrains, CodeCompanion, agent-shell)
  agentls run [flags] PROMPT  run one prompt here, as a headless editor (agentls run -h)
  agentls undo [flags]        take a task's changes back (agentls undo -h)
  agentls models [flags]      list the models the providers offer, the current one marked
  agentls check-model [flags] check that the model works, or say what is wrong
  agentls intents [flags]     list the intents agentls run --intent takes
  agentls engines [flags]     list the engines (Claude Code, Codex, Gemini CLI) agentls run --engine takes
  agentls mcp                 serve the editor's tools over MCP (stdio) to an agent agentls runs;
                              started by agentls with the entry it hands that agent (docs/MCP.md)
  agentls version             print the version

Exit codes of serve: 0 exit after shutdown; 1 exit without shutdown, the end
of stdin without shutdown or inside a frame, or a signal; 2 a bad command
line; 3 the editor read nothing for --write-timeout (docs/PROTOCOL.md §2).
Exit codes of acp: 0 the end of stdin, or a signal; 1 stdin ended inside a
message; 2 a bad command line; 3 the client read nothing for --write-timeout
(docs/ACP.md).

Flags of serve and acp:
`

func run(args []string, stdin *os.File, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || args[0] == "-h" || args[0] == "--help") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(args, stdin, stdout, stderr, false)
	case "acp":
		return serve(args, stdin, stdout, stderr, true)
	case "run":
		return runCmd(args, stdin, stdout, stderr)
	case "undo":
		return undoCmd(args, stdout, stderr)
	case "models", "check-model", "intents", "engines":
		return queryCmd(cmd, args, stdout, stderr)
	case "mcp":
		return mcpCmd(args, stdin, stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "agentls %s\n", getVersion())
		return 0
	case "help", "-h", "--help":
		printUsage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "agentls: unknown command %q (want serve, acp, run, undo, models, check-model, intents, engines, mcp or version)\n", cmd)
	return 2
}

// printUsage prints the usage of agentls and the flags of serve.
func printUsage(w io.Writer) {
	fmt.Fprint(w, usage)
	newServeFlags(w, new(serveOptions)).PrintDefaults()
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

type serveOptions struct {
	logLevel     string
	logFile      string
	zones        stringList
	deny         stringList
	record       string
	writeTimeout time.Duration
}

func newServeFlags(out io.Writer, o *serveOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&o.logFile, "log-file", "", "write logs to this file instead of stderr")
	fs.Var(&o.zones, "zone", "glob the agent may touch (repeatable; replaces the default **)")
	fs.Var(&o.deny, "deny", "glob the agent may not touch (repeatable; added to **/.git/**)")
	fs.StringVar(&o.record, "record", "", "record every model answer into this file as a replayable script (docs/MODELS.md)")
	fs.DurationVar(&o.writeTimeout, "write-timeout", 5*time.Minute, "give up on an editor that reads nothing agentls writes for this long: interrupt the running tasks and exit with code 3 (0: wait for ever)")
	return fs
}

// serve is `agentls serve` and, with acp, `agentls acp`: one editor on
// stdin/stdout. serve tells the protocols apart by the first byte the
// editor sends: "{" is ACP's newline-delimited JSON, anything else (an LSP
// header, "Content-Length") is LSP.
func serve(args []string, stdin *os.File, stdout, stderr io.Writer, acp bool) int {
	name := "serve"
	if acp {
		name = "acp"
	}
	var o serveOptions
	fs := newServeFlags(stderr, &o)
	if code, ok := parseFlags(fs, args, printUsage, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentls %s: unexpected argument %q\n", name, fs.Arg(0))
		return 2
	}
	if o.writeTimeout < 0 {
		fmt.Fprintf(stderr, "agentls %s: --write-timeout must not be negative, got %s\n", name, o.writeTimeout)
		return 2
	}
	log, closeLog, err := newLogger(o.logLevel, o.logFile, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agentls: %v\n", err)
		return 2
	}
	defer closeLog()

	base := api.DefaultSettings()
	if len(o.zones) > 0 {
		base.Zones.Allow = append([]string(nil), o.zones...)
	}
	base.Zones.Deny = append(base.Zones.Deny, o.deny...)
	for _, g := range append(append([]string(nil), base.Zones.Allow...), base.Zones.Deny...) {
		if err := api.ValidateGlob(g); err != nil {
			fmt.Fprintf(stderr, "agentls %s: --zone/--deny: %v\n", name, err)
			return 2
		}
	}

	in, out, restore := prepareStdio(stdin, log)
	defer restore()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if !acp {
		var err error
		if in, acp, err = sniff(ctx, in); err != nil {
			log.Info("no message before the end of input", zap.Error(err))
			return handlers.ExitError
		}
		if acp {
			log.Info("the editor speaks ACP: serving it as an ACP agent")
		}
	}
	var code int
	if acp {
		code = acpface.Serve(ctx, in, out, acpface.Options{
			Version:      getVersion(),
			Base:         base,
			Log:          log,
			Record:       o.record,
			WriteTimeout: o.writeTimeout,
		})
	} else {
		cwd, _ := os.Getwd()
		code = handlers.Serve(ctx, in, out, handlers.Options{
			Version:      getVersion(),
			Cwd:          cwd,
			Base:         base,
			Log:          log,
			Record:       o.record,
			WriteTimeout: o.writeTimeout,
		})
	}
	_ = log.Sync()
	return code
}

// sniff reads the first bytes of in up to the first that is not white
// space and reports whether it opens ACP's JSON ("{") rather than an LSP
// header. It returns a reader that gives those bytes again, then in's; it
// closes what in closes. ctx ending (a signal) ends the wait.
func sniff(ctx context.Context, in io.Reader) (io.Reader, bool, error) {
	if c, ok := in.(io.Closer); ok {
		stop := context.AfterFunc(ctx, func() { _ = c.Close() })
		defer stop()
	}
	var seen []byte
	buf := make([]byte, 1)
	for {
		n, err := in.Read(buf)
		if n == 1 {
			seen = append(seen, buf[0])
			switch buf[0] {
			case ' ', '\t', '\r', '\n':
				continue
			}
			return &replayed{head: seen, r: in}, buf[0] == '{', nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, context.Cause(ctx)
			}
			return nil, false, err
		}
	}
}

// replayed reads head, then r; Close closes r.
type replayed struct {
	head []byte
	r    io.Reader
}

func (p *replayed) Read(b []byte) (int, error) {
	if len(p.head) > 0 {
		n := copy(b, p.head)
		p.head = p.head[n:]
		return n, nil
	}
	return p.r.Read(b)
}

func (p *replayed) Close() error {
	if c, ok := p.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// newLogger logs to stderr, or to file when one is given. Never stdout:
// stdout carries the protocol.
func newLogger(level, file string, stderr io.Writer) (*zap.Logger, func(), error) {
	var lvl zapcore.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	sink := zapcore.AddSync(stderr)
	closeFn := func() {}
	if file != "" {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("--log-file: %w", err)
		}
		sink = zapcore.AddSync(f)
		closeFn = func() { _ = f.Close() }
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(sink), lvl)
	return zap.New(core).Named("agentls"), closeFn, nil
}

// mcpCmd is `agentls mcp`: the relay between an external agent (stdio) and
// the sidecar that runs it (docs/MCP.md, the bridge). Exit 0 when the session
// ended, 1 when it could not start or broke, 2 on misuse.
func mcpCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "agentls mcp: unexpected argument %q (it takes none: agentls starts it with its environment)\n", args[0])
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err := bridge.Relay(ctx, stdin, stdout, os.Getenv)
	switch {
	case errors.Is(err, bridge.ErrNotStarted):
		fmt.Fprintf(stderr, "agentls mcp: %v\n", err)
		return 2
	case err != nil && ctx.Err() == nil:
		fmt.Fprintf(stderr, "agentls mcp: %v\n", err)
		return 1
	}
	return 0
}

func getVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
