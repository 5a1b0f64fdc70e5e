package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// prediction is the plugin's JSON contract (other fields are ignored).
type prediction struct {
	Target struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"target"`
	CurrentReplicas *int32         `json:"currentReplicas"`
	DesiredReplicas *int32         `json:"desiredReplicas"`
	ReferenceTime   string         `json:"referenceTime"`
	StableUntil     *string        `json:"stableUntil"`
	Victims         []string       `json:"victims"`
	Certain         *bool          `json:"certain"`
	Pods            []predictedPod `json:"pods"`
	Rules           struct {
		KubernetesVersion string          `json:"kubernetesVersion"`
		VersionSource     string          `json:"versionSource"`
		VersionDetail     string          `json:"versionDetail"`
		FeatureGates      map[string]bool `json:"featureGates"`
	} `json:"rules"`
	// Deployments: the split and the rollout that continues after it.
	ReplicaSets []predictedRS `json:"replicaSets"`
	Creates     int           `json:"creates"`
	Steering    *steering     `json:"steering"`
	Contenders  []struct {
		ReplicaSet string   `json:"replicaSet"`
		Pods       []string `json:"pods"`
		Delete     int      `json:"delete"`
		Rule       string   `json:"rule"`
	} `json:"contenders"`
	StatefulSet *struct {
		Stalled  bool   `json:"stalled"`
		StallPod string `json:"stallPod"`
	} `json:"statefulSet"`
}

type predictedPod struct {
	Name              string   `json:"name"`
	Fate              string   `json:"fate"`
	Certain           bool     `json:"certain"`
	DeleteProbability *float64 `json:"deleteProbability"`
	// DeleteProbabilityRange: a timing-decided chance's range, if printed.
	DeleteProbabilityRange []float64 `json:"deleteProbabilityRange"`
	Step                   string    `json:"step"`
	ReplicaSet             string    `json:"replicaSet"`
	ContenderGroup         *int      `json:"contenderGroup"`
}

// predictedRS is one ReplicaSet of a Deployment through the scale-in:
// before -> afterScale (the proportional split) -> final (the rollout).
type predictedRS struct {
	Name       string `json:"name"`
	New        bool   `json:"new"`
	Before     int32  `json:"before"`
	AfterScale int32  `json:"afterScale"`
	Final      int32  `json:"final"`
	Deleted    int    `json:"deleted"`
	Created    int    `json:"created"`
}

// steering is the answer to --spare/--target/--target-node.
type steering struct {
	Wanted      []string `json:"wanted"`
	Possible    bool     `json:"possible"`
	Reason      string   `json:"reason"`
	Annotations []struct {
		Pod  string `json:"pod"`
		Cost int32  `json:"cost"`
		Was  string `json:"was"`
	} `json:"annotations"`
	Commands []string `json:"commands"`
	Verified bool     `json:"verified"`
	Note     string   `json:"note"`
}

// rs finds a ReplicaSet of the plugin's answer by name.
//
//nolint:unused // kept for scenario files
//lint:ignore U1000 kept for scenario files
func (p *prediction) rs(name string) *predictedRS {
	for i := range p.ReplicaSets {
		if p.ReplicaSets[i].Name == name {
			return &p.ReplicaSets[i]
		}
	}
	return nil
}

func (p *prediction) allCertain() bool {
	for _, pp := range p.Pods {
		if !pp.Certain {
			return false
		}
	}
	return true
}

func (p *prediction) pod(name string) *predictedPod {
	for i := range p.Pods {
		if p.Pods[i].Name == name {
			return &p.Pods[i]
		}
	}
	return nil
}

// stableUntilTime parses stableUntil; ok is false when it is null.
func (p *prediction) stableUntilTime() (time.Time, bool, error) {
	if p.StableUntil == nil || *p.StableUntil == "" {
		return time.Time{}, false, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *p.StableUntil)
	return t, err == nil, err
}

// validate checks the parts of the contract every answer must satisfy.
func (p *prediction) validate(kind, ns, name string, current, desired int32) error {
	var errs []error
	if p.Target.Kind != kind || p.Target.Namespace != ns || p.Target.Name != name {
		errs = append(errs, fmt.Errorf("target = %+v, want %s %s/%s", p.Target, kind, ns, name))
	}
	if p.CurrentReplicas == nil || *p.CurrentReplicas != current {
		errs = append(errs, fmt.Errorf("currentReplicas = %v, want %d", deref(p.CurrentReplicas), current))
	}
	if p.DesiredReplicas == nil || *p.DesiredReplicas != desired {
		errs = append(errs, fmt.Errorf("desiredReplicas = %v, want %d", deref(p.DesiredReplicas), desired))
	}
	if _, err := time.Parse(time.RFC3339Nano, p.ReferenceTime); err != nil {
		errs = append(errs, fmt.Errorf("referenceTime %q is not RFC3339", p.ReferenceTime))
	}
	if _, _, err := p.stableUntilTime(); err != nil {
		errs = append(errs, fmt.Errorf("stableUntil %q is not RFC3339 or null", *p.StableUntil))
	}
	seen := map[string]bool{}
	for _, pp := range p.Pods {
		switch pp.Fate {
		// blocked: condemned but behind an OrderedReady stall (not deleted
		// now); recreate: a finished in-range StatefulSet pod deleted to be
		// created again; ignored: matching but not the controller's.
		case "delete", "keep", "terminating", "blocked", "recreate", "ignored":
		default:
			errs = append(errs, fmt.Errorf("pod %s: fate %q not in delete|keep|terminating|blocked|recreate|ignored", pp.Name, pp.Fate))
		}
		if seen[pp.Name] {
			errs = append(errs, fmt.Errorf("pod %s listed twice", pp.Name))
		}
		seen[pp.Name] = true
	}
	for _, v := range p.Victims {
		pp := p.pod(v)
		if pp == nil {
			errs = append(errs, fmt.Errorf("victim %s is not in pods[]", v))
		} else if pp.Fate != "delete" {
			errs = append(errs, fmt.Errorf("victim %s has fate %q", v, pp.Fate))
		}
	}
	if kind == "StatefulSet" && p.StatefulSet == nil {
		errs = append(errs, errors.New("statefulSet section missing for a StatefulSet"))
	}
	return errors.Join(errs...)
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// pluginRun is one invocation of the plugin binary.
type pluginRun struct {
	args     []string
	stdout   string
	stderr   string
	exitCode int
	duration time.Duration
}

func (r *pluginRun) String() string {
	return fmt.Sprintf("kubectl-scale_preview %s -> exit %d in %s; stderr=%q; stdout=%s",
		strings.Join(r.args, " "), r.exitCode, r.duration.Round(time.Millisecond), r.stderr, firstLines(r.stdout, 40))
}

func runPlugin(ctx context.Context, path string, args ...string) (*pluginRun, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	start := time.Now()
	err := cmd.Run()
	r := &pluginRun{args: args, stdout: out.String(), stderr: errb.String(), duration: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.exitCode = ee.ExitCode()
	default:
		return r, err
	}
	if ctx.Err() != nil {
		return r, fmt.Errorf("plugin timed out: %s", r)
	}
	return r, nil
}

// kindArg maps the scenario kind to a TYPE accepted by the plugin. The
// short and long forms alternate so that both are exercised.
func kindArg(kind string, long bool) string {
	short := map[string]string{"Deployment": "deploy", "ReplicaSet": "rs", "ReplicationController": "rc", "StatefulSet": "sts"}
	lng := map[string]string{"Deployment": "deployment", "ReplicaSet": "replicaset", "ReplicationController": "replicationcontroller", "StatefulSet": "statefulset"}
	if long {
		return lng[kind]
	}
	return short[kind]
}

// predict runs the plugin as the read-only viewer and parses its JSON.
func predict(ctx context.Context, kind, ns, name string, replicas int32, long bool) (*prediction, *pluginRun, error) {
	return predictWith(ctx, kind, ns, name, replicas, long)
}

// predictWith is predict with extra flags (--spare, --kube-version, ...).
func predictWith(ctx context.Context, kind, ns, name string, replicas int32, long bool, extra ...string) (*prediction, *pluginRun, error) {
	args := []string{fmt.Sprintf("%s/%s", kindArg(kind, long), name), fmt.Sprintf("--replicas=%d", replicas),
		"-n", ns, "--kubeconfig", env.cp.viewerKubeconfig, "-o", "json"}
	args = append(args, extra...)
	run, err := runPlugin(ctx, env.pluginPath, args...)
	if err != nil {
		return nil, run, err
	}
	if run.exitCode != 0 {
		return nil, run, fmt.Errorf("plugin failed: %s", run)
	}
	var p prediction
	if err := json.Unmarshal([]byte(run.stdout), &p); err != nil {
		return nil, run, fmt.Errorf("plugin output is not the JSON contract: %v: %s", err, run)
	}
	return &p, run, nil
}
