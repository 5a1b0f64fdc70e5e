package cmd

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/version"
)

// versionInfo is --version's document (-o json or yaml).
type versionInfo struct {
	Version         string   `json:"version"`
	Commit          string   `json:"commit"`
	GoVersion       string   `json:"goVersion"`
	Platform        string   `json:"platform"`
	KubernetesRules []string `json:"kubernetesRules"`
}

func printVersion(w io.Writer, format string) error {
	v := currentVersion()
	v.KubernetesRules = rules.Supported()
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "":
		_, err := fmt.Fprintf(w, "scale-preview %s (commit %s, %s, %s)\nKubernetes rules: 1.%d to 1.%d\n", v.Version, v.Commit, v.GoVersion, v.Platform, rules.Oldest, rules.Newest)
		return err
	}
	return withCode(ExitUsage, "--version prints text, -o json or -o yaml, not -o %s", format)
}

func currentVersion() versionInfo {
	i := version.Get()
	return versionInfo{Version: i.Version, Commit: i.Commit, GoVersion: i.GoVersion, Platform: i.Platform}
}
