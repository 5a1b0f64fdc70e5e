package packaging

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// distInfo is a goreleaser dist/ directory.
type distInfo struct {
	dir      string
	tag      string // the tag the archives are named for (metadata.json)
	version  string // {{.Version}} stamped into the binaries
	commit   string // full commit hash
	archives map[osArch]string
	// single: only this machine's archive was built (PACKAGING_SINGLE_TARGET=1).
	single bool
}

// goreleaser's dist/metadata.json and dist/artifacts.json (the parts used).
type grMetadata struct {
	ProjectName string `json:"project_name"`
	Tag         string `json:"tag"`
	Version     string `json:"version"`
	Commit      string `json:"commit"`
}

type grArtifact struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Goos   string `json:"goos"`
	Goarch string `json:"goarch"`
	Type   string `json:"type"`
}

// singleTarget: build and check only this machine's archive.
func singleTarget() bool { return os.Getenv("PACKAGING_SINGLE_TARGET") == "1" }

// obtainDist builds the archives with `make release-snapshot`, or uses the
// ones named by PACKAGING_DIST / left in dist/ with PACKAGING_SKIP_BUILD=1.
// With PACKAGING_SINGLE_TARGET=1 it builds this machine's archive only.
func obtainDist(t *testing.T) *distInfo {
	t.Helper()
	root := repoRoot(t)
	dir := os.Getenv("PACKAGING_DIST")
	switch {
	case singleTarget() && dir == "":
		dir = filepath.Join(root, "dist")
		cfg := hostGoreleaserConfig(t, root)
		t.Logf("building this machine's archive: make release-snapshot GORELEASER_CONFIG=%s", cfg)
		makeRelease(t, root, "GORELEASER_CONFIG="+cfg)
	case dir != "":
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		t.Logf("using the archives in PACKAGING_DIST=%s", dir)
	case os.Getenv("PACKAGING_SKIP_BUILD") == "1":
		dir = filepath.Join(root, "dist")
		if _, err := os.Stat(filepath.Join(dir, "metadata.json")); err != nil {
			t.Skipf("PACKAGING_SKIP_BUILD=1 and no goreleaser build in %s: skipping the archive tests "+
				"(build one with `make release-snapshot`, or unset PACKAGING_SKIP_BUILD)", dir)
		}
		t.Logf("PACKAGING_SKIP_BUILD=1: using the existing build in %s", dir)
	default:
		dir = filepath.Join(root, "dist")
		if dl, ok := t.Deadline(); ok && time.Until(dl) < 20*time.Minute {
			if _, err := os.Stat(filepath.Join(root, "bin", "tools", "goreleaser")); err != nil {
				t.Fatalf("building goreleaser and the archives takes ~10-20 min on 2 cores, but the test deadline is in %s: "+
					"run `make packaging-test` (it sets -timeout), or go test -timeout 40m", time.Until(dl).Round(time.Second))
			}
		}
		t.Logf("building the archives: make release-snapshot (installs goreleaser into bin/tools on first use)")
		makeRelease(t, root)
	}
	d := readDist(t, dir)
	d.single = singleTarget()
	return d
}

func makeRelease(t *testing.T, root string, vars ...string) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command("make", append([]string{"release-snapshot"}, vars...)...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("make release-snapshot: %v\n%s", err, tail(out.String(), 60))
	}
	t.Logf("make release-snapshot took %s", time.Since(start).Round(time.Second))
}

// hostGoreleaserConfig writes .goreleaser.yaml with every build's platform
// list narrowed to this machine, everything else (flags, ldflags, archive
// names and contents) as committed. (goreleaser's own --single-target
// exists only for `goreleaser build`, which makes no archives.)
func hostGoreleaserConfig(t *testing.T, root string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	builds, _ := cfg["builds"].([]any)
	if len(builds) == 0 {
		t.Fatal(".goreleaser.yaml has no builds")
	}
	host := hostPlatform()
	for i, b := range builds {
		build, ok := b.(map[string]any)
		if !ok {
			t.Fatalf(".goreleaser.yaml: builds[%d] is not a map", i)
		}
		for key, want := range map[string]string{"goos": host.OS, "goarch": host.Arch} {
			list, _ := build[key].([]any)
			if !slices.Contains(list, any(want)) {
				t.Fatalf(".goreleaser.yaml: builds[%d].%s is %v, which leaves out this machine (%s)", i, key, build[key], want)
			}
			build[key] = []string{want}
		}
		if _, ok := build["ignore"]; ok {
			t.Fatalf(".goreleaser.yaml: builds[%d] has an ignore list; narrow it for one platform here too", i)
		}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "goreleaser-host.yaml")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// archiveSum is the sha256 of a built archive. With only this machine's
// archive built, the others get a stand-in sum (the sha256 of their name)
// so the manifests can still be rendered and validated for every platform.
func archiveSum(dist *distInfo, name string) (string, error) {
	file := filepath.Join(dist.dir, name)
	if _, err := os.Stat(file); err != nil && dist.single && !isHostArchive(dist, name) {
		return sha256Hex256([]byte(name)), nil
	}
	return sha256File(file)
}

func isHostArchive(dist *distInfo, name string) bool {
	file, ok := dist.archives[hostPlatform()]
	return ok && filepath.Base(file) == name
}

func readDist(t *testing.T, dir string) *distInfo {
	t.Helper()
	var md grMetadata
	if err := readJSON(filepath.Join(dir, "metadata.json"), &md); err != nil {
		t.Fatalf("not a goreleaser dist: %v", err)
	}
	var arts []grArtifact
	if err := readJSON(filepath.Join(dir, "artifacts.json"), &arts); err != nil {
		t.Fatalf("not a goreleaser dist: %v", err)
	}
	d := &distInfo{dir: dir, tag: md.Tag, version: md.Version, commit: md.Commit, archives: map[osArch]string{}}
	for _, a := range arts {
		if a.Type != "Archive" {
			continue
		}
		file := filepath.Join(dir, filepath.Base(a.Path))
		if _, err := os.Stat(file); err != nil {
			t.Fatalf("artifacts.json names %s: %v", a.Path, err)
		}
		d.archives[osArch{a.Goos, a.Goarch}] = file
	}
	t.Logf("dist %s: tag %s, version %s, commit %.12s, %d archives", dir, d.tag, d.version, d.commit, len(d.archives))
	if d.tag == "" || d.version == "" {
		t.Fatalf("metadata.json has no tag/version: %+v", md)
	}
	return d
}

func readJSON(file string, v any) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// TestPackaging builds (or reads) the archives, generates the krew manifest
// for them, validates it, installs the plugin as krew would and runs it
// through kubectl.
func TestPackaging(t *testing.T) {
	root := repoRoot(t)
	dist := obtainDist(t)

	// --- the archives and checksums.txt ---
	want := []osArch{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"}, {"windows", "arm64"}}
	if dist.single {
		want = []osArch{hostPlatform()}
	}
	for _, oa := range want {
		file, ok := dist.archives[oa]
		if !ok {
			t.Errorf("no archive for %s/%s", oa.OS, oa.Arch)
			continue
		}
		ext := ".tar.gz"
		if oa.OS == "windows" {
			ext = ".zip"
		}
		if name := filepath.Base(file); name != fmt.Sprintf("kubectl-scale_preview_%s_%s_%s%s", dist.tag, oa.OS, oa.Arch, ext) {
			t.Errorf("archive %s: name does not follow kubectl-scale_preview_<tag>_<os>_<arch>%s", name, ext)
		}
	}
	if len(dist.archives) != len(want) {
		t.Errorf("%d archives, want %d: %v", len(dist.archives), len(want), dist.archives)
	}
	sums := readChecksums(t, filepath.Join(dist.dir, "checksums.txt"))
	for _, file := range dist.archives {
		got, err := sha256File(file)
		if err != nil {
			t.Fatal(err)
		}
		if sums[filepath.Base(file)] != got {
			t.Errorf("checksums.txt says %s for %s, the file's sha256 is %s", sums[filepath.Base(file)], filepath.Base(file), got)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// --- the manifest for these archives, two ways ---
	// (1) plugin.yaml with the local tag and the archives' real sums.
	generated := manifestFromPluginYAML(t, root, dist)
	// (2) .krew.yaml rendered the way krew-release-bot renders it.
	rendered, err := renderKrewTemplate(filepath.Join(root, ".krew.yaml"), dist.tag, func(uri string) (string, error) {
		if !strings.HasPrefix(uri, repoURL+"/releases/download/"+dist.tag+"/") {
			return "", fmt.Errorf("addURIAndSha: %s is not on the release page of %s", uri, dist.tag)
		}
		return archiveSum(dist, uriBase(uri))
	})
	if err != nil {
		t.Fatalf("rendering .krew.yaml for the local archives: %v", err)
	}
	fromBot, err := parsePlugin(rendered)
	if err != nil {
		t.Fatalf("rendered .krew.yaml: %v\n%s", err, rendered)
	}
	if !reflect.DeepEqual(generated, fromBot) {
		a, _ := marshalPlugin(generated)
		b, _ := marshalPlugin(fromBot)
		t.Errorf("plugin.yaml and .krew.yaml give different manifests for the local archives:\n--- plugin.yaml\n%s\n--- .krew.yaml\n%s", a, b)
	}

	// Write it where a developer can use it:
	//   kubectl krew install --manifest=dist/krew/scale-preview.yaml --archive=dist/<archive>
	manifestFile := writeManifest(t, dist, rendered)
	manifest, err := validateManifestFile(manifestFile)
	if err != nil {
		t.Fatalf("the generated manifest is not valid by krew's rules:\n%v", err)
	}
	if manifest.Spec.Version != dist.tag {
		t.Errorf("manifest version %s, archives tagged %s", manifest.Spec.Version, dist.tag)
	}
	if err := checkPlatformShape(manifest); err != nil {
		t.Errorf("generated manifest:\n%v", err)
	}
	t.Logf("generated krew manifest %s", manifestFile)

	// --- every platform installs: file operations and bin, on each archive ---
	for _, pl := range manifest.Spec.Platforms {
		oa := platformOf(pl)
		file := filepath.Join(dist.dir, uriBase(pl.URI))
		if _, built := dist.archives[oa]; !built && dist.single {
			t.Logf("%s/%s: archive not built (single target), file operations not checked", oa.OS, oa.Arch)
			continue
		}
		entries, err := listArchive(file)
		if err != nil {
			t.Errorf("%s/%s: %v", oa.OS, oa.Arch, err)
			continue
		}
		moves, err := fileMoves(pl, names(entries))
		if err != nil {
			t.Errorf("%s/%s (%s): %v", oa.OS, oa.Arch, filepath.Base(file), err)
			continue
		}
		exe := ""
		if oa.OS == "windows" {
			exe = ".exe"
		}
		script := completionScript(oa.OS)
		for _, must := range []string{pl.Bin, script, "LICENSE"} {
			src, ok := moves[must]
			if !ok {
				t.Errorf("%s/%s: %s is not installed (installed: %v)", oa.OS, oa.Arch, must, keys(moves))
				continue
			}
			if oa.OS != "windows" && must != "LICENSE" && entries[src]&0o111 == 0 {
				t.Errorf("%s/%s: %s is not executable in the archive (mode %v)", oa.OS, oa.Arch, src, entries[src])
			}
		}
		// Exactly the plugin, the completion script and LICENSE: no
		// second binary, no other OS's script.
		if got, want := names(entries), sortedCopy(pluginBin+exe, script, "LICENSE"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s/%s: archive holds %v, want %v", oa.OS, oa.Arch, got, want)
		}
		checkArchiveContents(t, root, dist, oa, file, pluginBin+exe, script)
	}
	if t.Failed() {
		t.FailNow()
	}

	// --- install for this machine as krew does, and run through kubectl ---
	host := hostPlatform()
	pl, ok := matchingPlatform(manifest, host)
	if !ok {
		t.Skipf("the manifest has no platform for this machine (%s/%s): not installing", host.OS, host.Arch)
	}
	inst := krewInstall(t, manifest, pl, dist.dir)
	t.Run("kubectl", func(t *testing.T) {
		kc := findKubectl(t, root)
		runThroughKubectl(t, kc, inst, dist)
	})
}

func sortedCopy(s ...string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}

// checkArchiveContents checks one archive's files against the build
// config: the completion script is the committed one, byte for byte, and
// the plugin binary is built for the archive's platform without cgo,
// with -trimpath, -s -w and the version/commit stamps.
func checkArchiveContents(t *testing.T, root string, dist *distInfo, oa osArch, file, bin, script string) {
	t.Helper()
	wantScript, err := os.ReadFile(filepath.Join(root, "cmd", completionBin, script))
	if err != nil {
		t.Error(err)
		return
	}
	err = walkArchive(file, func(name string, _ os.FileMode, r io.Reader) error {
		switch name {
		case script:
			got, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, wantScript) {
				t.Errorf("%s/%s: %s in the archive differs from cmd/%s/%s:\n%s", oa.OS, oa.Arch, script, completionBin, script, got)
			}
		case bin:
			data, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			if err := checkBinary(data, oa, dist); err != nil {
				t.Errorf("%s/%s: %s: %v", oa.OS, oa.Arch, bin, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("%s/%s: %v", oa.OS, oa.Arch, err)
	}
}

// checkBinary reads the Go build information of a plugin binary.
func checkBinary(data []byte, oa osArch, dist *distInfo) error {
	bi, err := buildinfo.Read(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("no Go build information: %w", err)
	}
	var errs []error
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	if bi.Path != "github.com/scale-preview/scale-preview/cmd/kubectl-scale_preview" {
		errs = append(errs, fmt.Errorf("built from %q, want ./cmd/kubectl-scale_preview", bi.Path))
	}
	for k, want := range map[string]string{"GOOS": oa.OS, "GOARCH": oa.Arch, "CGO_ENABLED": "0", "-trimpath": "true"} {
		if set[k] != want {
			errs = append(errs, fmt.Errorf("build setting %s=%q, want %q", k, set[k], want))
		}
	}
	// go records no -ldflags in the build information of a -trimpath
	// build: check their effects instead. -X: the stamped version is in
	// the binary; -s -w: no symbol table, no DWARF.
	if !bytes.Contains(data, []byte(dist.version)) {
		errs = append(errs, fmt.Errorf("the version %q is not stamped in (-X ...pkg/version.Version)", dist.version))
	}
	if err := checkStripped(data, oa.OS); err != nil {
		errs = append(errs, err)
	}
	if len(data) > maxBinaryBytes {
		errs = append(errs, fmt.Errorf("%.1f MB, over the %.1f MB (56 MiB) ceiling (docs/performance.md): what grew it?", float64(len(data))/1e6, float64(maxBinaryBytes)/1e6))
	}
	return errors.Join(errs...)
}

// maxBinaryBytes: a release binary stays no bigger than kubectl's, taken
// as 56 MiB on every platform (kubectl v1.37.1 with the same flags is
// 62.1 MB on linux/amd64; the plugin 55.0 MB there, docs/performance.md),
// so that growth fails here.
const maxBinaryBytes = 56 << 20

// checkStripped: a binary linked with -s -w has no DWARF and no symbol
// table (on macOS only the dynamic imports are left, no Go symbols).
func checkStripped(data []byte, goos string) error {
	r := bytes.NewReader(data)
	switch goos {
	case "linux":
		f, err := elf.NewFile(r)
		if err != nil {
			return err
		}
		for _, sec := range []string{".symtab", ".debug_info"} {
			if f.Section(sec) != nil {
				return fmt.Errorf("has a %s section: not linked with -s -w", sec)
			}
		}
	case "darwin":
		f, err := macho.NewFile(r)
		if err != nil {
			return err
		}
		for _, sec := range f.Sections {
			if sec.Seg == "__DWARF" {
				return fmt.Errorf("has DWARF (%s): not linked with -w", sec.Name)
			}
		}
		if f.Symtab != nil {
			for _, sym := range f.Symtab.Syms {
				if sym.Name == "_main.main" || sym.Name == "main.main" {
					return fmt.Errorf("has the symbol %s: not linked with -s", sym.Name)
				}
			}
		}
	case "windows":
		f, err := pe.NewFile(r)
		if err != nil {
			return err
		}
		if f.FileHeader.NumberOfSymbols != 0 {
			return fmt.Errorf("has %d COFF symbols: not linked with -s", f.FileHeader.NumberOfSymbols)
		}
		for _, sec := range f.Sections {
			if strings.HasPrefix(sec.Name, ".debug_") || strings.HasPrefix(sec.Name, ".zdebug_") {
				return fmt.Errorf("has DWARF (%s): not linked with -w", sec.Name)
			}
		}
	default:
		return fmt.Errorf("unexpected OS %s", goos)
	}
	return nil
}

func manifestFromPluginYAML(t *testing.T, root string, dist *distInfo) *Plugin {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := parsePlugin(data)
	if err != nil {
		t.Fatalf("plugin.yaml: %v", err)
	}
	// plugin.yaml is the manifest for its spec.version: re-tag it.
	p, err := parsePlugin(bytes.ReplaceAll(data, []byte(tmpl.Spec.Version), []byte(dist.tag)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Spec.Platforms {
		pl := &p.Spec.Platforms[i]
		sum, err := archiveSum(dist, uriBase(pl.URI))
		if err != nil {
			t.Fatalf("plugin.yaml names %s, which the build did not make: %v", uriBase(pl.URI), err)
		}
		pl.Sha256 = sum
	}
	return p
}

func writeManifest(t *testing.T, dist *distInfo, data []byte) string {
	t.Helper()
	dir := filepath.Join(dist.dir, "krew")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		dir = t.TempDir() // a read-only dist
	}
	file := filepath.Join(dir, pluginName+".yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		file = filepath.Join(t.TempDir(), pluginName+".yaml")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return file
}

func readChecksums(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("checksums: %v", err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 || !sha256Hex.MatchString(fields[0]) {
			t.Fatalf("checksums.txt: bad line %q", sc.Text())
		}
		sums[fields[1]] = fields[0]
	}
	return sums
}

// listArchive returns an archive's regular files (slash paths) and modes.
func listArchive(file string) (map[string]os.FileMode, error) {
	out := map[string]os.FileMode{}
	err := walkArchive(file, func(name string, mode os.FileMode, _ io.Reader) error {
		out[name] = mode
		return nil
	})
	return out, err
}

// walkArchive calls fn for each regular file of a .tar.gz or .zip archive,
// refusing names that would leave the extraction directory.
func walkArchive(file string, fn func(name string, mode os.FileMode, r io.Reader) error) error {
	clean := func(name string) (string, error) {
		n := path.Clean(strings.TrimPrefix(name, "./"))
		if path.IsAbs(n) || n == ".." || strings.HasPrefix(n, "../") || strings.Contains(name, `\`) {
			return "", fmt.Errorf("%s: unsafe entry %q", file, name)
		}
		return n, nil
	}
	switch {
	case strings.HasSuffix(file, ".tar.gz"):
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			if h.Typeflag != tar.TypeReg {
				continue
			}
			n, err := clean(h.Name)
			if err != nil {
				return err
			}
			if err := fn(n, h.FileInfo().Mode(), tr); err != nil {
				return err
			}
		}
	case strings.HasSuffix(file, ".zip"):
		zr, err := zip.OpenReader(file)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		defer zr.Close()
		for _, zf := range zr.File {
			if !zf.Mode().IsRegular() {
				continue
			}
			n, err := clean(zf.Name)
			if err != nil {
				return err
			}
			rc, err := zf.Open()
			if err != nil {
				return err
			}
			err = fn(n, zf.Mode(), rc)
			rc.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s: unknown archive format", file)
}

func names(m map[string]os.FileMode) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// installation is a plugin installed the krew way.
type installation struct {
	root    string // KREW_ROOT
	binDir  string // KREW_ROOT/bin: what goes on PATH
	pkgDir  string // KREW_ROOT/store/<name>/<version>
	plugin  string // binDir/kubectl-scale_preview
	complet string // binDir/kubectl_complete-scale_preview (.cmd on Windows)
}

// krewInstall does what `kubectl krew install` does with a platform:
// fetch the archive (here: from dist/, by the uri's file name), check its
// sha256, unpack it, apply the file operations into
// store/<name>/<version>, and link bin as bin/kubectl-<name with _>.
// krew links only bin; the completion script is linked beside it the way
// the manifest's caveats tell users to.
func krewInstall(t *testing.T, p *Plugin, pl Platform, distDir string) *installation {
	t.Helper()
	krewRoot := t.TempDir()
	archive := filepath.Join(distDir, uriBase(pl.URI))
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatalf("download %s: %v", pl.URI, err)
	}
	if got := sha256Hex256(data); got != pl.Sha256 {
		t.Fatalf("sha256 of %s is %s, the manifest says %s", uriBase(pl.URI), got, pl.Sha256)
	}
	extract := filepath.Join(krewRoot, "download", "extract")
	var entries []string
	err = walkArchive(archive, func(name string, mode os.FileMode, r io.Reader) error {
		dst := filepath.Join(extract, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode.Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil {
			f.Close()
			return err
		}
		entries = append(entries, name)
		return f.Close()
	})
	if err != nil {
		t.Fatalf("unpack: %v", err)
	}
	moves, err := fileMoves(pl, entries)
	if err != nil {
		t.Fatalf("file operations: %v", err)
	}
	pkgDir := filepath.Join(krewRoot, "store", p.Metadata.Name, p.Spec.Version)
	for dst, src := range moves {
		to := filepath.Join(pkgDir, filepath.FromSlash(dst))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(extract, filepath.FromSlash(src)), to); err != nil {
			t.Fatal(err)
		}
	}
	binDir := filepath.Join(krewRoot, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	inst := &installation{root: krewRoot, binDir: binDir, pkgDir: pkgDir}
	link := func(target, name string) string {
		t.Helper()
		target = filepath.Join(pkgDir, filepath.FromSlash(target))
		if _, err := os.Stat(target); err != nil {
			t.Fatalf("%s is not in the installation: %v", target, err)
		}
		l := filepath.Join(binDir, name)
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	linkName := "kubectl-" + strings.ReplaceAll(p.Metadata.Name, "-", "_")
	if linkName != pluginBin {
		t.Fatalf("krew would link the plugin as %s, want %s", linkName, pluginBin)
	}
	inst.plugin = link(pl.Bin, linkName)
	script := completionScript(runtime.GOOS)
	inst.complet = link(script, script)
	t.Logf("installed like krew into %s (files: %v)", pkgDir, keys(moves))
	return inst
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
