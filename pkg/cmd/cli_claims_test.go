package cmd

import (
	"strings"
	"testing"
)

// withoutClaims drops the PersistentVolumeClaim documents, as the usual
// `kubectl get sts,pods -o yaml` export does.
func withoutClaims(file string) string {
	var keep []string
	for _, doc := range strings.Split(file, "---\n") {
		if !strings.Contains(doc, "kind: PersistentVolumeClaim") {
			keep = append(keep, doc)
		}
	}
	return strings.Join(keep, "---\n")
}

// whenScaled: Delete with the claims not exported: the claims of the
// deleted pods are still named, from the template and the ordinal, and
// marked "not in the snapshot"; never "the claims stay".
func TestClaimsNamedWithoutPVCsInTheFile(t *testing.T) {
	file := withoutClaims(stsFile("OrderedReady", 0, "Delete", "0", "1", "2"))
	p, _ := stsPredict(t, file, 1)
	got := map[string]bool{}
	for _, c := range p.StatefulSet.Claims {
		if c.Fate != "delete" || c.Exists == nil || *c.Exists {
			t.Errorf("claim %+v: want delete, not in the snapshot", c)
		}
		got[c.Name] = true
	}
	if !got["data-web-2"] || !got["data-web-1"] || len(got) != 2 {
		t.Errorf("claims %v, want data-web-1 and data-web-2", got)
	}
	r := cliRun(t, nil, strings.NewReader(file), "-f", "-", "sts/web", "--replicas=1")
	wantExit(t, r, ExitOK)
	flat := strings.Join(strings.Fields(r.stdout), " ") // the table wraps long lines
	if !strings.Contains(flat, "DATA LOSS") || !strings.Contains(flat, "data-web-2 (not in the snapshot)") || strings.Contains(flat, "claims of deleted pods stay") {
		t.Errorf("table:\n%s", r.stdout)
	}
	// With the claims exported, they are marked as existing.
	r = cliRun(t, nil, strings.NewReader(stsFile("OrderedReady", 0, "Delete", "0", "1", "2")), "-f", "-", "sts/web", "--replicas=1")
	if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "data-web-2 (exists)") {
		t.Errorf("table:\n%s", r.stdout)
	}
}

// A stall: only the claims of pods deleted now are named.
func TestClaimsOnlyOfPodsDeletedNow(t *testing.T) {
	// web-1 is not ready: OrderedReady deletes web-2 first, then waits.
	p, _ := stsPredict(t, stsFile("OrderedReady", 0, "Delete", "0", "1:notready", "2"), 0)
	deletedNow := map[string]bool{}
	for _, v := range p.Victims {
		deletedNow[v] = true
	}
	for _, c := range p.StatefulSet.Claims {
		if !deletedNow[c.Pod] && fates(p)[c.Pod] != "terminating" {
			t.Errorf("claim %s of %s named, but %s is not deleted now (victims %v)", c.Name, c.Pod, c.Pod, p.Victims)
		}
	}
}
