package preemption

import (
	"strings"
	"testing"
)

func TestParseSchedulerConfig(t *testing.T) {
	cfg, err := ParseSchedulerConfig([]byte(`
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 50, minCandidateNodesAbsolute: 10}
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
- schedulerName: batch
  plugins: {filter: {disabled: [{name: NodeAffinity}]}}
`), "default-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	if *cfg.MinCandidateNodesPercentage != 50 || *cfg.MinCandidateNodesAbsolute != 10 || len(cfg.Unmodelled) != 0 {
		t.Fatalf("%+v", cfg)
	}
	cfg, err = ParseSchedulerConfig([]byte("kind: KubeSchedulerConfiguration\nprofiles: [{schedulerName: batch, plugins: {filter: {disabled: [{name: NodeAffinity}]}}}]\nextenders: [{urlPrefix: http://x}]\n"), "batch")
	if err != nil || len(cfg.Unmodelled) != 2 {
		t.Fatalf("%v %+v", err, cfg)
	}
	if _, err := ParseSchedulerConfig([]byte("kind: KubeSchedulerConfiguration\n"), "other"); err == nil || !strings.Contains(err.Error(), "never schedules") {
		t.Fatalf("unknown scheduler name: %v", err)
	}
	if _, err := ParseSchedulerConfig([]byte("kind: Pod\n"), "default-scheduler"); err == nil {
		t.Fatal("a Pod is no KubeSchedulerConfiguration")
	}
}
