package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

var outagePluginProbe struct {
	once sync.Once
	why  string
}

// outagePluginMissing says why the plugin cannot predict an outage ("" when
// it can): not built, or built without the outage command.
func outagePluginMissing(ctx context.Context) string {
	outagePluginProbe.once.Do(func() {
		if env.pluginPath == "" {
			outagePluginProbe.why = env.pluginMissing
			return
		}
		run, err := runPlugin(ctx, env.pluginPath, "outage", "--help")
		if err != nil || run.exitCode != 0 || !strings.Contains(run.stdout, "--node-monitor-grace-period") {
			outagePluginProbe.why = "the plugin has no outage command with --node-monitor-grace-period yet (branch outage-model)"
		}
	})
	return outagePluginProbe.why
}

// outagePredict runs `outage NODE... -o json` as the read-only viewer,
// before the failure, with the control plane's settings as flags.
func outagePredict(ctx context.Context, t *testing.T, cl *outageCluster, r outageSettings, s *outageScenario) *outagePrediction {
	if why := outagePluginMissing(ctx); why != "" {
		if requirePlugin() {
			t.Fatalf("plugin unavailable: %s", why)
		}
		t.Logf("SKIPPED the comparison (%s): the real outage runs alone, self-checked", why)
		return nil
	}
	args := []string{"outage"}
	if s.shape == "a zone" {
		args = append(args, "--zone", s.nodes[indexOfNode(s, s.fail[0])].zone)
	} else {
		args = append(args, s.fail...)
	}
	args = append(args, r.pluginFlags()...)
	args = append(args, "--condition", s.condition, "--kubeconfig", cl.cp.viewerKubeconfig, "-o", "json")
	run, err := runPlugin(ctx, env.pluginPath, args...)
	if err == nil && run.exitCode != 0 {
		err = fmt.Errorf("plugin failed: %s", run)
	}
	if err != nil {
		t.Errorf("plugin: %v", err)
		return nil
	}
	p, err := parseOutagePrediction(run.stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, firstLines(run.stdout, 20))
	}
	t.Logf("plugin (%s): certain %v, victims %v\n%s", run.duration.Round(time.Millisecond), p.Certain, p.Victims, firstLines(run.stdout, 400))
	return p
}

func indexOfNode(s *outageScenario, name string) int {
	for i, n := range s.nodes {
		if n.name == name {
			return i
		}
	}
	return 0
}

// outageJudge compares and reports; every determined answer must match.
func outageJudge(t *testing.T, p *outagePrediction, o *outageObserved) {
	v := compareOutage(p, o, outageTolerance())
	outageTotals.add(v)
	t.Logf("compared: %d determined answers checked, %d undetermined, %d mismatched", v.checked, v.undetermined, len(v.mismatches))
	for _, m := range v.mismatches {
		t.Errorf("plugin vs control plane: %s", m)
	}
}

// outageSelfCheck holds whatever the plugin says, from the controllers'
// source: only pods on failed nodes are deleted; never before their node's
// taint plus their shortest matching tolerationSeconds (less the
// tolerance); never a pod that tolerates the taint forever; and a node
// taint comes no earlier than the grace period less one renewal.
func outageSelfCheck(t *testing.T, s *outageScenario, o *outageObserved) {
	failed := map[string]bool{}
	for _, n := range s.fail {
		failed[n] = true
	}
	tol := outageTolerance()
	earliest := outageGracePeriod - outageLeaseDuration/4 - tol
	if s.condition == "not-ready" {
		earliest = 0
	}
	for n, at := range o.tainted {
		if !failed[n] {
			t.Errorf("self-check: healthy node %s was tainted at T+%.1fs", n, at.Seconds())
		} else if at < earliest {
			t.Errorf("self-check: node %s tainted at T+%.1fs, before the grace period (%s)", n, at.Seconds(), outageGracePeriod)
		}
	}
	for key, at := range o.deleted {
		p := o.before[key]
		taint, ok := o.tainted[p.Spec.NodeName]
		if !failed[p.Spec.NodeName] || !ok {
			t.Errorf("self-check: pod %s on %s deleted at T+%.1fs, its node untainted", key, p.Spec.NodeName, at.Seconds())
			continue
		}
		secs, forever := outageMinToleration(&p, s.condition)
		if forever {
			t.Errorf("self-check: pod %s tolerates the taint forever, deleted at T+%.1fs", key, at.Seconds())
		} else if at+tol < taint+secs {
			t.Errorf("self-check: pod %s deleted at T+%.1fs, before its taint (T+%.1fs) + %s", key, at.Seconds(), taint.Seconds(), secs)
		}
	}
}

// outageMinToleration is the taint eviction controller's rule: the least
// tolerationSeconds over the tolerations matching the NoExecute taint
// (none matching: at once; a match without seconds: forever).
func outageMinToleration(p *corev1.Pod, condition string) (time.Duration, bool) {
	taint := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}
	if condition == "not-ready" {
		taint.Key = corev1.TaintNodeNotReady
	}
	least, matched := time.Duration(-1), false
	for _, tl := range p.Spec.Tolerations {
		if !tl.ToleratesTaint(klog.Background(), &taint, false) {
			continue
		}
		if tl.TolerationSeconds == nil {
			return 0, true
		}
		matched = true
		d := time.Duration(max(0, *tl.TolerationSeconds)) * time.Second
		if least < 0 || d < least {
			least = d
		}
	}
	if !matched {
		return 0, false
	}
	return least, false
}
