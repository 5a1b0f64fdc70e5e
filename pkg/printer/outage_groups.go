package printer

import (
	"fmt"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// alikeRow is one row of an outage table and what makes it alike to
// others: its shape is the row but for its owner's name and counts; ""
// never folds.
type alikeRow struct {
	cells []string
	shape string
	name  string // the owner (or workload) the row stands for
	pods  int
	gist  string // what rows of its shape say, in a few words
}

// foldAlike keeps, of rows of one shape, the first few (sectionsShown)
// and counts the rest in one line each under the table, unless wide: a
// zone's thirty Deployments alike are three rows and a line, not thirty.
// A shape with one row more than that prints whole (a line for one row
// saves nothing).
func foldAlike(rows []alikeRow, what string, opt TableOptions) (kept [][]string, lines []string) {
	count := map[string]int{}
	for _, r := range rows {
		count[r.shape]++
	}
	type left struct {
		first, gist string
		names       []string
		pods        int
	}
	var order []string
	rest, shown := map[string]*left{}, map[string]int{}
	for _, r := range rows {
		if opt.Wide || r.shape == "" || count[r.shape] <= sectionsShown+1 || shown[r.shape] < sectionsShown {
			kept = append(kept, r.cells)
			shown[r.shape]++
			if rest[r.shape] == nil {
				rest[r.shape] = &left{first: r.name, gist: r.gist}
				order = append(order, r.shape)
			}
			continue
		}
		l := rest[r.shape]
		l.names, l.pods = append(l.names, r.name), l.pods+r.pods
	}
	for _, shape := range order {
		if l := rest[shape]; len(l.names) > 0 {
			line := moreLikeThese(len(l.names), fmt.Sprintf(": %s (%s together), each like %s's row", nodeList(l.names, opt.names()),
				plural(l.pods, what), l.first))
			if l.gist != "" {
				line += ": " + l.gist
			}
			lines = append(lines, line)
		}
	}
	return kept, lines
}

// printFolded prints rows alike folded (foldAlike), their legend, then the
// lines that count the rows left out.
func printFolded(pw *paragraphs, header []string, rows []alikeRow, what string, opt TableOptions) {
	kept, lines := foldAlike(rows, what, opt)
	printGrid(pw, grid{header: header, rows: kept}, opt.width())
	for _, l := range lines {
		pw.para("  "+l, "    ")
	}
}

// shapeOf is text with the owner's name taken out: rows and warnings that
// differ only in it are alike.
func shapeOf(owner string, parts ...string) string {
	s := strings.Join(parts, "\x00")
	if owner == "" {
		return s
	}
	return strings.ReplaceAll(s, owner, "\x01")
}

// mergeWarnings merges warnings that differ only in the owner they name
// into one naming the first few owners, unless wide, when more than
// sectionsShown+1 say the same (a zone's "replacements of ..." for each
// Deployment).
func mergeWarnings(warnings []string, o *prediction.Outage, opt TableOptions) []string {
	if opt.Wide {
		return warnings
	}
	owners := outageOwners(o)
	type merged struct {
		text  string
		names []string
	}
	var out []*merged
	byShape := map[string]*merged{}
	for _, w := range warnings {
		name := ownerIn(w, owners)
		if name == "" {
			out = append(out, &merged{text: w})
			continue
		}
		shape := shapeOf(name, w)
		m := byShape[shape]
		if m == nil {
			m = &merged{text: shape}
			byShape[shape] = m
			out = append(out, m)
		}
		m.names = append(m.names, name)
	}
	var lines []string
	for _, m := range out {
		switch {
		case len(m.names) == 0:
			lines = append(lines, m.text)
		case len(m.names) <= sectionsShown+1:
			for _, n := range m.names {
				lines = append(lines, strings.ReplaceAll(m.text, "\x01", n))
			}
		default:
			lines = append(lines, strings.ReplaceAll(m.text, "\x01", nodeList(m.names, opt.names())+" (-o wide for all)"))
		}
	}
	return lines
}

// outageOwners are the owners the outage names: Kind/name as pods and
// replacements give them, "Kind namespace/name" as workloads do.
func outageOwners(o *prediction.Outage) map[string]bool {
	out := map[string]bool{}
	for _, p := range o.Pods {
		if p.Owner != "" {
			out[p.Owner] = true
		}
	}
	for _, r := range o.Replacements {
		if r.Owner != "" {
			out[r.Owner] = true
		}
	}
	for _, w := range o.Workloads {
		out[w.Kind+" "+w.Name] = true
	}
	return out
}

// ownerIn is the longest owner named in w as a whole word, or "".
func ownerIn(w string, owners map[string]bool) string {
	best := ""
	for name := range owners {
		if len(name) > len(best) && wordIn(w, name) {
			best = name
		}
	}
	return best
}

// wordIn: name occurs in s, not followed by a character a name may hold
// (Deployment/app-1 is not in "Deployment/app-10").
func wordIn(s, name string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], name)
		if j < 0 {
			return false
		}
		end := i + j + len(name)
		if end == len(s) || !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz0123456789-.", rune(s[end])) {
			return true
		}
		i = end
	}
}
