// Command pulumi-language-python is a small Python language host for the Pulumi engine, written for ha-endpoint.
//
// Why our own: the upstream host lives in its own Go module
// (github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3) which has no tags and whose release-commit
// pseudo-versions are not served by the module proxy these machines can reach (see engine/README.md). Everything it
// needs to talk to the engine and to Python is in the sdk/v3 module, which is served at the exact version we pin
// (v3.272.0, matching pulumi==3.272.0 in requirements.txt):
//   - the gRPC LanguageRuntime service (proto/go),
//   - the Python toolchain resolution: pip + virtualenv option, uv, poetry (python/toolchain),
//   - the program runner script `pulumi-language-python-exec`, copied next to this binary by engine/build.sh.
//
// Implemented: Handshake, GetPluginInfo, GetRequiredPlugins, GetRequiredPackages (from the pulumi-plugin.json files of
// the installed Python packages, as upstream does), Run (via the exec script, exit code 32 = bail), RunPlugin (policy
// packs via `python -u -m pulumi.policy <engine> <dir>`, and Python resource plugins), InstallDependencies, About,
// GetProgramDependencies, RuntimeOptionsPrompts. Code generation RPCs stay unimplemented (not needed to run programs).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
)

// version is the version this host reports; engine/build.sh sets it with -ldflags "-X main.version=...".
var version = "3.272.0"

// Exit code the exec script uses after it has already shown the user an actionable error (upstream convention).
const bailExitCode = 32

func main() {
	fs := flag.NewFlagSet("pulumi-language-python", flag.ContinueOnError)
	// Flags the engine or older engines may pass; accepted and ignored unless used below.
	_ = fs.String("tracing", "", "emit tracing to a Zipkin-compatible tracing endpoint")
	_ = fs.String("root", "", "project root path (unused)")
	_ = fs.String("binary", "", "unused")
	_ = fs.String("virtualenv", "", "unused: use the runtime options in Pulumi.yaml")
	_ = fs.String("typechecker", "", "unused")
	_ = fs.String("toolchain", "", "unused")
	_ = fs.Bool("logtostderr", false, "unused")
	_ = fs.Int("v", 0, "unused")
	if err := fs.Parse(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-python: %v\n", err)
		os.Exit(2)
	}
	engineAddress := ""
	if fs.NArg() > 0 {
		engineAddress = fs.Arg(0)
	}

	execPath, err := execScriptPath()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-python: %v\n", err)
		os.Exit(1)
	}

	host := &pythonHost{engineAddress: engineAddress, execPath: execPath}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, host)
			return nil
		},
		Options: rpcutil.OpenTracingServerInterceptorOptions(nil),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-python: could not start the language host: %v\n", err)
		os.Exit(1)
	}
	// The engine reads the port from the first line of stdout.
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-python: %v\n", err)
		os.Exit(1)
	}
}

// execScriptPath finds pulumi-language-python-exec next to this binary (how upstream ships it), else on PATH.
func execScriptPath() (string, error) {
	const name = "pulumi-language-python-exec"
	if self, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		candidate := filepath.Join(filepath.Dir(self), name)
		if _, err := os.Stat(candidate); err == nil {
			return candidate, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found next to the language host nor on PATH", name)
}

type pythonHost struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu            sync.Mutex
	engineAddress string
	execPath      string
}

func (h *pythonHost) engine() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.engineAddress
}

func (h *pythonHost) Handshake(
	_ context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if req.GetEngineAddress() != "" {
		h.engineAddress = req.GetEngineAddress()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *pythonHost) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

// resolveToolchain maps the runtime options of Pulumi.yaml / PulumiPolicy.yaml (virtualenv, toolchain, typechecker)
// onto the sdk's Python toolchain.
func resolveToolchain(info *pulumirpc.ProgramInfo) (toolchain.Toolchain, error) {
	opts := toolchain.PythonOptions{
		Root:       info.GetRootDirectory(),
		ProgramDir: info.GetProgramDirectory(),
		Toolchain:  toolchain.Auto,
	}
	if opts.ProgramDir == "" {
		opts.ProgramDir = opts.Root
	}
	fields := map[string]*structpb.Value{}
	if info.GetOptions() != nil {
		fields = info.GetOptions().GetFields()
	}
	if v, ok := fields["virtualenv"]; ok {
		opts.Virtualenv = v.GetStringValue()
	}
	if v, ok := fields["typechecker"]; ok {
		switch strings.ToLower(v.GetStringValue()) {
		case "mypy":
			opts.Typechecker = toolchain.TypeCheckerMypy
		case "pyright":
			opts.Typechecker = toolchain.TypeCheckerPyright
		case "", "none":
		default:
			return nil, fmt.Errorf("unsupported typechecker option: %q", v.GetStringValue())
		}
	}
	if v, ok := fields["toolchain"]; ok {
		switch strings.ToLower(v.GetStringValue()) {
		case "", "auto":
		case "pip":
			opts.Toolchain = toolchain.Pip
		case "poetry":
			opts.Toolchain = toolchain.Poetry
		case "uv":
			opts.Toolchain = toolchain.Uv
		default:
			return nil, fmt.Errorf("unsupported toolchain option: %q", v.GetStringValue())
		}
	}
	return toolchain.ResolveToolchain(opts)
}

// pluginManifest is one pulumi-plugin.json found in an installed Python package.
type pluginManifest struct {
	Resource bool   `json:"resource"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Server   string `json:"server"`
	Package  string `json:"package"`
}

// listPluginsScript prints the pulumi-plugin.json manifests of the installed distributions as one JSON list.
const listPluginsScript = `
import json, importlib.metadata as md
out = []
for dist in md.distributions():
    for f in (dist.files or []):
        if f.name == "pulumi-plugin.json":
            try:
                data = json.loads(f.read_text())
            except Exception:
                continue
            if isinstance(data, dict):
                data["package"] = dist.metadata["Name"]
                if not data.get("version"):  # as upstream: a manifest without a version means the package's
                    data["version"] = dist.version
                out.append(data)
print(json.dumps(out))
`

func (h *pythonHost) requiredPlugins(ctx context.Context, info *pulumirpc.ProgramInfo) ([]pluginManifest, error) {
	tc, err := resolveToolchain(info)
	if err != nil {
		return nil, err
	}
	cmd, err := tc.Command(ctx, "-c", listPluginsScript)
	if err != nil {
		return nil, err
	}
	cmd.Dir = info.GetProgramDirectory()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing the Python packages' Pulumi plugins: %w: %s", err, stderr.String())
	}
	var manifests []pluginManifest
	if err := json.Unmarshal(out, &manifests); err != nil {
		return nil, fmt.Errorf("parsing the Python packages' Pulumi plugins: %w", err)
	}
	seen := map[string]bool{}
	var result []pluginManifest
	for _, m := range manifests {
		if !m.Resource || m.Name == "" {
			continue
		}
		key := m.Name + "@" + m.Version
		if seen[key] {
			continue
		}
		seen[key] = true
		if m.Version != "" && !strings.HasPrefix(m.Version, "v") {
			m.Version = "v" + m.Version
		}
		result = append(result, m)
	}
	return result, nil
}

func (h *pythonHost) GetRequiredPlugins(
	ctx context.Context, req *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	plugins, err := h.requiredPlugins(ctx, req.GetInfo())
	if err != nil {
		return nil, err
	}
	resp := &pulumirpc.GetRequiredPluginsResponse{}
	for _, p := range plugins {
		resp.Plugins = append(resp.Plugins, &pulumirpc.PluginDependency{
			Name: p.Name, Kind: "resource", Version: p.Version, Server: p.Server,
		})
	}
	return resp, nil
}

func (h *pythonHost) GetRequiredPackages(
	ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	plugins, err := h.requiredPlugins(ctx, req.GetInfo())
	if err != nil {
		return nil, err
	}
	resp := &pulumirpc.GetRequiredPackagesResponse{}
	for _, p := range plugins {
		resp.Packages = append(resp.Packages, &pulumirpc.PackageDependency{
			Name: p.Name, Kind: "resource", Version: p.Version, Server: p.Server,
		})
	}
	return resp, nil
}

func (h *pythonHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	if info == nil {
		info = &pulumirpc.ProgramInfo{RootDirectory: req.GetPwd(), ProgramDirectory: req.GetPwd(), EntryPoint: req.GetProgram()}
	}
	tc, err := resolveToolchain(info)
	if err != nil {
		return nil, err
	}
	if err := tc.ValidateVenv(ctx); err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	program := info.GetEntryPoint()
	if program == "" {
		program = req.GetProgram()
	}
	if program == "" {
		program = "."
	}
	if !filepath.IsAbs(program) {
		program = filepath.Join(info.GetProgramDirectory(), program)
	}
	pwd := req.GetPwd()
	if pwd == "" {
		pwd = info.GetProgramDirectory()
	}

	args := []string{
		"-u", h.execPath,
		"--monitor", req.GetMonitorAddress(),
		"--engine", h.engine(),
		"--project", req.GetProject(),
		"--root_directory", info.GetRootDirectory(),
		"--stack", req.GetStack(),
		"--pwd", pwd,
		"--dry_run", strconv.FormatBool(req.GetDryRun()),
		"--parallel", strconv.Itoa(int(req.GetParallel())),
	}
	if req.GetOrganization() != "" {
		args = append(args, "--organization", req.GetOrganization())
	}
	args = append(args, program)
	args = append(args, req.GetArgs()...)

	cmd, err := tc.Command(ctx, args...)
	if err != nil {
		return nil, err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	config := req.GetConfig()
	if config == nil {
		config = map[string]string{} // the exec script wants a JSON object, never null
	}
	configJSON, err := json.Marshal(config)
	if err != nil {
		return nil, err
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secretKeysJSON, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, err
	}
	env = append(env, "PULUMI_CONFIG="+string(configJSON), "PULUMI_CONFIG_SECRET_KEYS="+string(secretKeysJSON))
	cmd.Env = env
	cmd.Dir = pwd
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr

	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if exitErr.ExitCode() == bailExitCode {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{
				Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode()),
			}, nil
		}
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

// streamWriter sends what is written to it to a RunPlugin / InstallDependencies stream.
type streamWriter struct {
	mu   *sync.Mutex
	send func([]byte) error
}

func (w streamWriter) Write(p []byte) (int, error) {
	buf := make([]byte, len(p))
	copy(buf, p)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.send(buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (h *pythonHost) RunPlugin(
	req *pulumirpc.RunPluginRequest, server grpc.ServerStreamingServer[pulumirpc.RunPluginResponse],
) error {
	ctx := server.Context()
	info := req.GetInfo()
	if info == nil {
		info = &pulumirpc.ProgramInfo{RootDirectory: req.GetProgram(), ProgramDirectory: req.GetProgram(), EntryPoint: "."}
	}
	tc, err := resolveToolchain(info)
	if err != nil {
		return err
	}
	programDir := info.GetProgramDirectory()

	var cmd *exec.Cmd
	switch req.GetKind() {
	case "analyzer":
		// A Python policy pack: `python -u -m pulumi.policy <engine address> <pack dir>`; pulumi_policy serves the
		// Analyzer service itself (including ConfigureStack) and prints its port.
		args := append([]string{"-u", "-m", "pulumi.policy"}, req.GetArgs()...)
		args = append(args, programDir)
		cmd, err = tc.Command(ctx, args...)
	default:
		// A plugin written in Python: run its program directory.
		program := filepath.Join(programDir, info.GetEntryPoint())
		args := append([]string{"-u", program}, req.GetArgs()...)
		cmd, err = tc.Command(ctx, args...)
	}
	if err != nil {
		return err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env, req.GetEnv()...)
	cmd.Dir = req.GetPwd()
	if cmd.Dir == "" {
		cmd.Dir = programDir
	}

	var mu sync.Mutex
	cmd.Stdout = streamWriter{mu: &mu, send: func(b []byte) error {
		return server.Send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stdout{Stdout: b}})
	}}
	cmd.Stderr = streamWriter{mu: &mu, send: func(b []byte) error {
		return server.Send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stderr{Stderr: b}})
	}}

	code := 0
	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			return err
		}
		code = exitErr.ExitCode()
	}
	mu.Lock()
	defer mu.Unlock()
	return server.Send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: int32(code)}})
}

func (h *pythonHost) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest, server grpc.ServerStreamingServer[pulumirpc.InstallDependenciesResponse],
) error {
	info := req.GetInfo()
	if info == nil {
		info = &pulumirpc.ProgramInfo{RootDirectory: req.GetDirectory(), ProgramDirectory: req.GetDirectory()}
	}
	tc, err := resolveToolchain(info)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	stdout := streamWriter{mu: &mu, send: func(b []byte) error {
		return server.Send(&pulumirpc.InstallDependenciesResponse{Stdout: b})
	}}
	stderr := streamWriter{mu: &mu, send: func(b []byte) error {
		return server.Send(&pulumirpc.InstallDependenciesResponse{Stderr: b})
	}}
	return tc.InstallDependencies(server.Context(), info.GetProgramDirectory(), req.GetUseLanguageVersionTools(),
		true /*showOutput*/, stdout, stderr)
}

func (h *pythonHost) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	tc, err := resolveToolchain(req.GetInfo())
	if err != nil {
		return nil, err
	}
	about, err := tc.About(ctx)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.AboutResponse{
		Executable: about.PythonExecutable,
		Version:    about.PythonVersion.String(),
		Metadata:   map[string]string{"toolchain": about.ToolchainVersion.String(), "host": "ha-endpoint"},
	}, nil
}

func (h *pythonHost) GetProgramDependencies(
	ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	tc, err := resolveToolchain(req.GetInfo())
	if err != nil {
		return nil, err
	}
	pkgs, err := tc.ListPackages(ctx, req.GetTransitiveDependencies())
	if err != nil {
		return nil, err
	}
	resp := &pulumirpc.GetProgramDependenciesResponse{}
	for _, p := range pkgs {
		resp.Dependencies = append(resp.Dependencies, &pulumirpc.DependencyInfo{Name: p.Name, Version: p.Version})
	}
	return resp, nil
}

func (h *pythonHost) RuntimeOptionsPrompts(
	context.Context, *pulumirpc.RuntimeOptionsRequest,
) (*pulumirpc.RuntimeOptionsResponse, error) {
	return &pulumirpc.RuntimeOptionsResponse{}, nil
}
