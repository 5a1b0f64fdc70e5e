package packaging

// krew's manifest rules, implemented here because sigs.k8s.io/krew cannot be
// fetched in this environment. They follow krew's documented checks
// (pkg/index/validation and cmd/validate-krew-manifest of krew v0.4):
//
//   - apiVersion krew.googlecontainertools.github.com/v1alpha2, kind Plugin;
//   - metadata.name matches ^[\w-]+$, is no Windows device name and equals
//     the manifest's file name (without .yaml);
//   - a non-empty, one-line shortDescription;
//   - spec.version is "v" + semver;
//   - at least one platform; each has uri, a 64-hex sha256 and bin;
//   - each selector is non-empty, uses only the os/arch keys with values
//     krew knows, matches at least one supported platform, and no
//     supported platform is matched by two platforms;
//   - files is unspecified or non-empty, each entry has from and to, and to
//     is a clean relative path inside the installation directory;
//   - the manifest has no unknown fields (krew reads it strictly).

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

const (
	krewAPIVersion = "krew.googlecontainertools.github.com/v1alpha2"
	krewKind       = "Plugin"
	pluginName     = "scale-preview"
	pluginBin      = "kubectl-scale_preview"
	completionBin  = "kubectl_complete-scale_preview"
	repoURL        = "https://github.com/scale-preview/scale-preview"
)

// Plugin mirrors krew's index.Plugin (v1alpha2).
type Plugin struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        PluginMeta `json:"metadata"`
	Spec            PluginSpec `json:"spec"`
}

// PluginMeta is the part of ObjectMeta a krew manifest uses.
type PluginMeta struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// PluginSpec mirrors krew's index.PluginSpec.
type PluginSpec struct {
	Version          string     `json:"version,omitempty"`
	ShortDescription string     `json:"shortDescription,omitempty"`
	Description      string     `json:"description,omitempty"`
	Caveats          string     `json:"caveats,omitempty"`
	Homepage         string     `json:"homepage,omitempty"`
	Platforms        []Platform `json:"platforms,omitempty"`
}

// Platform mirrors krew's index.Platform.
type Platform struct {
	URI      string                `json:"uri,omitempty"`
	Sha256   string                `json:"sha256,omitempty"`
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	Files    []FileOperation       `json:"files"`
	Bin      string                `json:"bin"`
}

// FileOperation mirrors krew's index.FileOperation.
type FileOperation struct {
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

type osArch struct{ OS, Arch string }

// krewPlatforms is the list of platforms krew's validate-krew-manifest
// checks selectors against.
var krewPlatforms = []osArch{
	{"windows", "386"}, {"windows", "amd64"}, {"windows", "arm64"},
	{"linux", "386"}, {"linux", "amd64"}, {"linux", "arm"}, {"linux", "arm64"},
	{"linux", "ppc64le"}, {"linux", "s390x"},
	{"darwin", "386"}, {"darwin", "amd64"}, {"darwin", "arm64"},
}

var (
	safePluginName = regexp.MustCompile(`^[\w-]+$`)
	sha256Hex      = regexp.MustCompile(`^[a-f0-9]{64}$`)
	// semver.org's regular expression, with krew's leading "v".
	krewSemver = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
		`(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
		`(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`)
	windowsForbidden = []string{"CON", "PRN", "AUX", "NUL",
		"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
		"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9"}
)

// parsePlugin reads a manifest strictly, as krew does.
func parsePlugin(data []byte) (*Plugin, error) {
	var p Plugin
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, fmt.Errorf("manifest does not parse strictly: %w", err)
	}
	return &p, nil
}

func readPluginFile(file string) (*Plugin, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return parsePlugin(data)
}

// validateManifestFile is validate-krew-manifest: the file's name gives the
// plugin's name.
func validateManifestFile(file string) (*Plugin, error) {
	if ext := filepath.Ext(file); ext != ".yaml" {
		return nil, fmt.Errorf("manifest %s: file extension %q, want .yaml", file, ext)
	}
	p, err := readPluginFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	name := strings.TrimSuffix(filepath.Base(file), ".yaml")
	if err := validatePlugin(name, p); err != nil {
		return p, fmt.Errorf("%s: %w", file, err)
	}
	return p, nil
}

// validatePlugin applies krew's rules; name is the name the manifest must
// carry (its file name).
func validatePlugin(name string, p *Plugin) error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	if p.APIVersion != krewAPIVersion {
		add("apiVersion %q, want %q", p.APIVersion, krewAPIVersion)
	}
	if p.Kind != krewKind {
		add("kind %q, want %q", p.Kind, krewKind)
	}
	if !isSafePluginName(p.Metadata.Name) {
		add("metadata.name %q is not a safe plugin name (^[\\w-]+$, no Windows device name)", p.Metadata.Name)
	}
	if p.Metadata.Name != name {
		add("plugin should be named %q (its file name), not %q", name, p.Metadata.Name)
	}
	if p.Spec.ShortDescription == "" {
		add("spec.shortDescription is empty")
	}
	if strings.ContainsAny(p.Spec.ShortDescription, "\r\n") {
		add("spec.shortDescription %q has more than one line", p.Spec.ShortDescription)
	}
	if p.Spec.Version == "" {
		add("spec.version is empty")
	} else if !krewSemver.MatchString(p.Spec.Version) {
		add("spec.version %q is not a v-prefixed semantic version", p.Spec.Version)
	}
	if len(p.Spec.Platforms) == 0 {
		add("spec.platforms is empty")
	}
	for i, pl := range p.Spec.Platforms {
		if err := validatePlatform(pl); err != nil {
			add("spec.platforms[%d]: %v", i, err)
		}
	}
	if err := validateSelectors(p.Spec.Platforms); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func isSafePluginName(name string) bool {
	if !safePluginName.MatchString(name) {
		return false
	}
	for _, f := range windowsForbidden {
		if strings.EqualFold(f, name) {
			return false
		}
	}
	return true
}

func validatePlatform(p Platform) error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if p.URI == "" {
		add("uri is not set")
	}
	if p.Sha256 == "" {
		add("sha256 is not set")
	} else if !sha256Hex.MatchString(p.Sha256) {
		add("sha256 %q is not 64 lower-case hex digits", p.Sha256)
	}
	if p.Bin == "" {
		add("bin is not set")
	} else if !isCleanRelPath(p.Bin) {
		add("bin %q is not a clean path inside the installation directory", p.Bin)
	}
	if p.Files != nil && len(p.Files) == 0 {
		add("files must be unspecified or non-empty")
	}
	for j, f := range p.Files {
		switch {
		case f.From == "":
			add("files[%d].from is not set", j)
		case f.To == "":
			add("files[%d].to is not set", j)
		case !isCleanRelPath(f.To):
			add("files[%d].to %q is not a clean path inside the installation directory", j, f.To)
		case strings.HasPrefix(path.Clean(f.From), "../") || path.IsAbs(f.From):
			add("files[%d].from %q leaves the archive", j, f.From)
		}
	}
	if err := validateSelector(p.Selector); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func isCleanRelPath(p string) bool {
	p = filepath.ToSlash(p)
	return p == path.Clean(p) && !path.IsAbs(p) && p != ".." && !strings.HasPrefix(p, "../")
}

var supportedValues = func() map[string]map[string]bool {
	m := map[string]map[string]bool{"os": {}, "arch": {}}
	for _, p := range krewPlatforms {
		m["os"][p.OS] = true
		m["arch"][p.Arch] = true
	}
	return m
}()

func validateSelector(sel *metav1.LabelSelector) error {
	if sel == nil {
		return errors.New("selector is not set")
	}
	if len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0 {
		return errors.New("selector has no matchLabels or matchExpressions")
	}
	var errs []error
	for k, v := range sel.MatchLabels {
		vals, ok := supportedValues[k]
		if !ok {
			errs = append(errs, fmt.Errorf("selector key %q: only os and arch are supported", k))
		} else if !vals[v] {
			errs = append(errs, fmt.Errorf("selector %s=%q: not a platform krew supports", k, v))
		}
	}
	for _, e := range sel.MatchExpressions {
		vals, ok := supportedValues[e.Key]
		if !ok {
			errs = append(errs, fmt.Errorf("selector expression key %q: only os and arch are supported", e.Key))
			continue
		}
		for _, v := range e.Values {
			if !vals[v] {
				errs = append(errs, fmt.Errorf("selector expression %s %s %q: not a platform krew supports", e.Key, e.Operator, v))
			}
		}
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		errs = append(errs, fmt.Errorf("selector: %w", err))
	}
	return errors.Join(errs...)
}

func selectorMatches(sel *metav1.LabelSelector, p osArch) bool {
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set{"os": p.OS, "arch": p.Arch})
}

// validateSelectors: every platform matches some supported os/arch, and no
// os/arch is matched by two platforms.
func validateSelectors(ps []Platform) error {
	var errs []error
	for i, p := range ps {
		matched := false
		for _, oa := range krewPlatforms {
			if selectorMatches(p.Selector, oa) {
				matched = true
				break
			}
		}
		if !matched && p.Selector != nil {
			errs = append(errs, fmt.Errorf("spec.platforms[%d]: selector %v matches no supported platform", i, p.Selector))
		}
	}
	for _, oa := range krewPlatforms {
		var hits []int
		for i, p := range ps {
			if selectorMatches(p.Selector, oa) {
				hits = append(hits, i)
			}
		}
		if len(hits) > 1 {
			errs = append(errs, fmt.Errorf("%s/%s is matched by several platforms %v: selectors overlap", oa.OS, oa.Arch, hits))
		}
	}
	return errors.Join(errs...)
}

// matchingPlatform is krew's GetMatchingPlatform.
func matchingPlatform(p *Plugin, oa osArch) (Platform, bool) {
	for _, pl := range p.Spec.Platforms {
		if selectorMatches(pl.Selector, oa) {
			return pl, true
		}
	}
	return Platform{}, false
}

// platformOf returns the os/arch of a selector's matchLabels.
func platformOf(pl Platform) osArch {
	if pl.Selector == nil {
		return osArch{}
	}
	return osArch{pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]}
}

// fileMoves applies a platform's file operations to the names of an
// unpacked archive (slash-separated, relative) the way krew moves them:
// each `from` is a glob in the archive; every match lands in directory `to`
// of the installation directory under its base name. A `from` that matches
// nothing is an error. It returns installed path -> archive path.
func fileMoves(pl Platform, entries []string) (map[string]string, error) {
	ops := pl.Files
	if len(ops) == 0 {
		ops = []FileOperation{{From: "*", To: "."}} // krew's default
	}
	moves := map[string]string{}
	for _, op := range ops {
		n := 0
		for _, e := range entries {
			ok, err := path.Match(path.Clean(op.From), e)
			if err != nil {
				return nil, fmt.Errorf("files.from %q: %w", op.From, err)
			}
			if !ok {
				continue
			}
			n++
			dst := path.Join(filepath.ToSlash(op.To), path.Base(e))
			if prev, dup := moves[dst]; dup && prev != e {
				return nil, fmt.Errorf("%s and %s both move to %s", prev, e, dst)
			}
			moves[dst] = e
		}
		if n == 0 {
			return nil, fmt.Errorf("files.from %q matches nothing in the archive (entries: %v)", op.From, entries)
		}
	}
	return moves, nil
}

func sha256File(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	return sha256Hex256(data), nil
}

func sha256Hex256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// marshalPlugin renders a manifest as YAML.
func marshalPlugin(p *Plugin) ([]byte, error) {
	b, err := yaml.Marshal(p)
	if err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b), nil
}
