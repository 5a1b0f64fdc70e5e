package packaging

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

// repoRoot is the repository root, two levels above this package.
func repoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(filepath.Dir(wd)) // test/packaging -> repo
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("expected the repository root at %s: %v", root, err)
	}
	return root
}

// renderKrewTemplate renders .krew.yaml the way krew-release-bot does:
// text/template with TagName (and Version) and the addURIAndSha function,
// which renders the URL with the tag and adds the archive's sha256. shaOf
// answers the sha256 of a rendered URL (the bot downloads it).
func renderKrewTemplate(file, tag string, shaOf func(uri string) (string, error)) ([]byte, error) {
	values := struct{ TagName, Version string }{tag, versionFromTag(tag)}
	var shaErr error
	funcs := template.FuncMap{
		"addURIAndSha": func(url, tag string) string {
			var buf bytes.Buffer
			ut, err := template.New("url").Parse(url)
			if err != nil {
				shaErr = fmt.Errorf("addURIAndSha %q: %w", url, err)
				return ""
			}
			if err := ut.Execute(&buf, struct{ TagName, Version string }{tag, versionFromTag(tag)}); err != nil {
				shaErr = fmt.Errorf("addURIAndSha %q: %w", url, err)
				return ""
			}
			sum, err := shaOf(buf.String())
			if err != nil && shaErr == nil {
				shaErr = err
			}
			return fmt.Sprintf("uri: %s\n    sha256: %s", buf.String(), sum)
		},
		"indent": func(spaces int, v string) string {
			v = strings.ReplaceAll(v, "    sha256:", "sha256:")
			pad := strings.Repeat(" ", spaces)
			return strings.TrimSpace(pad + strings.ReplaceAll(v, "\n", "\n"+pad))
		},
	}
	tmpl, err := template.New(filepath.Base(file)).Funcs(funcs).ParseFiles(file)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, values); err != nil {
		return nil, err
	}
	if shaErr != nil {
		return nil, shaErr
	}
	return out.Bytes(), nil
}

var versionRE = regexp.MustCompile(`\d+(\.\d+)+`)

func versionFromTag(tag string) string {
	if v := versionRE.FindString(tag); v != "" {
		return v
	}
	return tag
}

// checkPlatformShape checks what this project's manifest must say beyond
// krew's rules: the archive's URL on the release page, the format per OS,
// bin and the shipped files.
func checkPlatformShape(p *Plugin) error {
	var errs []string
	seen := map[osArch]bool{}
	for i, pl := range p.Spec.Platforms {
		oa := platformOf(pl)
		seen[oa] = true
		if len(pl.Selector.MatchLabels) != 2 || len(pl.Selector.MatchExpressions) != 0 {
			errs = append(errs, fmt.Sprintf("platforms[%d]: want matchLabels os and arch only", i))
		}
		ext, exe := "tar.gz", ""
		if oa.OS == "windows" {
			ext, exe = "zip", ".exe"
		}
		script := completionScript(oa.OS)
		wantURI := fmt.Sprintf("%s/releases/download/%s/kubectl-scale_preview_%s_%s_%s.%s",
			repoURL, p.Spec.Version, p.Spec.Version, oa.OS, oa.Arch, ext)
		if pl.URI != wantURI {
			errs = append(errs, fmt.Sprintf("platforms[%d] (%s/%s): uri %s, want %s", i, oa.OS, oa.Arch, pl.URI, wantURI))
		}
		if pl.Bin != pluginBin+exe {
			errs = append(errs, fmt.Sprintf("platforms[%d]: bin %q, want %q", i, pl.Bin, pluginBin+exe))
		}
		want := []FileOperation{{pluginBin + exe, "."}, {script, "."}, {"LICENSE", "."}}
		if !reflect.DeepEqual(pl.Files, want) {
			errs = append(errs, fmt.Sprintf("platforms[%d]: files %v, want %v", i, pl.Files, want))
		}
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, goarch := range []string{"amd64", "arm64"} {
			if !seen[osArch{goos, goarch}] {
				errs = append(errs, fmt.Sprintf("no platform for %s/%s", goos, goarch))
			}
		}
	}
	if p.Spec.Homepage != repoURL {
		errs = append(errs, fmt.Sprintf("homepage %q, want %q", p.Spec.Homepage, repoURL))
	}
	if strings.TrimSpace(p.Spec.Description) == "" || strings.TrimSpace(p.Spec.Caveats) == "" {
		errs = append(errs, "description and caveats must not be empty")
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// TestCommittedManifests validates plugin.yaml by krew's rules and checks
// that .krew.yaml renders, with plugin.yaml's version and sums, to the same
// manifest. It needs no build.
func TestCommittedManifests(t *testing.T) {
	root := repoRoot(t)

	// plugin.yaml is named for the repository, not the plugin: validate a
	// copy under the plugin's name, as krew-index stores it.
	data, err := os.ReadFile(filepath.Join(root, "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(t.TempDir(), pluginName+".yaml")
	if err := os.WriteFile(named, data, 0o644); err != nil {
		t.Fatal(err)
	}
	committed, err := validateManifestFile(named)
	if err != nil {
		t.Fatalf("plugin.yaml is not a valid krew manifest:\n%v", err)
	}
	if err := checkPlatformShape(committed); err != nil {
		t.Errorf("plugin.yaml:\n%v", err)
	}

	shaByURI := map[string]string{}
	for _, pl := range committed.Spec.Platforms {
		shaByURI[pl.URI] = pl.Sha256
	}
	rendered, err := renderKrewTemplate(filepath.Join(root, ".krew.yaml"), committed.Spec.Version, func(uri string) (string, error) {
		s, ok := shaByURI[uri]
		if !ok {
			return "", fmt.Errorf(".krew.yaml names %s, which plugin.yaml does not", uri)
		}
		return s, nil
	})
	if err != nil {
		t.Fatalf(".krew.yaml does not render as krew-release-bot would: %v", err)
	}
	fromTemplate, err := parsePlugin(rendered)
	if err != nil {
		t.Fatalf("rendered .krew.yaml: %v\n%s", err, rendered)
	}
	if err := validatePlugin(pluginName, fromTemplate); err != nil {
		t.Errorf("rendered .krew.yaml is not a valid krew manifest:\n%v", err)
	}
	if !reflect.DeepEqual(committed, fromTemplate) {
		a, _ := marshalPlugin(committed)
		b, _ := marshalPlugin(fromTemplate)
		t.Errorf(".krew.yaml and plugin.yaml differ (besides tag and sums):\n--- plugin.yaml\n%s\n--- .krew.yaml rendered\n%s", a, b)
	}

	// The rules themselves catch what they should.
	t.Run("rules reject bad manifests", func(t *testing.T) {
		bad := map[string]func(p *Plugin){
			"apiVersion":        func(p *Plugin) { p.APIVersion = "krew.googlecontainertools.github.com/v1alpha1" },
			"kind":              func(p *Plugin) { p.Kind = "Plugins" },
			"name":              func(p *Plugin) { p.Metadata.Name = "scale_preview" },
			"unsafe name":       func(p *Plugin) { p.Metadata.Name = "scale/preview" },
			"short desc":        func(p *Plugin) { p.Spec.ShortDescription = "" },
			"multi-line":        func(p *Plugin) { p.Spec.ShortDescription = "a\nb" },
			"version":           func(p *Plugin) { p.Spec.Version = "0.1.0" },
			"no platform":       func(p *Plugin) { p.Spec.Platforms = nil },
			"uri":               func(p *Plugin) { p.Spec.Platforms[0].URI = "" },
			"sha":               func(p *Plugin) { p.Spec.Platforms[0].Sha256 = "abc" },
			"bin":               func(p *Plugin) { p.Spec.Platforms[0].Bin = "" },
			"selector":          func(p *Plugin) { p.Spec.Platforms[0].Selector = nil },
			"selector key":      func(p *Plugin) { p.Spec.Platforms[0].Selector.MatchLabels["cpu"] = "x" },
			"selector value":    func(p *Plugin) { p.Spec.Platforms[0].Selector.MatchLabels["os"] = "plan9" },
			"overlap":           func(p *Plugin) { delete(p.Spec.Platforms[0].Selector.MatchLabels, "arch") },
			"files from":        func(p *Plugin) { p.Spec.Platforms[0].Files[0].From = "" },
			"files to":          func(p *Plugin) { p.Spec.Platforms[0].Files[0].To = "" },
			"files to outside":  func(p *Plugin) { p.Spec.Platforms[0].Files[0].To = "../x" },
			"files empty":       func(p *Plugin) { p.Spec.Platforms[0].Files = []FileOperation{} },
			"version leading 0": func(p *Plugin) { p.Spec.Version = "v01.0.0" },
		}
		for name, mutate := range bad {
			p, err := parsePlugin(data)
			if err != nil {
				t.Fatal(err)
			}
			mutate(p)
			if err := validatePlugin(pluginName, p); err == nil {
				t.Errorf("%s: the rules accept a bad manifest", name)
			}
		}
		if _, err := parsePlugin(append(append([]byte{}, data...), "\nunknownField: 1\n"...)); err == nil {
			t.Errorf("strict parsing accepts an unknown field")
		}
	})
}

// goreleaserConfig is the part of .goreleaser.yaml the manifests rely on.
type goreleaserConfig struct {
	Version     int    `json:"version"`
	ProjectName string `json:"project_name"`
	Builds      []struct {
		ID      string   `json:"id"`
		Main    string   `json:"main"`
		Binary  string   `json:"binary"`
		Env     []string `json:"env"`
		Flags   []string `json:"flags"`
		Goos    []string `json:"goos"`
		Goarch  []string `json:"goarch"`
		Ldflags []string `json:"ldflags"`
	} `json:"builds"`
	Archives []struct {
		ID              string   `json:"id"`
		IDs             []string `json:"ids"`
		Formats         []string `json:"formats"`
		NameTemplate    string   `json:"name_template"`
		WrapInDirectory any      `json:"wrap_in_directory"`
		Files           []any    `json:"files"`
		FormatOverrides []struct {
			Goos    string   `json:"goos"`
			Formats []string `json:"formats"`
		} `json:"format_overrides"`
	} `json:"archives"`
	Checksum struct {
		NameTemplate string `json:"name_template"`
	} `json:"checksum"`
}

// TestGoreleaserConfig checks that .goreleaser.yaml builds what the krew
// manifests name. `goreleaser check` validates the schema itself (it runs
// in `make release-snapshot`).
func TestGoreleaserConfig(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c goreleaserConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if c.Version != 2 {
		t.Errorf("version: %d, want 2 (goreleaser v2 schema)", c.Version)
	}
	// One build: the plugin. The completion helper is a script shipped as
	// an archive file, not a second binary.
	if len(c.Builds) != 1 {
		t.Errorf("%d builds, want one (the plugin %s; the completion helper is a script, not a build)", len(c.Builds), pluginBin)
	}
	var built bool
	for _, b := range c.Builds {
		if b.Binary != pluginBin {
			t.Errorf("unexpected build of %q (id %q)", b.Binary, b.ID)
			continue
		}
		built = true
		const main = "./cmd/kubectl-scale_preview"
		if b.ID != pluginBin {
			t.Errorf("build %s: id %q, want %q (the archive selects it by id)", b.Binary, b.ID, pluginBin)
		}
		if b.Main != main {
			t.Errorf("build %s: main %q, want %q", b.Binary, b.Main, main)
		}
		if !contains(b.Env, "CGO_ENABLED=0") {
			t.Errorf("build %s: CGO_ENABLED=0 missing from env %v", b.Binary, b.Env)
		}
		if !reflect.DeepEqual(b.Goos, []string{"linux", "darwin", "windows"}) || !reflect.DeepEqual(b.Goarch, []string{"amd64", "arm64"}) {
			t.Errorf("build %s: goos %v goarch %v, want linux/darwin/windows x amd64/arm64", b.Binary, b.Goos, b.Goarch)
		}
		if !contains(b.Flags, "-trimpath") {
			t.Errorf("build %s: flags %v lack -trimpath", b.Binary, b.Flags)
		}
		ld := strings.Join(b.Ldflags, " ")
		if !slices.Contains(strings.Fields(ld), "-s") || !slices.Contains(strings.Fields(ld), "-w") {
			t.Errorf("build %s: ldflags %q lack -s -w (strip the symbol table and DWARF)", b.Binary, ld)
		}
		for _, want := range []string{
			"-X github.com/scale-preview/scale-preview/pkg/version.Version={{.Version}}",
			"-X github.com/scale-preview/scale-preview/pkg/version.Commit={{.ShortCommit}}",
		} {
			if !strings.Contains(ld, want) {
				t.Errorf("build %s: ldflags lack %q", b.Binary, want)
			}
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(main), "main.go")); err != nil {
			t.Errorf("build %s: %v", b.Binary, err)
		}
	}
	if !built {
		t.Errorf("no build of %s", pluginBin)
	}
	// The old second binary must not come back.
	if _, err := os.Stat(filepath.Join(root, "cmd", completionBin, "main.go")); err == nil {
		t.Errorf("cmd/%s/main.go exists: the completion helper is the shipped script, not a Go program", completionBin)
	}
	if len(c.Archives) != 1 {
		t.Fatalf("want one archive definition, have %d", len(c.Archives))
	}
	a := c.Archives[0]
	if a.NameTemplate != "kubectl-scale_preview_{{ .Tag }}_{{ .Os }}_{{ .Arch }}" {
		t.Errorf("archive name_template %q", a.NameTemplate)
	}
	if !reflect.DeepEqual(a.Formats, []string{"tar.gz"}) || len(a.FormatOverrides) != 1 ||
		a.FormatOverrides[0].Goos != "windows" || !reflect.DeepEqual(a.FormatOverrides[0].Formats, []string{"zip"}) {
		t.Errorf("archive formats %v / overrides %+v, want tar.gz and zip on windows", a.Formats, a.FormatOverrides)
	}
	if !reflect.DeepEqual(a.IDs, []string{pluginBin}) {
		t.Errorf("archive ids %v, want [%s] (the one build)", a.IDs, pluginBin)
	}
	if a.WrapInDirectory != false {
		t.Errorf("archive wrap_in_directory %v, want false (the manifests' files.from are at the archive's root)", a.WrapInDirectory)
	}
	// files: LICENSE, and the completion script at the archive's root,
	// executable, the .cmd on Windows.
	wantScript := map[string]any{
		"src":          `cmd/` + completionBin + `/` + completionBin + `{{ if eq .Os "windows" }}.cmd{{ end }}`,
		"strip_parent": true,
		"info":         map[string]any{"mode": float64(0o755)},
	}
	if len(a.Files) != 2 || a.Files[0] != "LICENSE" || !reflect.DeepEqual(a.Files[1], wantScript) {
		t.Errorf("archive files %v, want [LICENSE %v]", a.Files, wantScript)
	}
	if m, ok := a.Files[len(a.Files)-1].(map[string]any); ok {
		if src, ok := m["src"].(string); ok {
			for _, goos := range []string{"linux", "darwin", "windows"} {
				got, err := renderOs(src, goos)
				if err != nil {
					t.Errorf("archive files src %q: %v", src, err)
					break
				}
				if want := "cmd/" + completionBin + "/" + completionScript(goos); got != want {
					t.Errorf("archive files src renders to %q on %s, want %q", got, goos, want)
				}
			}
		}
	}
	checkCompletionScripts(t, root)
	if c.Checksum.NameTemplate != "checksums.txt" {
		t.Errorf("checksum name_template %q, want checksums.txt", c.Checksum.NameTemplate)
	}
	if _, err := os.Stat(filepath.Join(root, "LICENSE")); err != nil {
		t.Error(err)
	}
}

// completionScript is the completion helper's file name on an OS: the
// shell script, or the batch file on Windows (PATHEXT finds .cmd).
func completionScript(goos string) string {
	if goos == "windows" {
		return completionBin + ".cmd"
	}
	return completionBin
}

// renderOs renders a goreleaser template that uses only .Os.
func renderOs(tmpl, goos string) (string, error) {
	tp, err := template.New("src").Parse(tmpl)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := tp.Execute(&b, struct{ Os string }{goos}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// checkCompletionScripts checks the committed completion scripts: both
// forward every word to the plugin's own __complete through kubectl.
func checkCompletionScripts(t *testing.T, root string) {
	t.Helper()
	dir := filepath.Join(root, "cmd", completionBin)
	sh, err := os.ReadFile(filepath.Join(dir, completionScript("linux")))
	if err != nil {
		t.Error(err)
	} else {
		lines := strings.Split(strings.TrimSpace(string(sh)), "\n")
		if !strings.HasPrefix(string(sh), "#!/bin/sh\n") {
			t.Errorf("%s does not start with #!/bin/sh", completionScript("linux"))
		}
		if last := lines[len(lines)-1]; last != `exec kubectl scale-preview __complete "$@"` {
			t.Errorf("%s ends with %q, want exec kubectl scale-preview __complete \"$@\"", completionScript("linux"), last)
		}
		if fi, err := os.Stat(filepath.Join(dir, completionScript("linux"))); err == nil && runtime.GOOS != "windows" && fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable in the work tree (mode %v)", completionScript("linux"), fi.Mode())
		}
	}
	cmd, err := os.ReadFile(filepath.Join(dir, completionScript("windows")))
	if err != nil {
		t.Error(err)
	} else {
		lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(string(cmd), "\r\n", "\n")), "\n")
		if !strings.EqualFold(lines[0], "@echo off") {
			t.Errorf("%s does not start with @echo off", completionScript("windows"))
		}
		if last := lines[len(lines)-1]; last != "kubectl scale-preview __complete %*" {
			t.Errorf("%s ends with %q, want kubectl scale-preview __complete %%*", completionScript("windows"), last)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hostPlatform is this machine's os/arch.
func hostPlatform() osArch { return osArch{runtime.GOOS, runtime.GOARCH} }

// uriBase is the archive's file name in a platform's uri.
func uriBase(uri string) string { return path.Base(uri) }
