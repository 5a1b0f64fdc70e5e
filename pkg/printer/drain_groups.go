package printer

import (
	"fmt"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// drainNodes prints the nodes in drain order. Of nodes certainly drained
// with their pods acted on alike (see drainShape), the first few are
// printed and the rest counted in one line after them, unless wide: a
// drain of hundreds of alike nodes is not hundreds of tables. A node
// blocked, refused or uncertain is always printed.
func drainNodes(pw *paragraphs, nodes []prediction.DrainNode, opt TableOptions) {
	type alike struct {
		first string
		count int
		left  []string // the nodes left out, in drain order
	}
	var shapes []string
	byShape := map[string]*alike{}
	for _, n := range nodes {
		key := drainShape(n)
		if byShape[key] == nil {
			byShape[key] = &alike{first: n.Node}
			shapes = append(shapes, key)
		}
		byShape[key].count++
	}
	printed := map[string]int{}
	for _, n := range nodes {
		key := drainShape(n)
		a := byShape[key]
		// a line for one section saves nothing
		if opt.Wide || n.Outcome != "drained" || !n.Certain || printed[key] < sectionsShown || a.count == sectionsShown+1 {
			printed[key]++
			drainNode(pw, n, opt.width())
			continue
		}
		a.left = append(a.left, n.Node)
	}
	for _, key := range shapes {
		if a := byShape[key]; len(a.left) > 0 {
			pw.blank()
			pw.para(moreLikeThese(len(a.left), fmt.Sprintf(": %s, each DRAINED with its pods acted on as on %s", nodeList(a.left, opt.names()), a.first)), "  ")
		}
	}
}

// drainShape is what an operator reads in a node's section but the
// names: the outcome, its certainty, and each pod's action and grace in
// order (the pods' names and the budgets' counts are left out).
func drainShape(n prediction.DrainNode) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%t|%d", n.Outcome, n.Certain, len(n.Pods))
	for _, p := range n.Pods {
		fmt.Fprintf(&b, "|%s %d", p.Action, p.GracePeriodSeconds)
	}
	return b.String()
}
